package journals

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wfhost/wfhost/store"
)

// CheckSnapshot refuses, with store.ErrRefused, a snapshot no store keeps: Data past
// store.MaxSnapshotBytes, a negative Seq, or a Code or LastKey that is not text Postgres can
// hold (invalid UTF-8, a NUL), which the embedded store refuses too so that the two agree.
func CheckSnapshot(snap store.Snapshot) error {
	switch {
	case len(snap.Data) > store.MaxSnapshotBytes:
		return fmt.Errorf("%w: a snapshot of %d bytes is over the limit of %d", store.ErrRefused, len(snap.Data), store.MaxSnapshotBytes)
	case snap.Seq < 0:
		return fmt.Errorf("%w: a snapshot at entry %d", store.ErrRefused, snap.Seq)
	case !text(snap.Code), !text(snap.LastKey):
		return fmt.Errorf("%w: a snapshot's code %q or last key %q is not text", store.ErrRefused, snap.Code, snap.LastKey)
	}
	return nil
}

// text reports whether s is text both stores keep.
func text(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
