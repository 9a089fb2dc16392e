// Package snapshots holds what both stores check of a snapshot before they keep it.
package snapshots

import (
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// Check refuses, with store.ErrRefused, a snapshot no store keeps: Data past
// store.MaxSnapshotBytes, or a negative Seq.
func Check(snap store.Snapshot) error {
	switch {
	case len(snap.Data) > store.MaxSnapshotBytes:
		return fmt.Errorf("%w: a snapshot of %d bytes is over the limit of %d", store.ErrRefused, len(snap.Data), store.MaxSnapshotBytes)
	case snap.Seq < 0:
		return fmt.Errorf("%w: a snapshot at entry %d", store.ErrRefused, snap.Seq)
	}
	return nil
}
