package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/internal/wasmgen"
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

// deepStepModule is a workflow module of the native ABI, "deep", whose six steps ("s", run with
// output null) are each called from the bottom of a recursion, the fourth from depth deep:
// asyncify saves every frame between wfhost_run and the step_run into the unwind buffer, so a
// checkpoint at that step_run overflows the buffer (64 KiB) and fails. The steps are at the
// same keys whatever the depth, so a run on a host that cannot checkpoint it writes the journal
// of one that never tries.
func deepStepModule(deep int32) []byte {
	const (
		descAt, nameAt, nullAt, outputAt, allocAt = 1024, 2048, 2056, 2064, 4096
		stepRun, stepDone, complete               = 0, 1, 2 // imports
		deepFn, stepFn                            = 7, 8
		opIf, opElse, opI32Eq, opI32Sub, opWrap   = 0x04, 0x05, 0x46, 0x6b, 0xa7
	)
	desc, output := `{"workflows":[{"name":"deep","version":"1"}]}`, `{"ok":true}`
	i32, i64 := []byte{wasmgen.I32}, []byte{wasmgen.I64}
	call := func(fn byte) []byte { return []byte{wasmgen.OpCall, fn} }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

	var run []byte
	for i := range 6 {
		depth := int32(0)
		if i == 3 {
			depth = deep
		}
		run = cat(run, wasmgen.I32Const(depth), call(deepFn))
	}
	run = cat(run, wasmgen.I32Const(outputAt), wasmgen.I32Const(int32(len(output))), call(complete))
	// deep(d): d == 0 ? step() : deep(d-1)
	deepBody := cat([]byte{wasmgen.OpLocalGet, 0, wasmgen.OpI32Eqz, opIf, wasmgen.BlockEmpty}, call(stepFn),
		[]byte{opElse, wasmgen.OpLocalGet, 0}, wasmgen.I32Const(1), []byte{opI32Sub}, call(deepFn), []byte{wasmgen.OpEnd})
	// step(): step_run("s"); on EXECUTE, step_done(ok, "null"). A journaled result is left
	// untaken: the next host call discards it (ABI.md §4.1).
	stepBody := cat(wasmgen.I32Const(nameAt), wasmgen.I32Const(1), wasmgen.I32Const(0), wasmgen.I32Const(0), call(stepRun),
		[]byte{opWrap}, wasmgen.I32Const(1), []byte{opI32Eq, opIf, wasmgen.BlockEmpty},
		wasmgen.I32Const(0), wasmgen.I32Const(nullAt), wasmgen.I32Const(4), call(stepDone), []byte{wasmgen.OpDrop, wasmgen.OpEnd})
	return wasmgen.Module{
		Imports: []wasmgen.Import{
			{Module: abi.ImportModule, Name: abi.FuncStepRun, Type: wasmgen.FuncType{Params: []byte{wasmgen.I32, wasmgen.I32, wasmgen.I32, wasmgen.I32}, Results: i64}},
			{Module: abi.ImportModule, Name: abi.FuncStepDone, Type: wasmgen.FuncType{Params: []byte{wasmgen.I32, wasmgen.I32, wasmgen.I32}, Results: i64}},
			{Module: abi.ImportModule, Name: abi.FuncComplete, Type: wasmgen.FuncType{Params: []byte{wasmgen.I32, wasmgen.I32}}},
		},
		Funcs: []wasmgen.Func{
			{Type: wasmgen.FuncType{Results: i32}, Body: wasmgen.I32Const(abi.Version), Export: abi.ExportABIVersion},
			{Type: wasmgen.FuncType{Results: i64}, Body: wasmgen.I64Const(int64(abi.PackPtrLen(descAt, uint32(len(desc))))), Export: abi.ExportDescribe},
			{Type: wasmgen.FuncType{Params: i32, Results: i32}, Body: wasmgen.I32Const(allocAt), Export: abi.ExportAlloc},
			{Type: wasmgen.FuncType{Params: []byte{wasmgen.I32, wasmgen.I32, wasmgen.I32, wasmgen.I32}}, Body: run, Export: abi.ExportRun},
			{Type: wasmgen.FuncType{Params: i32}, Body: deepBody},
			{Type: wasmgen.FuncType{}, Body: stepBody},
		},
		HasMemory: true,
		MemoryMin: 1,
		Data: []wasmgen.Segment{
			{Offset: descAt, Bytes: []byte(desc)},
			{Offset: nameAt, Bytes: []byte("s")},
			{Offset: nullAt, Bytes: []byte("null")},
			{Offset: outputAt, Bytes: []byte(output)},
		},
	}.Encode()
}

