package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

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

// GET /v1/workflows/{name}/runs and GET /v1/runs: newest first, filtered by status, creation
// time (since inclusive, until exclusive, RFC 3339) and input.<path>=<value> (a JSON superset
// match on the input: input.customer.id=42 matches inputs containing {"customer":{"id":42}}).
func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.RunFilter{Workflow: r.PathValue("name"), Status: store.RunStatus(q.Get("status")), Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 500 {
			return badRequest("invalid_request", "limit must be a number from 1 to 500")
		}
		f.Limit = n
	}
	switch f.Status {
	case "", store.StatusPending, store.StatusRunning, store.StatusCompleted, store.StatusFailed, store.StatusCancelled, store.StatusNondeterministic:
	default:
		return badRequest("invalid_request", fmt.Sprintf("unknown status %q", f.Status))
	}
	for name, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if s := q.Get(name); s != "" {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return badRequest("invalid_request", fmt.Sprintf("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z", name))
			}
			*dst = t
		}
	}
	input, err := inputFilter(q)
	if err != nil {
		return err
	}
	f.Input = input
	runs, next, err := h.cfg.Engine.ListRuns(r.Context(), tenant(r), f)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && f.Cursor != "" {
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

// maxInputFilters bounds the input.* parameters of one listing.
const maxInputFilters = 16

// inputFilter builds the JSON object that input.<path>=<value> parameters describe. A value
// that parses as JSON (42, true, null, "42", {"a":1}) is taken as that JSON; any other value
// is a string, so input.email=a@example.com needs no quotes.
func inputFilter(q url.Values) (json.RawMessage, error) {
	filter := map[string]any{}
	n := 0
	for param, values := range q {
		path, ok := strings.CutPrefix(param, "input.")
		if !ok {
			continue
		}
		if n++; n > maxInputFilters {
			return nil, badRequest("invalid_request", fmt.Sprintf("at most %d input.* filters", maxInputFilters))
		}
		keys := strings.Split(path, ".")
		if len(keys) > 8 || slices.Contains(keys, "") {
			return nil, badRequest("invalid_request", fmt.Sprintf("filter %q: the path after input. must be 1 to 8 non-empty keys", param))
		}
		var value any
		raw := values[len(values)-1]
		if err := json.Unmarshal([]byte(raw), &value); err != nil {
			value = raw
		}
		node := filter
		for _, k := range keys[:len(keys)-1] {
			child, ok := node[k].(map[string]any)
			if !ok {
				child = map[string]any{}
				node[k] = child
			}
			node = child
		}
		node[keys[len(keys)-1]] = value
	}
	if len(filter) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(filter)
	return b, err
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

// GET .../steps: the journal, each step with the outbound requests it made.
func (h *Handler) steps(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	steps, err := h.cfg.Engine.Steps(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	outbound, err := h.cfg.Engine.Outbound(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	byStep := map[string][]outboundView{}
	for _, o := range outbound {
		byStep[o.Step] = append(byStep[o.Step], viewOutbound(o))
	}
	out := make([]stepView, 0, len(steps))
	for _, s := range steps {
		v := viewStep(s)
		v.Outbound = byStep[s.Key]
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"steps": out})
	return nil
}

// GET .../outbound: the run's whole audit trail, by run rather than by step, so it includes
// requests made outside any step and by steps that never reached the journal (one that
// trapped or ran out of time after its request).
func (h *Handler) outbound(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	outbound, err := h.cfg.Engine.Outbound(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]outboundView, 0, len(outbound))
	for _, o := range outbound {
		out = append(out, viewOutbound(o))
	}
	writeJSON(w, http.StatusOK, map[string]any{"outbound": out})
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

// POST /v1/events/{event}: the body is the payload. An event id, from the Idempotency-Key
// header or the eventId parameter, makes a retried request change nothing.
func (h *Handler) broadcast(w http.ResponseWriter, r *http.Request) error {
	p, err := h.payload(w, r)
	if err != nil {
		return err
	}
	id := cmp.Or(r.Header.Get("Idempotency-Key"), r.URL.Query().Get("eventId"))
	res, err := h.cfg.Engine.Broadcast(r.Context(), tenant(r), engine.BroadcastRequest{Event: r.PathValue("event"), Payload: p, EventID: id})
	if err != nil {
		return err
	}
	started := make([]runView, 0, len(res.Started))
	for _, run := range res.Started {
		started = append(started, viewRun(run))
	}
	status := http.StatusAccepted
	if res.Duplicate {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"event": r.PathValue("event"), "eventId": id, "resolved": res.Resolved,
		"started": started, "duplicate": res.Duplicate})
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
