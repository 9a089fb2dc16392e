package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// readBody reads a body up to limit; a larger one is a 413.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
}

// decodeJSON reads a JSON object body into v; an empty body leaves v as it is.
func (h *Handler) decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r, h.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid_json", "request body: "+err.Error())
	}
	if dec.More() {
		return badRequest("invalid_json", "request body: more than one JSON value")
	}
	return nil
}

// POST /v1/modules: the body is the .wasm file, raw or as the "module" part of a multipart form.
func (h *Handler) deployModule(w http.ResponseWriter, r *http.Request) error {
	replace, err := boolParam(r, "replace")
	if err != nil {
		return err
	}
	var wasm []byte
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxModuleBytes)
		f, _, err := r.FormFile("module")
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return err
			}
			return badRequest("invalid_request", "multipart upload needs a file part named \"module\"")
		}
		defer f.Close()
		if wasm, err = io.ReadAll(f); err != nil {
			return err
		}
	} else if wasm, err = readBody(w, r, h.cfg.MaxModuleBytes); err != nil {
		return err
	}
	res, err := h.cfg.Engine.Deploy(r.Context(), tenant(r), wasm, replace)
	if err != nil {
		return err
	}
	out := struct {
		moduleView
		Workflows []workflowView `json:"workflows"`
	}{moduleView: viewModule(res.Module)}
	for _, wf := range res.Workflows {
		out.Workflows = append(out.Workflows, workflowView{
			Name: wf.Name, Version: wf.Version, RetentionDays: wf.RetentionDays, Retry: wf.Retry,
			Triggers: wf.Triggers, ModuleDigest: wf.Digest,
		})
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func viewModule(m store.Module) moduleView {
	return moduleView{Digest: m.Digest, Size: m.Size, ABIVersion: m.ABIVersion, CreatedAt: m.CreatedAt}
}

func (h *Handler) listModules(w http.ResponseWriter, r *http.Request) error {
	mods, err := h.cfg.Engine.ListModules(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	out := make([]moduleView, 0, len(mods))
	for _, m := range mods {
		out = append(out, viewModule(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"modules": out})
	return nil
}

func (h *Handler) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	wfs, err := h.cfg.Engine.ListWorkflows(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	type view struct {
		Name          string         `json:"name"`
		LatestVersion string         `json:"latestVersion"`
		Versions      []string       `json:"versions"`
		RunCounts     map[string]int `json:"runCounts"`
	}
	out := make([]view, 0, len(wfs))
	for _, wf := range wfs {
		counts := make(map[string]int, len(wf.RunCounts))
		for s, n := range wf.RunCounts {
			counts[string(s)] = n
		}
		out = append(out, view{Name: wf.Name, LatestVersion: wf.LatestVersion, Versions: wf.Versions, RunCounts: counts})
	}
	writeJSON(w, http.StatusOK, map[string]any{"workflows": out})
	return nil
}

type startBody struct {
	Input          json.RawMessage `json:"input"`
	Version        string          `json:"version"`
	IdempotencyKey string          `json:"idempotencyKey"`
	RetentionDays  int             `json:"retentionDays"`
}

func (h *Handler) startRun(w http.ResponseWriter, r *http.Request) error {
	var body startBody
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	run, created, err := h.cfg.Engine.StartRun(r.Context(), tenant(r), engine.StartRequest{
		Workflow: r.PathValue("name"), Version: body.Version, Input: body.Input,
		IdempotencyKey: body.IdempotencyKey, RetentionDays: body.RetentionDays,
	})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	writeJSON(w, status, viewRun(run))
	return nil
}

func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := 0
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 500 {
			return badRequest("invalid_request", "limit must be a number from 1 to 500")
		}
		limit = n
	}
	status := store.RunStatus(q.Get("status"))
	switch status {
	case "", store.StatusPending, store.StatusRunning, store.StatusCompleted, store.StatusFailed, store.StatusCancelled, store.StatusNondeterministic:
	default:
		return badRequest("invalid_request", fmt.Sprintf("unknown status %q", status))
	}
	runs, next, err := h.cfg.Engine.ListRuns(r.Context(), tenant(r), store.RunFilter{
		Workflow: r.PathValue("name"), Status: status, Limit: limit, Cursor: q.Get("cursor"),
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && q.Get("cursor") != "" {
			return badRequest("invalid_request", "malformed cursor")
		}
		return err
	}
	out := make([]runView, 0, len(runs))
	for _, run := range runs {
		out = append(out, viewRun(run))
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out, "nextCursor": next})
	return nil
}

// runOf returns the run named by the path, and not found when it belongs to another workflow:
// the path is an address, and a run is only at its own.
func (h *Handler) runOf(r *http.Request) (store.Run, error) {
	run, err := h.cfg.Engine.GetRun(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return store.Run{}, err
	}
	if run.Workflow != r.PathValue("name") {
		return store.Run{}, fmt.Errorf("run %s of workflow %s: %w", r.PathValue("id"), r.PathValue("name"), store.ErrNotFound)
	}
	return run, nil
}

func (h *Handler) getRun(w http.ResponseWriter, r *http.Request) error {
	run, err := h.runOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewRun(run))
	return nil
}

func (h *Handler) cancelRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	run, err := h.cfg.Engine.CancelRun(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewRun(run))
	return nil
}

func (h *Handler) steps(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	steps, err := h.cfg.Engine.Steps(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]stepView, 0, len(steps))
	for _, s := range steps {
		out = append(out, viewStep(s))
	}
	writeJSON(w, http.StatusOK, map[string]any{"steps": out})
	return nil
}

// payload reads an event body: any JSON value, {} when empty.
func (h *Handler) payload(w http.ResponseWriter, r *http.Request) (json.RawMessage, error) {
	body, err := readBody(w, r, h.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid(body) {
		return nil, badRequest("invalid_json", "the event payload is not valid JSON")
	}
	return body, nil
}

func (h *Handler) signal(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	p, err := h.payload(w, r)
	if err != nil {
		return err
	}
	delivered, err := h.cfg.Engine.Signal(r.Context(), tenant(r), r.PathValue("id"), r.PathValue("event"), p)
	if err != nil {
		return err
	}
	state := "buffered"
	if delivered {
		state = "delivered"
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"event": r.PathValue("event"), "state": state})
	return nil
}

func (h *Handler) broadcast(w http.ResponseWriter, r *http.Request) error {
	p, err := h.payload(w, r)
	if err != nil {
		return err
	}
	n, err := h.cfg.Engine.Broadcast(r.Context(), tenant(r), r.PathValue("event"), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"event": r.PathValue("event"), "resolved": n})
	return nil
}

func boolParam(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequest("invalid_request", fmt.Sprintf("%s must be true or false", name))
	}
	return v, nil
}