// savedSnapshots is a store that records the entry of every snapshot it is asked to save.
type savedSnapshots struct {
	store.Store
	mu  sync.Mutex
	seq []int
}

func (s *savedSnapshots) SaveSnapshot(ctx context.Context, l store.Lease, held *store.Step, snap store.Snapshot, leaseFor time.Duration) error {
	s.mu.Lock()
	s.seq = append(s.seq, snap.Seq)
	s.mu.Unlock()
	return s.Store.SaveSnapshot(ctx, l, held, snap, leaseFor)
}

// TestACheckpointThatFailsHandsTheRunBack: a checkpoint that cannot be taken (the guest's call
// stack past the unwind buffer: host.ErrCheckpoint) hands the run back with its held step
// committed, and this host takes no more snapshots of it. The run still completes with the
// journal of a run with snapshots off; the failure is logged and its activation counted as
// interrupted; and no snapshot is saved at or after the step it failed at.
func TestACheckpointThatFailsHandsTheRunBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wasm := deepStepModule(20_000)
	plain := setup(t, harnessOptions{parkMemory: -1})
	if _, err := plain.engine.Deploy(ctx, store.DefaultTenant, wasm, false); err != nil {
		t.Fatal(err)
	}
	ref := plain.start("deep", nil)
	if r := plain.await(ref.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("reference run %s: %+v", r.Status, r.Error)
	}

	reg := prometheus.NewRegistry()
	saved := &savedSnapshots{}
	h := setup(t, harnessOptions{parkMemory: -1, snapshotEvery: 1, metrics: reg,
		wrapStore: func(s store.Store) store.Store { saved.Store = s; return saved }})
	if _, err := h.engine.Deploy(ctx, store.DefaultTenant, wasm, false); err != nil {
		t.Fatal(err)
	}
	run := h.start("deep", nil)
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted || strings.ReplaceAll(string(r.Output), " ", "") != `{"ok":true}` {
		t.Fatalf("run %s %s: %+v", r.Status, r.Output, r.Error)
	}
	if got, want := h.journalString(run.ID), plain.journalString(ref.ID); got != want {
		t.Fatalf("journal\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(h.logs.String(), "checkpoint failed; the run takes no more snapshots on this host") {
		t.Fatal("no log says the checkpoint failed")
	}
	// Snapshots are asked for at every step_run from the second (entry 1) on; the fourth's
	// (entry 3) fails, and none is asked for after it.
	saved.mu.Lock()
	seqs := slices.Clone(saved.seq)
	saved.mu.Unlock()
	if !slices.Equal(seqs, []int{1, 2}) {
		t.Fatalf("snapshots saved at entries %v, want [1 2]: none at or after the failed checkpoint at entry 3", seqs)
	}
	m := gathered(t, reg)
	// The failed checkpoint is counted, and its activation is the only one interrupted; the
	// run handed back is replayed from the top: a run this host takes no snapshots of does not
	// start from one here either (engine/activate.go).
	if got := m["wfhost_snapshot_failures_total{}"]; got != 1 {
		t.Fatalf("%v failed checkpoints counted, want 1", got)
	}
	if got := m["wfhost_activations_total{outcome=interrupted,tenant=default}"]; got != 1 {
		t.Fatalf("%v activations interrupted, want the failed checkpoint's", got)
	}
	if m["wfhost_snapshots_total{}"] != 2 || m["wfhost_snapshot_restores_total{outcome=replayed}"] != 1 || m["wfhost_snapshot_restores_total{outcome=restored}"] != 0 {
		t.Fatalf("%v snapshots taken, %v restored, %v replayed; want 2 taken, and the run handed back replayed once",
			m["wfhost_snapshots_total{}"], m["wfhost_snapshot_restores_total{outcome=restored}"], m["wfhost_snapshot_restores_total{outcome=replayed}"])
	}
}

