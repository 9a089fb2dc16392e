package api

import (
	"bytes"
	"cmp"
	"context"
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

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// readBody reads a body up to limit; a larger one is a 413, and one that cannot be read (a
// broken chunked encoding, a body shorter than its Content-Length) a 400.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if err != nil && !errors.As(err, &tooBig) {
		return nil, badRequest("invalid_request", "the request body could not be read: "+err.Error())
	}
	return body, err
}

// POST /v1/modules: the body is the .wasm file, raw or as the "module" part of a multipart form.
func (h *Handler) deployModule(w http.ResponseWriter, r *http.Request) error {
	replace, err := boolParam(r, "replace")
	if err != nil {
		return err
	}
	policy, err := upgradeParam(r)
	if err != nil {
		return err
	}
	wasm, err := h.readModule(w, r)
	if err != nil {
		return err
	}
	res, err := h.cfg.Service.DeployWith(r.Context(), tenant(r), wasm, engine.DeployOptions{Replace: replace, Upgrade: policy})
	if err != nil {
		return err
	}
	// Workflows is an array even when the deploy bound none (an upgrade check): never null.
	out := wire.Deployed{Module: viewModule(res.Module), Upgrade: viewUpgradeSummary(res.Upgrade), Workflows: []wire.Workflow{}}
	var names []string
	for _, wf := range res.Workflows {
		out.Workflows = append(out.Workflows, viewWorkflow(wf))
		names = append(names, wf.Name+"@"+wf.Version)
	}
	auditNote(r, "digest", res.Module.Digest)
	auditNote(r, "workflows", strings.Join(names, ","))
	auditNote(r, "replace", strconv.FormatBool(replace))
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// readModule reads the .wasm module a request carries, raw or as the "module" part of a
// multipart form (a browser's upload), up to the daemon's MaxModuleBytes (the engine applies
// the tenant's limit after). An empty body is a 400.
func (h *Handler) readModule(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var wasm []byte
	var err error
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxModuleBytes)
		f, _, err := r.FormFile("module")
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, err
			}
			return nil, badRequest("invalid_request", "multipart upload needs a file part named \"module\"")
		}
		defer f.Close()
		if wasm, err = io.ReadAll(f); err != nil {
			return nil, err
		}
	} else if wasm, err = readBody(w, r, h.cfg.MaxModuleBytes); err != nil {
		return nil, err
	}
	if len(wasm) == 0 {
		return nil, errBodyRequired("the .wasm module, as the raw body or the \"module\" part of a multipart form")
	}
	return wasm, nil
}

