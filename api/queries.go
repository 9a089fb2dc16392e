package api

import (
	"bytes"
	"net/http"

	"github.com/wfhost/wfhost/api/wire"
)

// POST .../runs/{id}/query/{query}: the body, optional, is the query's argument (any JSON
// value). The workflow's handler answers from the run as it stands; nothing of the run
// changes (engine.QueryRun).
func (h *Handler) queryRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	body, err := h.jsonBody(w, r)
	if err != nil {
		return err
	}
	if body != nil {
		if err := checkStrict(body, "arg", nil); err != nil {
			return err
		}
		body = bytes.TrimSpace(body)
	}
	ans, err := h.cfg.Service.QueryRun(r.Context(), tenant(r), r.PathValue("id"), r.PathValue("query"), body)
	if err != nil {
		return err
	}
	stop := ans.At
	writeJSON(w, http.StatusOK, wire.QueryAnswer{Result: ans.Result, At: wire.ReplayStop{
		Seq: stop.Seq, New: stop.New, At: wire.ReplayStep{Key: stop.At.Key, Kind: string(stop.At.Kind), Event: stop.At.Event},
	}})
	return nil
}
