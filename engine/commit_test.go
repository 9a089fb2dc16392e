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

func (c commitRecorder) CommitAndFinish(ctx context.Context, l store.Lease, s store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo) error {
	c.log.add(fmt.Sprintf("commit %s and finish %s", s.Key, status))
	return c.Store.CommitAndFinish(ctx, l, s, status, output, info)
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

// TestAStepCommitsAtTheNextDurableCall holds the engine to ABI.md §4.5: a step's result is
// committed when the guest makes its next durable call, before that call runs anything (the
// next step's callback), and the last step's together with the run's end, in one write.
func TestAStepCommitsAtTheNextDurableCall(t *testing.T) {
	t.Parallel()
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
	defer eng.Stop()
	run, err := eng.StartAndAwait(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":3}`)})
	if err != nil || run.Status != store.StatusCompleted {
		t.Fatalf("run: %+v %v", run, err)
	}
	want := []string{
		"step ran index=0 attempt=1", "commit s",
		"step ran index=1 attempt=1", "commit s#1",
		"step ran index=2 attempt=1", "commit s#2 and finish completed",
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	if !slices.Equal(events.events, want) {
		t.Fatalf("guest log lines and commits, in order:\n%q\nwant\n%q", events.events, want)
	}
}
