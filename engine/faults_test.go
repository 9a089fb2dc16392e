package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/internal/testenv"
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
	h := setup(t, harnessOptions{wrapStore: func(s store.Store) store.Store {
		return &faultyStore{Store: s, failAt: map[int32]bool{2: true, 3: true}}
	}})
	h.deploy("examples.wasm", false)
	logs := h.logs
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

// guestLogOrder is faultyStore that also notes, in order, each guest log write and each
// fault that hands a run back.
type guestLogOrder struct {
	faultyStore
	writes eventLog
}

func (s *guestLogOrder) note(w string) { s.writes.add(w) }

func (s *guestLogOrder) AppendGuestLog(ctx context.Context, tenantID, runID string, lines []store.GuestLogLine) (int, error) {
	s.note(fmt.Sprintf("%d guest lines", len(lines)))
	return s.faultyStore.AppendGuestLog(ctx, tenantID, runID, lines)
}

func (s *guestLogOrder) Fault(ctx context.Context, l store.Lease, reason string, retryAt time.Time) error {
	s.note("fault")
	return s.faultyStore.Fault(ctx, l, reason, retryAt)
}

// TestAFaultKeepsTheGuestLogBeforeHandingTheRunBack: what a pass's guest logged before its
// store write failed is kept before the fault hands the run back, so it comes before anything
// the next activation (on any host, at once after a release) logs: the guest log is read in
// the order it was written.
func TestAFaultKeepsTheGuestLogBeforeHandingTheRunBack(t *testing.T) {
	t.Parallel()
	st := &guestLogOrder{faultyStore: faultyStore{failAt: map[int32]bool{2: true}}}
	h := setup(t, harnessOptions{wrapStore: func(s store.Store) store.Store {
		st.faultyStore.Store = s
		return st
	}})
	h.deploy("examples.wasm", false)
	run := h.start("steps", map[string]any{"n": 3})
	if r := h.await(run.ID, settle); r.Status != store.StatusCompleted {
		t.Fatalf("status %s error %+v\n%s", r.Status, r.Error, h.logs.tail(3000))
	}
	st.writes.mu.Lock()
	writes := slices.Clone(st.writes.events)
	st.writes.mu.Unlock()
	i := slices.Index(writes, "fault")
	if i < 1 || !strings.HasSuffix(writes[i-1], " guest lines") || writes[i-1] == "0 guest lines" {
		t.Fatalf("writes %q: want the faulted pass's guest lines kept just before its fault", writes)
	}
}

// nulOutputs is the real Postgres store with every completed run step's output replaced by a
// string holding a NUL: valid JSON that jsonb refuses (SQLSTATE 22P05), as a guest value that
// reached the store unchecked would be. Nothing about the refusal is simulated.
type nulOutputs struct{ store.Store }

func withNUL(s store.Step) store.Step {
	if s.Kind == store.KindRun && s.Status == store.StepCompleted {
		s.Output = []byte(`"a\u0000b"`)
	}
	return s
}

func (s nulOutputs) CommitStep(ctx context.Context, l store.Lease, st store.Step, leaseFor time.Duration) error {
	return s.Store.CommitStep(ctx, l, withNUL(st), leaseFor)
}

func (s nulOutputs) CommitAndFinish(ctx context.Context, l store.Lease, st store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	return s.Store.CommitAndFinish(ctx, l, withNUL(st), status, output, info, guestLog)
}

