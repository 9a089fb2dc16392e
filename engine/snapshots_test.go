package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/store"
)

// damagedSnapshots is a store whose claims return every snapshot cut in half: the host cannot
// restore any of them.
type damagedSnapshots struct{ store.Store }

func (d damagedSnapshots) ClaimRuns(ctx context.Context, p store.ClaimParams) ([]store.Claim, error) {
	claims, err := d.Store.ClaimRuns(ctx, p)
	for i := range claims {
		if s := claims[i].Snapshot; s != nil {
			cut := *s
			cut.Data = cut.Data[:len(cut.Data)/2]
			claims[i].Snapshot = &cut
		}
	}
	return claims, err
}

// TestASnapshotThatCannotBeRestoredIsReplayed: correctness never depends on a snapshot. A run
// whose every claim brings a snapshot the host cannot restore is replayed from the top each
// time (the journal's start read under the lease) and writes the journal a run without
// snapshots writes.
func TestASnapshotThatCannotBeRestoredIsReplayed(t *testing.T) {
	t.Parallel()
	input := map[string]any{"n": 5, "sleepMs": 20}
	plain := setup(t, harnessOptions{parkMemory: -1})
	plain.deploy("examples_as.wasm", false)
	ref := plain.start("steps", input)
	if r := plain.await(ref.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("reference run %s: %+v", r.Status, r.Error)
	}

	reg := prometheus.NewRegistry()
	h := setup(t, harnessOptions{parkMemory: -1, snapshotEvery: 1, metrics: reg,
		wrapStore: func(s store.Store) store.Store { return damagedSnapshots{s} }})
	h.deploy("examples_as.wasm", false)
	run := h.start("steps", input)
	r := h.await(run.ID, settle)
	if r.Status != store.StatusCompleted || !strings.Contains(strings.ReplaceAll(string(r.Output), " ", ""), `"sum":10`) {
		t.Fatalf("run %s %s: %+v", r.Status, r.Output, r.Error)
	}
	if got, want := h.journalString(run.ID), plain.journalString(ref.ID); got != want {
		t.Fatalf("journal\n%s\nwant\n%s", got, want)
	}
	m := gathered(t, reg)
	if m["wfhost_snapshots_total{}"] == 0 || m["wfhost_snapshot_restores_total{outcome=replayed}"] < 3 || m["wfhost_snapshot_restores_total{outcome=restored}"] != 0 {
		t.Fatalf("%v snapshots taken, %v runs restored, %v replayed; want some taken, none restored, every wake after the first replayed",
			m["wfhost_snapshots_total{}"], m["wfhost_snapshot_restores_total{outcome=restored}"], m["wfhost_snapshot_restores_total{outcome=replayed}"])
	}
	if !strings.Contains(h.logs.String(), "snapshot not restored; replaying the journal from the top") {
		t.Fatal("no log says the snapshot was not restored")
	}
}
