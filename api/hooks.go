package api

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// Completion hooks belong to the tenant whose token set them; the engine checks what a hook
// says (engine/service_hooks.go, abi.Hook), and here the id in the path is checked first, so
// a malformed one is a 400 that reaches no store. Module hooks (a description's onEnd) are
// listed beside the tenant's but only a deploy changes them.

// PUT /v1/hooks/{id}
func (h *Handler) putHook(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := engine.CheckHookID(id); err != nil {
		return badRequest("invalid_request", err.Error())
	}
	var body wire.PutHook
	if err := h.decodeRequiredJSON(w, r, &body); err != nil {
		return err
	}
	req := engine.HookRequest{ID: id, Workflow: body.Workflow, Hook: abi.Hook{When: body.When, Webhook: body.Webhook}}
	if body.Start != nil {
		req.Hook.Start = &abi.HookStart{Workflow: body.Start.Workflow, Version: body.Start.Version}
	}
	hook, created, secret, err := h.cfg.Service.PutHook(r.Context(), tenant(r), req)
	if err != nil {
		return err
	}
	out := viewHook(hook)
	out.SigningSecret = string(secret)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, out)
	return nil
}

// GET /v1/hooks
func (h *Handler) listHooks(w http.ResponseWriter, r *http.Request) error {
	list, err := h.cfg.Store.ListHooks(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	out := wire.HookPage{Hooks: make([]wire.Hook, 0, len(list))}
	for _, hk := range list {
		out.Hooks = append(out.Hooks, viewHook(hk))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// DELETE /v1/hooks/{id}
func (h *Handler) deleteHook(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := engine.CheckHookID(id); err != nil {
		return badRequest("invalid_request", err.Error())
	}
	if err := h.cfg.Service.DeleteHook(r.Context(), tenant(r), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.HookDeleted{ID: id, Deleted: true})
	return nil
}

// POST /v1/hooks/signing-secret
func (h *Handler) rotateHookSecret(w http.ResponseWriter, r *http.Request) error {
	secret, err := h.cfg.Service.RotateHookSecret(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.SigningSecret{SigningSecret: string(secret)})
	return nil
}

// GET /v1/hooks/deliveries?runId=&startedRunId=&status=&limit=
func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.DeliveryFilter{RunID: q.Get("runId"), StartedRunID: q.Get("startedRunId"), Status: q.Get("status")}
	for _, p := range []struct{ name, v string }{{"runId", f.RunID}, {"startedRunId", f.StartedRunID}} {
		if p.v != "" && !validUUID(p.v) {
			return badRequest("invalid_request", p.name+" must be a run id (a UUID)")
		}
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 {
			return badRequest("invalid_request", "limit must be a whole number from 1 to 500")
		}
		f.Limit = n
	}
	if err := engine.CheckDeliveryFilter(f); err != nil {
		return err
	}
	list, err := h.cfg.Store.ListDeliveries(r.Context(), tenant(r), f)
	if err != nil {
		return err
	}
	out := wire.DeliveryPage{Deliveries: make([]wire.HookDelivery, 0, len(list))}
	for _, d := range list {
		out.Deliveries = append(out.Deliveries, viewDelivery(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func viewHook(hk store.Hook) wire.Hook {
	out := wire.Hook{ID: hk.ID, Source: hk.Source, Workflow: hk.Workflow, Version: hk.Version, Webhook: hk.URL,
		When: make([]string, 0, len(hk.When)), CreatedAt: hk.CreatedAt}
	for _, s := range hk.When {
		out.When = append(out.When, string(s))
	}
	if hk.StartWorkflow != "" {
		out.Start = &wire.HookStart{Workflow: hk.StartWorkflow, Version: hk.StartVersion}
	}
	return out
}

func viewDelivery(d store.HookDelivery) wire.HookDelivery {
	out := wire.HookDelivery{ID: d.ID, RunID: d.RunID, HookID: d.HookID, Kind: d.Kind, Target: d.Target, Payload: d.Payload,
		Depth: d.Depth, Status: d.Status, Attempts: d.Attempts, AttemptLog: make([]wire.HookAttempt, 0, len(d.AttemptLog)),
		LastError: d.LastError, StartedRunID: d.StartedRunID, NextAt: d.NextAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	for _, a := range d.AttemptLog {
		out.AttemptLog = append(out.AttemptLog, wire.HookAttempt(a))
	}
	return out
}

// uuidPattern is a run id's form; a filter by anything else is a client's mistake.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func validUUID(s string) bool { return uuidPattern.MatchString(s) }
