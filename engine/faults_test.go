package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// faultyStore is the real Postgres store with one fault injected: the commits numbered in
// failAt fail as a dropped connection would, after writing nothing.
type faultyStore struct {
	store.Store
	commits atomic.Int32
	failAt  map[int32]bool
}

var errInjected = errors.New("injected: connection reset by peer")

func (f *faultyStore) CommitStep(ctx context.Context, l store.Lease, s store.Step, leaseFor time.Duration) error {
	if n := f.commits.Add(1); f.failAt[n] {
		return errInjected
	}
	return f.Store.CommitStep(ctx, l, s, leaseFor)
}

func TestFailedCommitsAreRetriedWithoutDuplicates(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("examples.wasm", false)
	faulty := &faultyStore{Store: h.store, failAt: map[int32]bool{2: true, 3: true}}
	logs := &logBuffer{}
	eng, err := engine.New(engine.Config{Store: faulty, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second,
		PollInterval: time.Second, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	run := h.start("steps", map[string]any{"n": 4})
	r := h.await(run.ID, settle)
	if r.Status != store.StatusCompleted || decode[map[string]int](t, r.Output)["sum"] != 6 {
		t.Fatalf("status %s output %s error %+v\n%s", r.Status, r.Output, r.Error, logs.String())
	}
	wantKeys(t, h.keys(run.ID), "s", "s#1", "s#2", "s#3")
	if n := strings.Count(logs.String(), "trying the run again later"); n != 2 {
		t.Fatalf("%d activations retried after a fault, want 2", n)
	}
	// The step whose commit failed ran again (at least once), the others once.
	if n := strings.Count(logs.String(), "step ran index=1 "); n != 3 {
		t.Fatalf("step 1 ran %d times, want 3 (two failed commits, one that held)", n)
	}
	if r.Activations != 3 {
		t.Fatalf("%d activations, want 3", r.Activations)
	}
}
