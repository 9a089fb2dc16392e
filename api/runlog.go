package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/wfhost/wfhost/api/wire"
)

// A lifecycle log page: limit entries (default defaultLogPage, at most maxLogPage) after
// cursor, the seq of the last entry the caller has (0 or none: from the start).
const (
	defaultLogPage = 100
	maxLogPage     = 1000
)

// GET .../runs/{id}/log: a page of the run's lifecycle log, and the cursor of the next when
// more entries follow it.
func (h *Handler) runLog(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	after, limit, err := logPage(r)
	if err != nil {
		return err
	}
	entries, err := h.cfg.Store.ListRunLog(r.Context(), tenant(r), r.PathValue("id"), after, limit+1)
	if err != nil {
		return err
	}
	out := wire.LogPage{Entries: make([]wire.LogEntry, 0, min(len(entries), limit))}
	if len(entries) > limit {
		entries = entries[:limit]
		out.NextCursor = strconv.FormatInt(entries[limit-1].Seq, 10)
	}
	for _, e := range entries {
		out.Entries = append(out.Entries, wire.LogEntry{Seq: e.Seq, At: e.At, Kind: string(e.Kind), Host: e.Host, Detail: e.Detail})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// logPage reads a log request's cursor (a seq: decimal digits, at most 19) and limit.
func logPage(r *http.Request) (after int64, limit int, err error) {
	q := r.URL.Query()
	limit = defaultLogPage
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > maxLogPage {
			return 0, 0, badRequest("invalid_request", fmt.Sprintf("limit must be a number from 1 to %d, not %q", maxLogPage, q.Get("limit")))
		}
		limit = n
	}
	if c := q.Get("cursor"); q.Has("cursor") {
		n, err := strconv.ParseUint(c, 10, 63)
		if err != nil || len(c) > 19 {
			return 0, 0, badRequest("invalid_request", fmt.Sprintf("cursor is malformed: pass the nextCursor of the previous page or the seq of an entry, not %q", c))
		}
		after = int64(n)
	}
	return after, limit, nil
}

// GET .../runs/{id}/logs: a page of what the run's guest logged (store.ListGuestLog), paged as
// the lifecycle log is.
func (h *Handler) guestLog(w http.ResponseWriter, r *http.Request) error {
	if _, err := h.runOf(r); err != nil {
		return err
	}
	after, limit, err := logPage(r)
	if err != nil {
		return err
	}
	lines, err := h.cfg.Store.ListGuestLog(r.Context(), tenant(r), r.PathValue("id"), after, limit+1)
	if err != nil {
		return err
	}
	out := wire.GuestLogPage{Lines: make([]wire.GuestLogLine, 0, min(len(lines), limit))}
	if len(lines) > limit {
		lines = lines[:limit]
		out.NextCursor = strconv.FormatInt(lines[limit-1].Seq, 10)
	}
	for _, l := range lines {
		out.Lines = append(out.Lines, wire.GuestLogLine{Seq: l.Seq, At: l.At, Level: l.Level, Message: l.Message, Stream: l.Stream, Step: l.Step})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
