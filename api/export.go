package api

import (
	"net/http"

	"github.com/wfhost/wfhost/api/wire"
)

// GET .../runs/{id}/export: the run and its whole journal as one document, for a dry replay
// elsewhere (wfhost replay). The journal is the steps route's, without the outbound audit: a
// replay needs what each step returned, not what it did to get it.
func (h *Handler) exportRun(w http.ResponseWriter, r *http.Request) error {
	run, err := h.runOf(r)
	if err != nil {
		return err
	}
	steps, err := h.cfg.Store.ListSteps(r.Context(), tenant(r), run.ID)
	if err != nil {
		return err
	}
	out := wire.RunExport{Format: wire.ExportFormat, Run: viewRun(run), Journal: make([]wire.Step, 0, len(steps))}
	for _, s := range steps {
		out.Journal = append(out.Journal, viewStep(s))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
