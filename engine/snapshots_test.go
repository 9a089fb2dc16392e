package engine_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
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
	// The failed checkpoint's activation is the only one interrupted (there is no counter of
	// failed checkpoints of their own); the run handed back is replayed from the top: a run this host takes no snapshots of does
	// not start from one here either (engine/activate.go).
	if got := m["wfhost_activations_total{outcome=interrupted,tenant=default}"]; got != 1 {
		t.Fatalf("%v activations interrupted, want the failed checkpoint's", got)
	}
	if m["wfhost_snapshots_total{}"] != 2 || m["wfhost_snapshot_restores_total{outcome=replayed}"] != 1 || m["wfhost_snapshot_restores_total{outcome=restored}"] != 0 {
		t.Fatalf("%v snapshots taken, %v restored, %v replayed; want 2 taken, and the run handed back replayed once",
			m["wfhost_snapshots_total{}"], m["wfhost_snapshot_restores_total{outcome=restored}"], m["wfhost_snapshot_restores_total{outcome=replayed}"])
	}
}
