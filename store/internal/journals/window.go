package journals

import "github.com/wfhost/wfhost/store"

// MaxWindow bounds a journal window or page, so that one more than it is still an integer of
// any SQL dialect's LIMIT.
const MaxWindow = 1 << 30

// Limit is the LIMIT of a journal read for a window of window entries: one more than it, which
// tells whether more follow; ok is false for no window (0 or less: every entry).
func Limit(window int) (limit int64, ok bool) {
	if window <= 0 {
		return 0, false
	}
	return int64(min(window, MaxWindow)) + 1, true
}

// Trim cuts entries read with Limit(window) to the window, and reports whether more follow.
func Trim(entries []store.Step, window int) ([]store.Step, bool) {
	window = min(window, MaxWindow)
	if window > 0 && len(entries) > window {
		return entries[:window], true
	}
	return entries, false
}
