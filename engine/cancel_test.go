package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/internal/wasmgen"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// TestCancelAbortsAStepsRequest: a cancel asked while a step callback waits on an outbound
// request aborts the request (the server sees its context end); the step's failure is journaled
// as where the cancellation reached the workflow, not retried, and the workflow, returning it,
// ends cancelled (ABI.md §4.15).
func TestCancelAbortsAStepsRequest(t *testing.T) {
	t.Parallel()
	srv, arrived, aborted := slowServer(t)
	h := setup(t, harnessOptions{allowPrivateHosts: true, limits: store.Limits{AllowedHosts: []string{srv.URL}}})
	h.deploy("capabilities.wasm", false)
	run := h.start("http-fetch", map[string]any{"url": srv.URL + "/slow"})
	<-arrived
	if _, err := h.engine.CancelRun(context.Background(), store.DefaultTenant, run.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	if !<-aborted {
		t.Fatal("the request ran its course: the cancel did not abort it")
	}
	r := h.await(run.ID, settle)
	if r.Status != store.StatusCancelled || r.Error == nil || r.Error.Code != abi.CodeCancelled {
		t.Fatalf("run %s %+v, want cancelled", r.Status, r.Error)
	}
	steps := h.steps(run.ID)
	if len(steps) != 1 || steps[0].Status != store.StepCancelled || steps[0].Attempt != 1 || steps[0].Error == nil ||
		steps[0].Error.Code != abi.CodeCancelled {
		t.Fatalf("journal %s, want the fetch step cancelled on its first attempt", journalText(steps))
	}
}

// TestCancelOfAModuleThatDoesNotHandleItTerminates: a module whose description does not
// declare the cancel feature is terminated at once, as a cancel did before the feature; here
// one spinning in its first pass, which no durable call would ever tell.
func TestCancelOfAModuleThatDoesNotHandleItTerminates(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	if _, err := h.engine.Deploy(context.Background(), store.DefaultTenant, wasmgen.Spin(), false); err != nil {
		t.Fatal(err)
	}
	run := h.start("w", nil)
	h.await(run.ID, settle, store.StatusRunning)
	r, err := h.engine.CancelRun(context.Background(), store.DefaultTenant, run.ID, time.Hour)
	if err != nil || r.Status != store.StatusCancelled || r.CancelRequestedAt != nil {
		t.Fatalf("cancel: %s %+v %v, want terminated at once", r.Status, r.CancelRequestedAt, err)
	}
}

// TestCancelGraceTerminatesARunThatDoesNotEnd: a workflow told of its cancellation may
// compensate for its grace period only; one stuck in a step callback past it is terminated
// there, by the host running it.
func TestCancelGraceTerminatesARunThatDoesNotEnd(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("hostile.wasm", false)
	run := h.start("spin-step", nil)
	testenv.Await(t, settle, func() error {
		if !strings.Contains(h.logs.tail(1<<20), "spinning in step forever") {
			return errors.New("the step callback has not begun")
		}
		return nil
	})
	asked := time.Now()
	if _, err := h.engine.CancelRun(context.Background(), store.DefaultTenant, run.ID, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	r := h.await(run.ID, settle)
	if r.Status != store.StatusCancelled || r.CompletedAt == nil || r.CompletedAt.Before(asked.Add(400*time.Millisecond)) {
		t.Fatalf("run %s %+v completed %v (asked %v), want cancelled at the end of its grace\nlogs:\n%s", r.Status, r.Error, r.CompletedAt, asked, h.logs.tail(3000))
	}
}

// TestCancelRequestsAreCheckedAndKept: a grace out of range is refused; a second cancel keeps
// the first one's times; a run that ended is a conflict.
func TestCancelRequestsAreCheckedAndKept(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ctx := context.Background()
	run := h.start("onboarding", map[string]any{"email": "Di@Example.com", "delayMs": 600000})
	h.awaitStep(run.ID, "welcome-delay", store.StepSleeping, settle)
	for _, g := range []time.Duration{-time.Second, engine.MaxCancelGrace + time.Millisecond} {
		if _, err := h.engine.CancelRun(ctx, store.DefaultTenant, run.ID, g); !isInvalid(err) {
			t.Errorf("grace %v: %v, want invalid", g, err)
		}
	}
	first, err := h.engine.CancelRun(ctx, store.DefaultTenant, run.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.engine.CancelRun(ctx, store.DefaultTenant, run.ID, time.Second)
	if err == nil && second.Status.Terminal() {
		second = first // it ended in between: nothing to compare
	}
	if err != nil && !isConflict(err) || err == nil && !second.CancelGraceUntil.Equal(*first.CancelGraceUntil) {
		t.Fatalf("a second cancel: %+v %v, want the first one's grace %v kept", second.CancelGraceUntil, err, first.CancelGraceUntil)
	}
	if r := h.await(run.ID, settle); r.Status != store.StatusCancelled {
		t.Fatalf("run %s, want cancelled", r.Status)
	}
	if _, err := h.engine.CancelRun(ctx, store.DefaultTenant, run.ID, 0); !isConflict(err) {
		t.Fatalf("cancel of an ended run: %v, want a conflict", err)
	}
}

func isInvalid(err error) bool  { return errors.Is(err, engine.ErrInvalid) }
func isConflict(err error) bool { return errors.Is(err, store.ErrConflict) }

// A cancel asked just after a run starts reaches its workflow, however the request and the
// run's first calls interleave: the request may land while the run is leased (leaving its
// wake-up alone) and the host hear of it only after the run suspended on a long sleep. The
// grace is long and the safety poll off, so only the workflow being told ends the run in time.
func TestACancelAskedAsTheRunStartsIsNotLost(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, eng *engine.Engine, st store.Store) {
		ctx := context.Background()
		for i := range 8 {
			run, _, err := eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "child",
				Input: json.RawMessage(`{"n":2,"holdMs":600000}`)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.CancelRun(ctx, store.DefaultTenant, run.ID, 10*time.Minute); err != nil {
				t.Fatal(err)
			}
			var got store.Run
			testenv.Await(t, settle, func() error {
				got, err = st.GetRun(ctx, store.DefaultTenant, run.ID)
				if err == nil && !got.Status.Terminal() {
					err = fmt.Errorf("run %d is %s", i, got.Status)
				}
				return err
			})
			if got.Status != store.StatusCancelled || got.Error == nil || got.Error.Code != abi.CodeCancelled {
				t.Fatalf("run %d ended %s (%+v), want cancelled by its workflow", i, got.Status, got.Error)
			}
		}
	}
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		h := setup(t, harnessOptions{pollInterval: time.Hour})
		h.deploy("examples.wasm", false)
		check(t, h.engine, h.store)
	})
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		st, eng := embeddedEngine(t, embedded.Config{}, engine.Config{PollInterval: time.Hour}, "examples.wasm")
		check(t, eng, st)
	})
}