// TestRefusedWriteFailsTheRun: a step output the store refuses fails the run at once with
// code store_refused, instead of leaving it running, re-claimed and re-running the step's
// callback every lease with nothing journaled (the loop the attack found).
func TestRefusedWriteFailsTheRun(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{wrapStore: func(s store.Store) store.Store { return nulOutputs{s} }})
	h.deploy("examples.wasm", false)
	logs := h.logs
	run := h.start("steps", map[string]any{"n": 2})
	r := h.await(run.ID, settle)
	if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != abi.CodeStoreRefused {
		t.Fatalf("status %s error %+v, want failed with %s\n%s", r.Status, r.Error, abi.CodeStoreRefused, logs.tail(3000))
	}
	if !strings.Contains(r.Error.Message, "22P05") {
		t.Fatalf("the error does not say what the store refused: %s", r.Error.Message)
	}
	if r.Activations != 1 {
		t.Fatalf("%d activations, want 1: the refused write was tried again", r.Activations)
	}
	if n := strings.Count(logs.String(), "step ran index=0 "); n != 1 {
		t.Fatalf("the first step's callback ran %d times, want 1", n)
	}
	if steps := h.steps(run.ID); len(steps) != 0 {
		t.Fatalf("journal %v, want nothing: the refused step must not be half written", h.journalString(run.ID))
	}
}

// failingCommits is the real Postgres store whose step commits always fail as a dropped
// connection would, after writing nothing: a fault that is not the run's and never clears.
type failingCommits struct{ store.Store }

func (failingCommits) CommitStep(context.Context, store.Lease, store.Step, time.Duration) error {
	return errInjected
}

// TestRunWithoutProgressIsFailed: a run activated FaultLimit times in a row without anything
// journaled is failed with code no_progress and the last fault as its reason, instead of
// being re-activated forever; a metric counts it.
func TestRunWithoutProgressIsFailed(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := setup(t, harnessOptions{faultLimit: 3, metrics: reg, wrapStore: func(s store.Store) store.Store { return failingCommits{s} }})
	h.deploy("examples.wasm", false)
	logs := h.logs
	run := h.start("steps", map[string]any{"n": 2})
	r := h.await(run.ID, settle)
	if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != abi.CodeNoProgress {
		t.Fatalf("status %s error %+v, want failed with %s\n%s", r.Status, r.Error, abi.CodeNoProgress, logs.tail(3000))
	}
	if !strings.Contains(r.Error.Message, errInjected.Error()) {
		t.Fatalf("the error does not give the last fault: %s", r.Error.Message)
	}
	// Three activations faulted; the fourth claim found the limit reached and failed the run.
	if r.Activations != 4 {
		t.Fatalf("%d activations, want 4", r.Activations)
	}
	if n := strings.Count(logs.String(), "step ran index=0 "); n != 3 {
		t.Fatalf("the first step's callback ran %d times, want 3", n)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]*dto.MetricFamily)
	for _, f := range families {
		byName[f.GetName()] = f
	}
	key := "wfhost_runs_stalled_total{cause=" + abi.CodeNoProgress + ",tenant=" + store.DefaultTenant + "}"
	if got := series(byName)[key]; got != 1 {
		t.Fatalf("%s = %v, want 1", key, got)
	}
}

// outageStore is the real Postgres store behind a switch: while down, the calls an activation
// and the claimer make fail with store.ErrUnavailable, as they do while Postgres restarts. The
// first step commit takes it down, in the middle of a pass.
type outageStore struct {
	store.Store
	down    atomic.Bool
	tripped atomic.Bool
}

var errOutage = fmt.Errorf("%w: injected: connection refused", store.ErrUnavailable)

func (s *outageStore) fail() error {
	if s.down.Load() {
		return errOutage
	}
	return nil
}

func (s *outageStore) CommitStep(ctx context.Context, l store.Lease, st store.Step, leaseFor time.Duration) error {
	if s.tripped.CompareAndSwap(false, true) {
		s.down.Store(true)
	}
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.CommitStep(ctx, l, st, leaseFor)
}

func (s *outageStore) Fault(ctx context.Context, l store.Lease, reason string, at time.Time) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.Fault(ctx, l, reason, at)
}

func (s *outageStore) Suspend(ctx context.Context, l store.Lease, st *store.Step, at *time.Time) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.Suspend(ctx, l, st, at)
}

func (s *outageStore) Finish(ctx context.Context, l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.Finish(ctx, l, status, output, info, guestLog)
}

func (s *outageStore) CommitAndFinish(ctx context.Context, l store.Lease, st store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.CommitAndFinish(ctx, l, st, status, output, info, guestLog)
}

