package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// The reads the web console needs beside the plain listing: counts that follow a listing's
// filters, a run's journal a page at a time and who holds a run's lease.

// runFilter reads a run listing's (or count's) query: the route's checkQuery has already
// refused unknown and repeated parameters, so this checks their form; the engine checks the
// values.
func runFilter(r *http.Request) (store.RunFilter, error) {
	q := r.URL.Query()
	for _, name := range []string{"status", "cursor", "version", "idempotencyKey", "parent"} {
		if q.Has(name) && q.Get(name) == "" {
			return store.RunFilter{}, badRequest("invalid_request", name+" is empty: leave it out to filter nothing")
		}
	}
	f := store.RunFilter{Workflow: r.PathValue("name"), Status: store.RunStatus(q.Get("status")), Cursor: q.Get("cursor"),
		Version: q.Get("version"), IdempotencyKey: q.Get("idempotencyKey"), Parent: q.Get("parent")}
	if err := abi.CheckText("parent", f.Parent, abi.MaxNameLen); err != nil {
		return store.RunFilter{}, badRequest("invalid_request", fmt.Sprintf("parent must be a run id: %v", err))
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > engine.MaxListLimit {
			return store.RunFilter{}, badRequest("invalid_request", fmt.Sprintf("limit must be a number from 1 to %d, not %q", engine.MaxListLimit, q.Get("limit")))
		}
		f.Limit = n
	}
	for _, name := range []string{"since", "until"} {
		if !q.Has(name) {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, q.Get(name))
		if err != nil {
			return store.RunFilter{}, badRequest("invalid_request", fmt.Sprintf("%s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", name, q.Get(name)))
		}
		if name == "since" {
			f.Since = t
		} else {
			f.Until = t
		}
	}
	input, err := inputFilter(q)
	if err != nil {
		return store.RunFilter{}, err
	}
	f.Input = input
	return f, nil
}

// GET /v1/runs/counts and GET /v1/workflows/{name}/runs/counts: the runs the listing with the
// same filters lists, over all its pages, counted by status. Every status is in the answer,
// zero or not, so a client can show them without knowing the list.
func (h *Handler) countRuns(w http.ResponseWriter, r *http.Request) error {
	f, err := runFilter(r)
	if err != nil {
		return err
	}
	counts, err := h.cfg.Service.CountRuns(r.Context(), tenant(r), f)
	if err != nil {
		return err
	}
	out := wire.RunCounts{Counts: map[wire.RunStatus]int{}}
	for _, s := range wire.RunStatuses() {
		n := counts[store.RunStatus(s)]
		out.Counts[s] = n
		out.Total += n
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// A journal page: limit entries (default defaultStepPage, at most maxStepPage) from cursor on.
const (
	defaultStepPage = 100
	maxStepPage     = 1000
)

// stepPage reads a steps request's paging: ok is false when it has neither limit nor cursor,
// and the journal is then read whole, as before paging was added.
func stepPage(r *http.Request) (from, limit int, ok bool, err error) {
	q := r.URL.Query()
	if !q.Has("limit") && !q.Has("cursor") {
		return 0, 0, false, nil
	}
	limit = defaultStepPage
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxStepPage {
			return 0, 0, false, badRequest("invalid_request", fmt.Sprintf("limit must be a number from 1 to %d, not %q", maxStepPage, q.Get("limit")))
		}
		limit = n
	}
	if q.Has("cursor") {
		c := q.Get("cursor")
		n, err := strconv.ParseUint(c, 10, 31)
		if err != nil || len(c) > 10 {
			return 0, 0, false, badRequest("invalid_request", fmt.Sprintf("cursor is malformed: pass the nextCursor of the previous page, not %q", c))
		}
		from = int(n)
	}
	return from, limit, true, nil
}

// readSteps reads the journal a steps request asks for: whole, or a page of it and the cursor
// of the next ("" after the last entry).
func (h *Handler) readSteps(r *http.Request) ([]store.Step, string, error) {
	from, limit, paged, err := stepPage(r)
	if err != nil {
		return nil, "", err
	}
	if !paged {
		steps, err := h.cfg.Store.ListSteps(r.Context(), tenant(r), r.PathValue("id"))
		return steps, "", err
	}
	steps, err := h.cfg.Store.ListStepsFrom(r.Context(), tenant(r), r.PathValue("id"), from, limit+1)
	if err != nil {
		return nil, "", err
	}
	if len(steps) <= limit {
		return steps, "", nil
	}
	steps = steps[:limit]
	return steps, strconv.Itoa(steps[limit-1].Seq + 1), nil
}

// lease fills in which host holds a live run's lease. It is a second read, by primary key,
// made for a single run (GET run), not for listings.
func (h *Handler) lease(r *http.Request, v *wire.Run) error {
	if store.RunStatus(v.Status).Terminal() {
		return nil
	}
	owner, expires, err := h.cfg.Store.RunLease(r.Context(), tenant(r), v.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // swept between the two reads: the run as read has no holder to show
	}
	if err != nil || owner == "" || expires == nil {
		return err
	}
	v.Lease = &wire.RunLease{Owner: owner, ExpiresAt: *expires}
	return nil
}
