package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// eventLog is one ordered record of what a run's guest logged and what the engine committed.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, s)
}

// commitRecorder is the real store, noting each journal write in the event log.
type commitRecorder struct {
	store.Store
	log *eventLog
}

func (c commitRecorder) CommitStep(ctx context.Context, l store.Lease, s store.Step, leaseFor time.Duration) error {
	c.log.add("commit " + s.Key)
	return c.Store.CommitStep(ctx, l, s, leaseFor)
}

func (c commitRecorder) CommitAndFinish(ctx context.Context, l store.Lease, s store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	c.log.add(fmt.Sprintf("commit %s and finish %s with %d guest lines", s.Key, status, len(guestLog)))
	return c.Store.CommitAndFinish(ctx, l, s, status, output, info, guestLog)
}

func (c commitRecorder) AppendGuestLog(ctx context.Context, tenantID, runID string, lines []store.GuestLogLine) (int, error) {
	c.log.add(fmt.Sprintf("append %d guest lines", len(lines)))
	return c.Store.AppendGuestLog(ctx, tenantID, runID, lines)
}

// guestLines notes in the event log the lines the `steps` example's callbacks log.
type guestLines struct {
	slog.Handler
	log *eventLog
}

func (g guestLines) Enabled(context.Context, slog.Level) bool { return true }

func (g guestLines) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "step ran ") {
		g.log.add(r.Message)
	}
	return nil
}

func (g guestLines) WithAttrs(as []slog.Attr) slog.Handler {
	return guestLines{g.Handler.WithAttrs(as), g.log}
}
func (g guestLines) WithGroup(n string) slog.Handler {
	return guestLines{g.Handler.WithGroup(n), g.log}
}

// recordingEngine is an engine on the examples whose store writes and the `steps` example's
// guest lines go, in order, to one event log.
func recordingEngine(t *testing.T) (*harness, *engine.Engine, *eventLog) {
	t.Helper()
	h := setup(t, harnessOptions{noStart: true})
	h.deploy("examples.wasm", false)
	events := &eventLog{}
	eng, err := engine.New(engine.Config{Store: commitRecorder{h.store, events}, Runtime: runtimeForTests(t),
		LeaseFor: 3 * time.Second, PollInterval: time.Second,
		Logger: slog.New(guestLines{slog.DiscardHandler, events})})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	return h, eng, events
}

// TestAStepCommitsAtTheNextDurableCall holds the engine to ABI.md §4.5: a step's result is
// committed when the guest makes its next durable call, before that call runs anything (the
// next step's callback), and the last step's together with the run's end, in one write. The
// lines the guest logged go in that write too, not in one of their own.
func TestAStepCommitsAtTheNextDurableCall(t *testing.T) {
	t.Parallel()
	h, eng, events := recordingEngine(t)
	run, err := eng.StartAndAwait(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":3}`)})
	if err != nil || run.Status != store.StatusCompleted {
		t.Fatalf("run: %+v %v", run, err)
	}
	want := []string{
		"step ran index=0 attempt=1", "commit s",
		"step ran index=1 attempt=1", "commit s#1",
		"step ran index=2 attempt=1", "commit s#2 and finish completed with 3 guest lines",
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	if !slices.Equal(events.events, want) {
		t.Fatalf("guest log lines and commits, in order:\n%q\nwant\n%q", events.events, want)
	}
	lines, err := h.store.ListGuestLog(context.Background(), store.DefaultTenant, run.ID, 0, 10)
	if err != nil || len(lines) != 3 || lines[2].Message != "step ran index=2 attempt=1" || lines[2].Step == "" {
		t.Fatalf("the run's guest log: %+v %v, want the three lines, kept with the end", lines, err)
	}
}

func (c commitRecorder) CommitAndSuspend(ctx context.Context, l store.Lease, held, s store.Step, wakeAt *time.Time) error {
	c.log.add(fmt.Sprintf("commit %s and suspend at %s", held.Key, s.Key))
	return c.Store.CommitAndSuspend(ctx, l, held, s, wakeAt)
}

// TestAPassKeepsItsGuestLinesBeforeItLetsTheRunGo: the lines a pass's guest logged before
// it suspends are written before the suspension, which lets any host take the run (here, the
// sleep's end): nothing the next activation logs can come before them in the run's guest log.
// The end then carries only the lines logged after the resume.
func TestAPassKeepsItsGuestLinesBeforeItLetsTheRunGo(t *testing.T) {
	t.Parallel()
	h, eng, events := recordingEngine(t)
	run, err := eng.StartAndAwait(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":2,"sleepMs":50}`)})
	if err != nil || run.Status != store.StatusCompleted {
		t.Fatalf("run: %+v %v", run, err)
	}
	events.mu.Lock()
	got := slices.Clone(events.events)
	events.mu.Unlock()
	// A replay after the sleep may mark it elapsed with a commit of its own ("commit pause"),
	// a resumed parked pass does not: only the order of the rest is the engine's rule.
	got = slices.DeleteFunc(got, func(e string) bool { return e == "commit pause" })
	want := []string{
		"step ran index=0 attempt=1", "append 1 guest lines", "commit s and suspend at pause",
		"step ran index=1 attempt=1", "commit s#1 and finish completed with 1 guest lines",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("guest log lines and writes, in order:\n%q\nwant\n%q", got, want)
	}
	lines, err := h.store.ListGuestLog(context.Background(), store.DefaultTenant, run.ID, 0, 10)
	if err != nil || len(lines) != 2 || lines[0].Message != "step ran index=0 attempt=1" || lines[1].Message != "step ran index=1 attempt=1" {
		t.Fatalf("the run's guest log: %+v %v, want the two lines in order", lines, err)
	}
}