func (s *outageStore) Release(ctx context.Context, l store.Lease) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.Store.Release(ctx, l)
}

func (s *outageStore) ClaimRuns(ctx context.Context, p store.ClaimParams) ([]store.Claim, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.ClaimRuns(ctx, p)
}

func (s *outageStore) ExtendLeases(ctx context.Context, ls []store.Lease, d time.Duration) ([]store.Lease, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.ExtendLeases(ctx, ls, d)
}

// TestRunResumesAsSoonAsTheStoreIsBack: an activation cut off by a store outage cannot hand
// its run back while the store is away. The engine keeps the hand-back and makes it as soon as
// the store answers, so the run goes on then, not once its lease has run out (20 s here; the
// bound below is half of it).
//
// The engine's clock is a fake: the outage, the hand-back retrier's rounds and the fault's
// delay before this engine looks again pass when the test moves it, not in sleeps. It starts a
// minute back, so the due times the engine writes are already past for Postgres, whose own
// clock says when a run is due and when a lease runs out (store/postgres): what the test waits
// for is the engine's retry, and the lease it must beat is real.
func TestRunResumesAsSoonAsTheStoreIsBack(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("examples.wasm", false)
	const lease = 20 * time.Second
	st := &outageStore{Store: h.store}
	logs := &logBuffer{}
	clk := clock.NewFake(time.Now().Add(-time.Minute))
	eng, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), LeaseFor: lease, Clock: clk,
		PollInterval: time.Second, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	run := h.start("steps", map[string]any{"n": 3})
	testenv.Await(t, settle, func() error {
		// Time goes on while the run is claimed (the safety poll finds it if the notice came
		// before the listener was up) and cut off.
		clk.Advance(100 * time.Millisecond)
		if !strings.Contains(logs.String(), "the store did not take it; trying again shortly") {
			return errors.New("the store has not gone down under a hand-back")
		}
		return nil
	})
	// The outage: five of the retrier's longest backoffs, each round finding the store away.
	for range 5 {
		clk.Advance(500 * time.Millisecond)
	}
	st.down.Store(false)
	back := time.Now()
	var r store.Run
	err = testenv.Poll(t, lease/2, func() error {
		clk.Advance(100 * time.Millisecond) // the retrier's next round, then the fault's delay
		var err error
		if r, err = h.store.GetRun(context.Background(), store.DefaultTenant, run.ID); err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusCompleted {
			return fmt.Errorf("run %s is %s", run.ID, r.Status)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, logs.tail(3000))
	}
	t.Logf("the run completed %v after the store came back (lease %v)", time.Since(back).Round(time.Millisecond), lease)
	if r.Activations != 2 {
		t.Fatalf("%d activations, want 2", r.Activations)
	}
}

// lostAnswers is the real Postgres store whose first claim that takes a run, and first leased
// start, lose their answer: the store committed, the caller hears only that the connection
// died, as when Postgres goes away between the commit and the reply.
type lostAnswers struct {
	store.Store
	claimLost, startLost atomic.Bool
}

var errLostAnswer = fmt.Errorf("%w: injected: unexpected EOF", store.ErrUnavailable)

func (s *lostAnswers) ClaimRuns(ctx context.Context, p store.ClaimParams) ([]store.Claim, error) {
	cs, err := s.Store.ClaimRuns(ctx, p)
	if err == nil && len(cs) > 0 && s.claimLost.CompareAndSwap(false, true) {
		return nil, errLostAnswer
	}
	return cs, err
}

func (s *lostAnswers) CreateLeasedRun(ctx context.Context, r store.NewRun, to store.LeaseTo) (store.Claim, bool, error) {
	c, created, err := s.Store.CreateLeasedRun(ctx, r, to)
	if err == nil && c.Lease.Epoch > 0 && s.startLost.CompareAndSwap(false, true) {
		return store.Claim{}, false, errLostAnswer
	}
	return c, created, err
}