// TestASnapshotItsJournalNoLongerHoldsIsNotRestored: a snapshot is restored only while the
// journal holds the entry it was taken after (store.Snapshot.LastKey). A run waiting for an
// event, with a snapshot at send-welcome (entry 2, after welcome-delay), has its journal cut
// back to its first entry, as a future "restart from step 1" would: the next claim leaves the
// snapshot out, and deletes it, and the run replays from the top, runs its steps again and
// ends with the journal of a run with snapshots off. Restored from the snapshot instead, it
// would go on from entry 2 with entry 1 missing.
func TestASnapshotItsJournalNoLongerHoldsIsNotRestored(t *testing.T) {
	t.Parallel()
	input := map[string]any{"email": "Ada@Example.com", "delayMs": 10, "verifyTimeoutMs": 3_600_000}
	verify := func(h *harness, runID string) {
		h.t.Helper()
		h.awaitStep(runID, "await-verify", store.StepWaiting, settle)
		payload := fmt.Sprintf(`{"userId":%q,"via":"email"}`, h.userID(runID))
		if _, err := h.engine.Signal(context.Background(), store.DefaultTenant, engine.SignalRequest{RunID: runID, Event: "verify", Payload: json.RawMessage(payload)}); err != nil {
			h.t.Fatal(err)
		}
	}
	plain := setup(t, harnessOptions{parkMemory: -1})
	plain.deploy("examples_as.wasm", false)
	ref := plain.start("onboarding", input)
	verify(plain, ref.ID)
	if r := plain.await(ref.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("reference run %s: %+v", r.Status, r.Error)
	}

	reg := prometheus.NewRegistry()
	h := setup(t, harnessOptions{parkMemory: -1, snapshotEvery: 1, metrics: reg})
	h.deploy("examples_as.wasm", false)
	run := h.start("onboarding", input)
	h.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	if n := h.count(`SELECT count(*) FROM snapshots WHERE run_id = $1 AND seq = 2 AND last_key = 'welcome-delay'`, run.ID); n != 1 {
		t.Fatalf("%d snapshots at send-welcome, want 1", n)
	}
	// The cut, once the run is handed back: entries 1 on deleted and the run made due.
	err := testenv.Poll(t, settle, func() error {
		if h.sql(`WITH cut AS (
				DELETE FROM steps WHERE run_id = $1 AND seq >= 1 AND EXISTS (SELECT 1 FROM runs WHERE id = $1 AND lease_owner IS NULL))
			UPDATE runs SET available_at = now() WHERE id = $1 AND lease_owner IS NULL`, run.ID) == 0 {
			return errors.New("the run is still leased")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	verify(h, run.ID)
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("run %s: %+v\n%s", r.Status, r.Error, h.journalString(run.ID))
	}
	if got, want := h.journalString(run.ID), plain.journalString(ref.ID); got != want {
		t.Fatalf("journal\n%s\nwant\n%s", got, want)
	}
	// The welcome mail was sent again: the steps after the cut ran again, from the top.
	if n := strings.Count(h.logs.String(), "welcome mail sent to Ada@Example.com"); n != 2 {
		t.Fatalf("the welcome mail was sent %d times, want twice: once before the cut, once after", n)
	}
	// No claim handed the stale snapshot to the engine (it would have counted it restored or
	// replayed); the one the replay took at send-welcome again was restored after the signal.
	m := gathered(t, reg)
	if m["wfhost_snapshot_restores_total{outcome=replayed}"] != 0 || m["wfhost_snapshot_restores_total{outcome=restored}"] != 1 {
		t.Fatalf("%v runs restored, %v replayed; want the stale snapshot never handed over, and the new one restored once",
			m["wfhost_snapshot_restores_total{outcome=restored}"], m["wfhost_snapshot_restores_total{outcome=replayed}"])
	}
}
