package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/wfhost/wfhost/api/wire"
)

// POST .../runs/{id}/replay: the body is a .wasm module, raw or as the "module" part of a
// multipart form, as a deploy's. The run's journal is replayed against it dry (the upgrade
// gate's replay, engine.ReplayRun): the module is not stored and the run does not change, so
// a client can ask whether a fix would replay a run before deploying it.
func (h *Handler) replayRun(w http.ResponseWriter, r *http.Request) error {
	run, err := h.runOf(r)
	if err != nil {
		return err
	}
	wasm, err := h.readModule(w, r)
	if err != nil {
		return err
	}
	rep, err := h.cfg.Service.ReplayRun(r.Context(), tenant(r), run.ID, wasm)
	if err != nil {
		return err
	}
	// The engine's report and the wire's have the same JSON by construction, as the upgrade
	// report's (getUpgrade).
	body, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("replay report: %w", err)
	}
	var out wire.RunReplay
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("replay report: %w", err)
	}
	sum := sha256.Sum256(wasm)
	out.Run, out.Workflow, out.ModuleDigest = run.ID, run.Workflow, hex.EncodeToString(sum[:])
	if out.Logs == nil {
		out.Logs = []wire.ReplayLog{}
	}
	auditNote(r, "digest", out.ModuleDigest)
	writeJSON(w, http.StatusOK, out)
	return nil
}