// TestLeasesWhoseAnswerWasLostAreHandedBack: a claim and a start that committed but whose
// answers were lost leave runs leased to this host that it never heard of. The engine hands
// such leases back before its next claim, so the runs go on at once instead of once their
// leases run out (20 s here; the bound below is half of it).
func TestLeasesWhoseAnswerWasLostAreHandedBack(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	digest := h.deploy("examples.wasm", false).Module.Digest
	const lease = 20 * time.Second
	st := &lostAnswers{Store: h.store}
	logs := &logBuffer{}
	eng, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), LeaseFor: lease,
		PollInterval: time.Second, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	input := json.RawMessage(`{"n":2}`)
	// A run queued before the engine starts: its first claim takes it, and that answer is lost.
	queued, _, err := h.store.CreateRun(ctx, store.NewRun{TenantID: store.DefaultTenant, Workflow: "steps",
		Version: "1", Digest: digest, Input: input, RetentionDays: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer eng.Stop()
	awaitDone := func(id, what string) {
		t.Helper()
		if r := h.await(id, lease/2); r.Status != store.StatusCompleted {
			t.Fatalf("%s: %s %+v\n%s", what, r.Status, r.Error, logs.tail(3000))
		}
	}
	awaitDone(queued.ID, "the run whose claim was lost")
	if !st.claimLost.Load() {
		t.Fatal("no claim answer was lost: the test did not test")
	}

	// A start on a host with a free slot and nothing queued creates its run leased to that
	// host; that answer is lost too. (A start the engine queued instead is tried again.)
	for try := 0; !st.startLost.Load(); try++ {
		if try == 50 {
			t.Fatal("no start was leased to the host: the test did not test")
		}
		r, _, err := eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: input})
		switch {
		case err == nil:
			awaitDone(r.ID, "a queued start")
		case !errors.Is(err, store.ErrUnavailable):
			t.Fatalf("start: %v", err)
		}
		// A real pause, not a clock's: the claimer's goroutine must look again and find the
		// queue empty before a start may run here, and that is real concurrency.
		time.Sleep(100 * time.Millisecond)
	}
	runs, _, err := h.store.ListRuns(ctx, store.DefaultTenant, store.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		awaitDone(r.ID, "the run whose start was lost")
	}
}

// TestGracefulShutdownIsNoFault: an activation a graceful shutdown interrupts hands its run
// back without counting a fault, so even with FaultLimit 1 the next host runs it again (to its
// own end: here the spinning step's deadline) instead of failing it with no_progress.
func TestGracefulShutdownIsNoFault(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("hostile.wasm", false)
	limits := store.Limits{ActivationTimeoutMs: 3000}
	first, err := engine.New(engine.Config{Store: h.store, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second,
		PollInterval: time.Second, ShutdownGrace: 100 * time.Millisecond, FaultLimit: 1, TenantDefaults: limits})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	run, _, err := first.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "spin"})
	if err != nil {
		t.Fatal(err)
	}
	h.awaitActivations(run.ID, 1)
	first.Stop() // interrupts the spinning activation and releases the run

	second, err := engine.New(engine.Config{Store: h.store, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second,
		PollInterval: time.Second, FaultLimit: 1, TenantDefaults: limits})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	r := h.await(run.ID, settle)
	if r.Status != store.StatusFailed || r.Error == nil || r.Error.Code != abi.CodeDeadline {
		t.Fatalf("status %s error %+v, want failed with %s after a second activation", r.Status, r.Error, abi.CodeDeadline)
	}
	if r.Activations != 2 {
		t.Fatalf("%d activations, want 2", r.Activations)
	}
}

// awaitActivations polls until the run has been activated at least n times.
func (h *harness) awaitActivations(runID string, n int) {
	h.t.Helper()
	testenv.Await(h.t, settle, func() error {
		r, err := h.store.GetRun(context.Background(), store.DefaultTenant, runID)
		if err != nil {
			h.t.Fatal(err)
		}
		if r.Activations < n {
			return fmt.Errorf("run %s activated %d times, want %d", runID, r.Activations, n)
		}
		return nil
	})
}