func (h *Handler) listModules(w http.ResponseWriter, r *http.Request) error {
	mods, err := h.cfg.Store.ListModules(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	out := wire.ModulePage{Modules: make([]wire.Module, 0, len(mods))}
	for _, m := range mods {
		out.Modules = append(out.Modules, viewModule(m))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	wfs, err := h.cfg.Store.ListWorkflows(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	pauses, err := h.cfg.Service.WorkflowPauses(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	out := wire.WorkflowPage{Workflows: make([]wire.WorkflowSummary, 0, len(wfs))}
	for _, wf := range wfs {
		out.Workflows = append(out.Workflows, viewWorkflowSummary(wf, pauses))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// With wait=N it is a start and an await in one request (a client that starts a run for its
// result): the answer comes when the run has ended, or after N seconds with the run as it then
// stands, as GET .../runs/{id}?wait=N answers. The status is the start's. The engine puts the
// waiter in place before the run can start (engine.Service.StartAndWait), so a run that ends
// at once is answered from what this host recorded, with no read of the store.
func (h *Handler) startRun(w http.ResponseWriter, r *http.Request) error {
	wait, err := waitParam(r)
	if err != nil {
		return err
	}
	var body wire.StartRun
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	req := engine.StartRequest{
		Workflow: r.PathValue("name"), Version: body.Version, Input: body.Input,
		IdempotencyKey: body.IdempotencyKey, RetentionDays: body.RetentionDays, TimeoutMs: body.TimeoutMs, Retry: body.Retry,
		Priority: body.Priority, TokenID: tokenID(r),
	}
	var run store.Run
	var created bool
	if wait > 0 {
		run, created, err = h.cfg.Service.StartAndWait(r.Context(), tenant(r), req, wait)
	} else {
		run, created, err = h.cfg.Service.StartRun(r.Context(), tenant(r), req)
	}
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

// GET /v1/workflows/{name}/runs and GET /v1/runs: newest first, filtered by status, version,
// idempotency key, creation time (since inclusive, until exclusive, RFC 3339) and
// input[<key>][<key>]=<value> or input.<key>.<key>=<value> (a JSON superset match on the input:
// input[customer][id]=42 matches inputs containing {"customer":{"id":42}}; inputFilter). The route admits each parameter once (checkQuery); the
// engine checks the filter's values.
func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) error {
	f, err := runFilter(r)
	if err != nil {
		return err
	}
	runs, next, err := h.cfg.Service.ListRuns(r.Context(), tenant(r), f)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) && f.Cursor != "" {
			return badRequest("invalid_request", "cursor is malformed: pass the nextCursor of the previous page")
		}
		return err
	}
	views := viewRuns(runs)
	if f.Parent != "" {
		// Every run listed is the parent's child: its link is one read away, for all of them.
		kids, err := h.cfg.Store.ChildrenOf(r.Context(), tenant(r), f.Parent)
		if err != nil {
			return err
		}
		links := map[string]store.ChildLink{}
		for _, k := range kids {
			links[k.RunID] = k.Link
		}
		for i := range views {
			viewParent(&views[i], links[views[i].ID])
		}
	}
	writeJSON(w, http.StatusOK, wire.RunPage{Runs: views, NextCursor: next})
	return nil
}

// Bounds on a listing's input filter parameters.
const (
	maxInputFilters    = 16
	maxInputFilterKeys = 8
	// maxInputFilterBytes bounds the filter the parameters build, as JSON: far past any
	// filter a person or a console writes, and short of making every listing a scan of a
	// megabyte-long containment test.
	maxInputFilterBytes = 16 << 10
)

// inputFilterParam is one input filter parameter: its name as sent and the keys of its path.
type inputFilterParam struct {
	name string
	keys []string
}

// inputFilter builds the JSON object that the input filter parameters describe, each in
// either of two forms: dotted, input.<key>.<key>=<value>, or OpenAPI's deepObject,
// input[<key>][<key>]=<value> (which is how the document describes the parameter, and what
// generated clients send). A value that parses as JSON (42, true, null, "42", {"a":1}) is
// taken as that JSON, read as strictly as a body; any other value is a string, so
// input.email=a@example.com needs no quotes. Each parameter is named in what it is refused
// for: a name of neither form (input[a, input[], input.a[b]), a key or a value no store keeps,
// a path too long, too many filters or too large a one, or two parameters that set the same
// place (input.a=1&input.a.b=2, or input.a=1&input[a]=2). A malformed filter is never
// dropped: that would list every run as if it matched.
func inputFilter(q url.Values) (json.RawMessage, error) {
	var params []inputFilterParam
	for name := range q {
		if !isInputFilter(name) {
			continue
		}
		if err := abi.CheckText("filter", name, 0); err != nil {
			return nil, badRequest("invalid_request", fmt.Sprintf("filter %q: %v", name, err))
		}
		keys, err := inputFilterKeys(name)
		if err != nil {
			return nil, err
		}
		params = append(params, inputFilterParam{name: name, keys: keys})
	}
	if len(params) == 0 {
		return nil, nil
	}
	if len(params) > maxInputFilters {
		return nil, badRequest("invalid_request", fmt.Sprintf("input.* and input[*] filters: %d of them; at most %d", len(params), maxInputFilters))
	}
	// Sorted by path, a parameter comes before every one whose path it is a prefix of, so a
	// path that runs through a value another parameter set is seen at its first key past that
	// value, whichever form either was given in.
	slices.SortFunc(params, func(a, b inputFilterParam) int {
		return cmp.Or(slices.Compare(a.keys, b.keys), strings.Compare(a.name, b.name))
	})
	filter := map[string]any{}
	setBy := map[string]string{} // a path prefix (its keys as JSON), and the parameter that set a value there
	for _, param := range params {
		value, err := filterValue(param.name, q.Get(param.name))
		if err != nil {
			return nil, err
		}
		node := filter
		for i, k := range param.keys {
			prefix, _ := json.Marshal(param.keys[:i+1])
			if other, taken := setBy[string(prefix)]; taken {
				return nil, badRequest("invalid_request", fmt.Sprintf("filters %s and %s both set input.%s", other, param.name, strings.Join(param.keys[:i+1], ".")))
			}
			if i == len(param.keys)-1 {
				node[k] = value
				setBy[string(prefix)] = param.name
				break
			}
			child, ok := node[k].(map[string]any)
			if !ok {
				child = map[string]any{}
				node[k] = child
			}
			node = child
		}
	}
	out, err := json.Marshal(filter)
	if err != nil {
		return nil, err
	}
	if len(out) > maxInputFilterBytes {
		return nil, badRequest("invalid_request", fmt.Sprintf("input.* and input[*] filters: %d bytes as JSON; at most %d", len(out), maxInputFilterBytes))
	}
	return out, nil
}

// isInputFilter reports whether a query parameter is an input filter, in either form; whether
// it is a well-formed one is inputFilterKeys's to say.
func isInputFilter(name string) bool {
	return strings.HasPrefix(name, "input.") || strings.HasPrefix(name, "input[")
}

// inputFilterKeys is the path of an input filter parameter: input.a.b or input[a][b] is
// [a b]. Keys are non-empty, 1 to maxInputFilterKeys of them, and hold no [ or ] (so that
// input.a[b], a mix of the two forms, is refused rather than read as the key "a[b]").
func inputFilterKeys(name string) ([]string, error) {
	malformed := func(why string) error {
		return badRequest("invalid_request", fmt.Sprintf("filter %s: %s; write input.<key>.<key> or input[<key>][<key>], 1 to %d non-empty keys without [ or ]",
			abbreviate(name, 200), why, maxInputFilterKeys))
	}
	var keys []string
	if rest, ok := strings.CutPrefix(name, "input."); ok {
		keys = strings.Split(rest, ".")
		if slices.ContainsFunc(keys, func(k string) bool { return strings.ContainsAny(k, "[]") }) {
			return nil, malformed("a key holds [ or ]")
		}
	} else {
		rest := strings.TrimPrefix(name, "input")
		for rest != "" {
			inner, ok := strings.CutPrefix(rest, "[")
			if !ok {
				return nil, malformed("a key does not start with [")
			}
			end := strings.IndexAny(inner, "[]")
			if end < 0 || inner[end] != ']' {
				return nil, malformed("a [ is not closed by ]")
			}
			keys = append(keys, inner[:end])
			rest = inner[end+1:]
		}
	}
	if slices.Contains(keys, "") {
		return nil, malformed("a key is empty")
	}
	if len(keys) > maxInputFilterKeys {
		return nil, malformed(fmt.Sprintf("%d keys", len(keys)))
	}
	return keys, nil
}

// filterValue is the JSON value of an input filter parameter.
func filterValue(param, raw string) (json.RawMessage, error) {
	if json.Valid([]byte(raw)) {
		if err := checkStrict([]byte(raw), param, nil); err != nil {
			return nil, err
		}
		return json.RawMessage(raw), nil
	}
	if err := abi.CheckText(param, raw, 0); err != nil {
		return nil, badRequest("invalid_request", fmt.Sprintf("filter %s: %v", param, err))
	}
	return json.Marshal(raw)
}

// runOf returns the run named by the path, and not found when it belongs to another workflow:
// the path is an address, and a run is only at its own.
func (h *Handler) runOf(r *http.Request) (store.Run, error) {
	run, err := h.cfg.Store.GetRun(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return store.Run{}, err
	}
	if run.Workflow != r.PathValue("name") {
		return store.Run{}, fmt.Errorf("run %s of workflow %s: %w", r.PathValue("id"), r.PathValue("name"), store.ErrNotFound)
	}
	return run, nil
}

// MaxRunWait bounds a long poll of a run (GET .../runs/{id}?wait=N seconds).
const MaxRunWait = 60 * time.Second

// GET .../runs/{id}, and with wait=N a long poll: the answer comes when the run has ended (or
// is nondeterministic), or after N seconds with the run as it then stands, so a client awaits
// a run with one request where it polled.
func (h *Handler) getRun(w http.ResponseWriter, r *http.Request) error {
	run, err := h.runOf(r)
	if err != nil {
		return err
	}
	wait, err := waitParam(r)
	if err != nil {
		return err
	}
	if run, err = h.awaitRun(r, run, wait); err != nil {
		return err
	}
	v := viewRun(run)
	if err := h.lease(r, &v); err != nil {
		return err
	}
	if err := h.flow(r, run, &v); err != nil {
		return err
	}
	if !run.Status.Terminal() {
		// A module this host cannot load (swept, invalid) declares nothing it could use.
		if feats, err := h.cfg.Service.ModuleFeatures(r.Context(), tenant(r), run.Digest); err == nil {
			v.Features = feats
		} else if r.Context().Err() != nil {
			return r.Context().Err()
		}
	}
	trig, err := h.cfg.Store.RunTrigger(r.Context(), tenant(r), run.ID)
	if err != nil {
		return err
	}
	v.TriggeredBy = viewTrigger(trig)
	link, isChild, err := h.cfg.Store.ParentOf(r.Context(), tenant(r), run.ID)
	if err != nil {
		return err
	}
	if isChild {
		viewParent(&v, link)
		// The parent may have been swept before its child: the link stays, the workflow is
		// then unknown.
		if p, err := h.cfg.Store.GetRun(r.Context(), tenant(r), link.ParentRunID); err == nil {
			v.ParentWorkflow = p.Workflow
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// awaitRun is run once it has ended (or is nondeterministic), or as it stands after wait;
// run itself when wait is 0.
func (h *Handler) awaitRun(r *http.Request, run store.Run, wait time.Duration) (store.Run, error) {
	if wait <= 0 || run.Status.Terminal() || run.Status == store.StatusNondeterministic || run.Status == store.StatusPaused {
		return run, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	ended, err := h.cfg.Service.AwaitRun(ctx, tenant(r), run.ID)
	switch {
	case err == nil:
		return ended, nil
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		return h.cfg.Store.GetRun(r.Context(), tenant(r), run.ID)
	}
	return store.Run{}, err
}

// waitParam is a long poll's wait: the wait parameter, whole seconds from 0 to MaxRunWait.
func waitParam(r *http.Request) (time.Duration, error) {
	q := r.URL.Query()
	if !q.Has("wait") {
		return 0, nil
	}
	n, err := strconv.Atoi(q.Get("wait"))
	if err != nil || n < 0 || time.Duration(n)*time.Second > MaxRunWait {
		return 0, badRequest("invalid_request", fmt.Sprintf("wait must be whole seconds from 0 to %d, not %q", int(MaxRunWait.Seconds()), q.Get("wait")))
	}
	return time.Duration(n) * time.Second, nil
}

// POST .../runs/{id}/cancel[?graceMs=N]: the workflow is told at its next durable call and may
// compensate for up to graceMs (default engine.DefaultCancelGrace), then it is terminated; a
// run whose module does not handle a cancel is terminated now. 202: the run answered is as it
// stands, live, with cancelRequestedAt set, or terminated.
func (h *Handler) cancelRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	var grace time.Duration
	if q := r.URL.Query(); q.Has("graceMs") {
		ms, err := strconv.ParseInt(q.Get("graceMs"), 10, 64)
		if err != nil || ms < 1 || ms > engine.MaxCancelGrace.Milliseconds() {
			return badRequest("invalid_request", fmt.Sprintf("graceMs must be whole milliseconds from 1 to %d, not %q", engine.MaxCancelGrace.Milliseconds(), q.Get("graceMs")))
		}
		grace = time.Duration(ms) * time.Millisecond
	}
	run, err := h.cfg.Service.CancelRun(r.Context(), tenant(r), r.PathValue("id"), grace)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if run.Status.Terminal() {
		status = http.StatusOK
	}
	writeJSON(w, status, viewRun(run))
	return nil
}

// POST .../runs/{id}/restart: a new run restarts the ended one, from scratch or from a step
// (engine.RestartRequest); 201 with the new run.
func (h *Handler) restartRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	var body wire.RestartRun
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	run, err := h.cfg.Service.RestartRun(r.Context(), tenant(r), engine.RestartRequest{
		RunID: r.PathValue("id"), Input: body.Input, FromStep: body.FromStep, Version: body.Version, TimeoutMs: body.TimeoutMs,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewRun(run))
	return nil
}

// POST .../runs/{id}/fork: a new run forks the run, live or ended, from its journal so far
// or cut before a step, on its version or another (engine.ForkRun); 201 with the new run.
func (h *Handler) forkRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	var body wire.ForkRun
	if err := h.decodeJSON(w, r, &body); err != nil {
		return err
	}
	run, err := h.cfg.Service.ForkRun(r.Context(), tenant(r), engine.RestartRequest{
		RunID: r.PathValue("id"), Input: body.Input, FromStep: body.FromStep, Version: body.Version, TimeoutMs: body.TimeoutMs,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewRun(run))
	return nil
}

// DELETE .../runs/{id} and POST .../runs/{id}/terminate: the run stops now, whatever it is
// doing; no code of it runs again.
func (h *Handler) terminateRun(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	run, err := h.cfg.Service.TerminateRun(r.Context(), tenant(r), r.PathValue("id"))
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
	steps, next, err := h.readSteps(r)
	if err != nil {
		return err
	}
	outbound, err := h.cfg.Store.ListOutbound(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	byStep := map[string][]wire.OutboundRecord{}
	for _, o := range outbound {
		byStep[o.Step] = append(byStep[o.Step], viewOutbound(o))
	}
	out := wire.StepPage{Steps: make([]wire.Step, 0, len(steps)), NextCursor: next}
	for _, s := range steps {
		v := viewStep(s)
		v.Outbound = byStep[s.Key]
		out.Steps = append(out.Steps, v)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// GET .../outbound: the run's whole audit trail, by run rather than by step, so it includes
// requests made outside any step and by steps that never reached the journal (one that
// trapped or ran out of time after its request).
func (h *Handler) outbound(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	outbound, err := h.cfg.Store.ListOutbound(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	out := wire.OutboundPage{Outbound: make([]wire.OutboundRecord, 0, len(outbound))}
	for _, o := range outbound {
		out.Outbound = append(out.Outbound, viewOutbound(o))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// payload reads an event body: any JSON value, read strictly; {} when there is none.
func (h *Handler) payload(w http.ResponseWriter, r *http.Request) (json.RawMessage, error) {
	body, err := h.jsonBody(w, r)
	if err != nil {
		return nil, err
	}
	if body == nil {
		return json.RawMessage("{}"), nil
	}
	if err := checkStrict(body, "payload", nil); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(body), nil
}

// POST .../runs/{id}/signals/{event}: the body is the payload. A signal id, from the
// Idempotency-Key header or the signalId parameter, makes a retried request change nothing.
func (h *Handler) signal(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	p, err := h.payload(w, r)
	if err != nil {
		return err
	}
	id, err := idempotencyID(r, "signalId")
	if err != nil {
		return err
	}
	res, err := h.cfg.Service.Signal(r.Context(), tenant(r), engine.SignalRequest{RunID: r.PathValue("id"), Event: r.PathValue("event"), Payload: p, SignalID: id})
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if res.Duplicate {
		status = http.StatusOK
	}
	writeJSON(w, status, viewSignal(r.PathValue("event"), id, res))
	return nil
}

// POST /v1/workflows/{name}/signal-with-start: the event goes to the run the idempotency key
// names, started first if there is none or it has ended.
func (h *Handler) signalWithStart(w http.ResponseWriter, r *http.Request) error {
	var body wire.SignalWithStart
	if err := h.decodeRequiredJSON(w, r, &body); err != nil {
		return err
	}
	res, err := h.cfg.Service.SignalWithStart(r.Context(), tenant(r), engine.SignalWithStartRequest{
		Start: engine.StartRequest{Workflow: r.PathValue("name"), Version: body.Version, Input: body.Input,
			IdempotencyKey: body.IdempotencyKey, RetentionDays: body.RetentionDays, TimeoutMs: body.TimeoutMs, Retry: body.Retry},
		Event: body.Event, Payload: body.Payload, SignalID: body.SignalID,
	})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, wire.SignalWithStartResult{Run: viewRun(res.Run), Created: res.Created,
		Signal: viewSignal(body.Event, body.SignalID, res.Signal)})
	return nil
}

// POST /v1/events/{event}: the body is the payload. An event id, from the Idempotency-Key
// header or the eventId parameter, makes a retried request change nothing.
func (h *Handler) broadcast(w http.ResponseWriter, r *http.Request) error {
	p, err := h.payload(w, r)
	if err != nil {
		return err
	}
	id, err := idempotencyID(r, "eventId")
	if err != nil {
		return err
	}
	res, err := h.cfg.Service.Broadcast(r.Context(), tenant(r), engine.BroadcastRequest{Event: r.PathValue("event"), Payload: p, EventID: id})
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if res.Duplicate {
		status = http.StatusOK
	}
	writeJSON(w, status, wire.BroadcastResult{Event: r.PathValue("event"), EventID: id, Resolved: res.Resolved,
		Started: viewRuns(res.Started), Duplicate: res.Duplicate})
	return nil
}

// idempotencyID is a broadcast's event id or a signal's id: the parameter named param or the
// Idempotency-Key header (once, and the same if both are given), "" for none.
func idempotencyID(r *http.Request, param string) (string, error) {
	q := r.URL.Query()
	id := q.Get(param)
	if q.Has(param) && id == "" {
		return "", badRequest("invalid_request", param+" is empty: leave it out for an event without one")
	}
	keys := r.Header.Values("Idempotency-Key")
	switch {
	case len(keys) == 0:
		return id, nil
	case len(keys) > 1:
		return "", badRequest("invalid_request", fmt.Sprintf("the Idempotency-Key header is given %d times", len(keys)))
	case keys[0] == "":
		return "", badRequest("invalid_request", "the Idempotency-Key header is empty")
	case q.Has(param) && keys[0] != id:
		return "", badRequest("invalid_request", "the Idempotency-Key header and "+param+" differ: send one of them")
	}
	if err := abi.CheckText("the Idempotency-Key header", keys[0], engine.MaxEventIDBytes); err != nil {
		return "", badRequest("invalid_request", err.Error())
	}
	return keys[0], nil
}

func boolParam(r *http.Request, name string) (bool, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return false, nil
	}
	s := q.Get(name)
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequest("invalid_request", fmt.Sprintf("%s must be true or false, not %q", name, s))
	}
	return v, nil
}
