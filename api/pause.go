package api

import (
	"net/http"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/store"
)

// Pause and resume (engine/pause.go): a run, or a workflow or one of its versions.

// POST .../runs/{id}/pause: 200 with the run paused, or 202 with it still running, asked to
// pause at its next durable call.
func (h *Handler) pauseRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	run, err := h.cfg.Service.PauseRun(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if run.Status != store.StatusPaused {
		status = http.StatusAccepted
	}
	writeJSON(w, status, viewRun(run))
	return nil
}

// POST .../runs/{id}/resume, with an optional body {"version"}: 200 with the run resumed; 409
// resume_refused, with the replay's finding, when the version's code parts from its journal.
func (h *Handler) resumeRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	var body wire.ResumeRun
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	run, err := h.cfg.Service.ResumeRun(r.Context(), tenant(r), r.PathValue("id"), body.Version)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewRun(run))
	return nil
}

// POST /v1/workflows/{name}/pause[?version=]: the workflow, or one version, pauses.
func (h *Handler) pauseWorkflow(w http.ResponseWriter, r *http.Request) error {
	name, version := r.PathValue("name"), r.URL.Query().Get("version")
	n, err := h.cfg.Service.PauseWorkflow(r.Context(), tenant(r), name, version)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.WorkflowPaused{Workflow: name, Version: version, Paused: true, Runs: n})
	return nil
}

// POST /v1/workflows/{name}/resume[?version=]: the pause is lifted and the runs it held go on.
func (h *Handler) resumeWorkflow(w http.ResponseWriter, r *http.Request) error {
	name, version := r.PathValue("name"), r.URL.Query().Get("version")
	n, err := h.cfg.Service.ResumeWorkflow(r.Context(), tenant(r), name, version)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.WorkflowPaused{Workflow: name, Version: version, Runs: n})
	return nil
}
