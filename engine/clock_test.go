package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// TestADayOfWorkflowTimeOnAFakeClock: on the embedded store, whose clock is injected as the
// engine's is, a run's sleep, its step's retry backoffs and its wait's timeout pass when the
// clock is moved to their due times, with no sleep in the test: an hour's sleep and a day's
// wait take as long as the work between them. The journal then reads the clock's times
// exactly: each timer ended at its due time, however the clock was moved past it.
func TestADayOfWorkflowTimeOnAFakeClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, st, eng := onAFakeClock(t, engine.Config{})
	in := json.RawMessage(`{"email": "dee@example.com", "delayMs": 3600000, "failWelcome": 2, "verifyTimeoutMs": 86400000}`)
	run, _, err := eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "onboarding", Input: in})
	if err != nil {
		t.Fatal(err)
	}

	moves := 0
	testenv.Await(t, time.Minute, func() error {
		r, err := st.GetRun(ctx, store.DefaultTenant, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == store.StatusCompleted {
			return nil
		}
		if r.Status.Terminal() {
			t.Fatalf("run ended %s: %+v", r.Status, r.Error)
		}
		steps, err := st.ListSteps(ctx, store.DefaultTenant, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		// A run suspended at a timer is moved to its due time, and no further: an activation
		// never sees the clock jump under it. A run at a timer already due, or not yet
		// started, waits for the engine, which may itself wait a second of its time (a claim
		// the store turned down is tried again then): the clock is moved by that much.
		due := len(steps) == 0
		if n := len(steps); n > 0 {
			switch last := steps[n-1]; last.Status {
			case store.StepSleeping, store.StepRetrying, store.StepWaiting:
				if last.WakeAt != nil && clk.Now().Before(*last.WakeAt) {
					clk.Set(*last.WakeAt)
					moves++
				} else {
					due = true
				}
			}
		}
		if due {
			clk.Advance(time.Second)
		}
		return fmt.Errorf("run %s is %s, %d steps, the clock at %v", run.ID, r.Status, len(steps), clk.Now())
	})

	steps, err := st.ListSteps(ctx, store.DefaultTenant, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantKeys(t, keysOf(steps), "create-user", "welcome-delay", "send-welcome", "await-verify", "send-nudge")
	sleep, welcome, wait := steps[1], steps[2], steps[3]
	if got, want := *sleep.CompletedAt, sleep.StartedAt.Add(time.Hour); !got.Equal(want) {
		t.Errorf("the sleep ended at %v, want its due time %v", got, want)
	}
	if welcome.Attempt != 3 || welcome.Status != store.StepCompleted {
		t.Errorf("send-welcome: attempt %d %s, want attempt 3 completed", welcome.Attempt, welcome.Status)
	}
	if got, want := *wait.CompletedAt, wait.StartedAt.Add(24*time.Hour); wait.Status != store.StepTimedOut || !got.Equal(want) {
		t.Errorf("the wait is %s at %v, want timed out at %v", wait.Status, got, want)
	}
	// The hour's sleep and the day's timeout were each passed by moving the clock to them
	// (a retry's 20 ms backoff may have been passed by a second the engine waited for).
	if moves < 2 {
		t.Errorf("the clock was moved to a due time %d times, want at least 2 (the sleep, the timeout)", moves)
	}
}

func keysOf(steps []store.Step) []string {
	out := make([]string, 0, len(steps))
	for _, s := range steps {
		out = append(out, s.Key)
	}
	return out
}

// TestSuspendedRunsShareOneTimer: runs suspended until later than the parking horizon (so
// none is parked) leave the claimer one timer, not one each, and every one of them still wakes
// at its own due time with the safety poll put off for a day: when the timer fires, the
// claimer asks the store for the next due time (wakeups.go). A timer per run was a live runtime
// timer per sleeping run, about 180 bytes each at a million.
func TestSuspendedRunsShareOneTimer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, st, eng := onAFakeClock(t, engine.Config{PollInterval: 24 * time.Hour})
	// Each run sleeps an hour and a minute more than the one before, then waits a minute for
	// an event that never comes: two timed suspensions each, at 2n distinct times. The runs
	// start in two halves, and the second half must leave no more timers than the first.
	const n = 40
	var ids []string
	// lastSteps is each unfinished run's last journal entry (nil: none yet).
	lastSteps := func() (open int, last []*store.Step) {
		for _, id := range ids {
			r, err := st.GetRun(ctx, store.DefaultTenant, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status.Terminal() {
				if r.Status != store.StatusCompleted {
					t.Fatalf("run %s ended %s: %+v", id, r.Status, r.Error)
				}
				continue
			}
			open++
			steps, err := st.ListSteps(ctx, store.DefaultTenant, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) == 0 {
				last = append(last, nil)
				continue
			}
			last = append(last, &steps[len(steps)-1])
		}
		return open, last
	}
	startAsleep := func(from, to int) int {
		t.Helper()
		for i := from; i < to; i++ {
			in := fmt.Sprintf(`{"email": "r%d@example.com", "delayMs": %d, "verifyTimeoutMs": 60000}`, i, (time.Hour + time.Duration(i)*time.Minute).Milliseconds())
			run, _, err := eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "onboarding", Input: json.RawMessage(in)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, run.ID)
		}
		testenv.Await(t, time.Minute, func() error {
			_, last := lastSteps()
			for _, s := range last {
				if s == nil || s.Status != store.StepSleeping {
					return fmt.Errorf("a run has not reached its sleep: %+v", s)
				}
			}
			return nil
		})
		return clk.Timers()
	}
	half := startAsleep(0, n/2)
	if all := startAsleep(n/2, n); all > half {
		t.Errorf("%d runs asleep left %d timers waiting, %d asleep %d: want no more with more runs", n/2, half, n, all)
	}

	// Move the clock to the earliest due time, and no further, until every run is done.
	testenv.Await(t, 2*time.Minute, func() error {
		open, last := lastSteps()
		if open == 0 {
			return nil
		}
		next := time.Time{}
		for _, s := range last {
			if s != nil && s.WakeAt != nil && (s.Status == store.StepSleeping || s.Status == store.StepWaiting) &&
				clk.Now().Before(*s.WakeAt) && (next.IsZero() || s.WakeAt.Before(next)) {
				next = *s.WakeAt
			}
		}
		due := false
		for _, s := range last {
			if s == nil || s.WakeAt == nil || !clk.Now().Before(*s.WakeAt) {
				due = true
			}
		}
		switch {
		case due:
			// A run is due and waits for the engine, which may itself wait a second of its
			// time (a claim the store turned down is tried again then).
			clk.Advance(time.Second)
		case !next.IsZero():
			clk.Set(next)
		}
		states := map[string]int{}
		for _, s := range last {
			if s == nil {
				states["none"]++
				continue
			}
			states[s.Key+"/"+string(s.Status)]++
		}
		return fmt.Errorf("%d runs open (last entries %v), the clock at %v", open, states, clk.Now())
	})
}

// onAFakeClock starts an engine configured as cfg on a fresh embedded store, both on one fake
// clock at 9:00 on 1 March 2026, with the examples deployed to the default tenant.
func onAFakeClock(t *testing.T, cfg engine.Config) (*clock.Fake, *embedded.Store, *engine.Engine) {
	t.Helper()
	clk, st, eng := fakeClockEngine(t, cfg)
	if err := eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	return clk, st, eng
}

// fakeClockEngine is onAFakeClock's engine, not started.
func fakeClockEngine(t *testing.T, cfg engine.Config) (*clock.Fake, *embedded.Store, *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st, err := embedded.Open(ctx, embedded.Config{Dir: t.TempDir(), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Runtime, cfg.Clock, cfg.Rand = st, runtimeForTests(t), clk, clock.Seeded(1)
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Deploy(ctx, store.DefaultTenant, fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	return clk, st, eng
}

// TestAPollArmedFromAStaleReadingFiresAtTheRunsDueTime: an engine whose reading of the clock
// was half an hour behind the moment its timers were armed on (as a claim loop's is while a
// test's Set passes day after day under it) still claims a run that another host suspended at
// that run's due time. The reading is stale only until the clock is moved there: from then
// on the engine reads the time its activation must see. Its poll is armed for the due time the store gave, not for "that long
// after my reading": armed the old way, it waited for the half hour more, and a wfhost test
// crash variant, whose clock moves only when the run stands still, waited for ever.
func TestAPollArmedFromAStaleReadingFiresAtTheRunsDueTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, st, first := fakeClockEngine(t, engine.Config{PollInterval: 24 * time.Hour, Owner: "first"})
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"email": "dee@example.com", "delayMs": 3600000, "verifyTimeoutMs": 60000}`)
	run, _, err := first.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "onboarding", Input: in})
	if err != nil {
		t.Fatal(err)
	}
	var due time.Time
	testenv.Await(t, time.Minute, func() error {
		r, err := st.GetRun(ctx, store.DefaultTenant, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := st.ListSteps(ctx, store.DefaultTenant, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(steps); n == 0 || steps[n-1].Status != store.StepSleeping || r.AvailableAt == nil {
			return fmt.Errorf("run %s is %s, journal %q: not asleep yet", run.ID, r.Status, keysOf(steps))
		}
		due = *r.AvailableAt
		return nil
	})
	first.Stop() // the host that suspended the run, and would wake it, is gone

	stale := &staleClock{Fake: clk, lag: 30 * time.Minute}
	stale.lagging.Store(true)
	second, err := engine.New(engine.Config{
		Owner: "second", Store: st, Runtime: runtimeForTests(t), Clock: stale, Rand: clock.Seeded(1),
		PollInterval: 24 * time.Hour, SweepInterval: 24 * time.Hour, SchedulePoll: 24 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)
	// The second engine's first poll asks the store when the run is due and arms itself.
	testenv.Await(t, time.Minute, func() error {
		if !stale.armedFor(due) {
			return fmt.Errorf("no timer armed for the run's due time %v or after yet", due)
		}
		return nil
	})
	stale.lagging.Store(false)
	clk.Set(due)
	testenv.Await(t, time.Minute, func() error {
		steps, err := st.ListSteps(ctx, store.DefaultTenant, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) < 2 || steps[1].Status != store.StepCompleted {
			return fmt.Errorf("the sleep due at %v has not ended with the clock there (journal %q)", due, keysOf(steps))
		}
		return nil
	})
	if now := clk.Now(); !now.Equal(due) {
		t.Fatalf("the clock moved on to %v; the test moves it only to the due time %v", now, due)
	}
}

// staleClock is a Fake read lag behind while lagging is set: every reading is as old as one
// taken lag before the timers it leads to are armed. It notes the latest moment a timer was
// armed for.
type staleClock struct {
	*clock.Fake
	lag     time.Duration
	lagging atomic.Bool

	mu     sync.Mutex
	latest time.Time
}

func (c *staleClock) Now() time.Time {
	if c.lagging.Load() {
		return c.Fake.Now().Add(-c.lag)
	}
	return c.Fake.Now()
}

func (c *staleClock) note(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latest = clock.Later(c.latest, at)
}

// armedFor says whether a timer has been armed for t or later.
func (c *staleClock) armedFor(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.latest.Before(t)
}

func (c *staleClock) NewTimer(d time.Duration) clock.Timer {
	c.note(c.Fake.Now().Add(d))
	return staleTimer{c, c.Fake.NewTimer(d)}
}

func (c *staleClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.note(c.Fake.Now().Add(d))
	return staleTimer{c, c.Fake.AfterFunc(d, f)}
}

func (c *staleClock) NewTimerAt(t time.Time) clock.Timer {
	c.note(t)
	return staleTimer{c, c.Fake.NewTimerAt(t)}
}

func (c *staleClock) AfterFuncAt(t time.Time, f func()) clock.Timer {
	c.note(t)
	return staleTimer{c, c.Fake.AfterFuncAt(t, f)}
}

type staleTimer struct {
	c *staleClock
	clock.Timer
}

func (t staleTimer) Reset(d time.Duration) bool {
	t.c.note(t.c.Fake.Now().Add(d))
	return t.Timer.Reset(d)
}

func (t staleTimer) ResetAt(at time.Time) bool {
	t.c.note(at)
	return t.Timer.ResetAt(at)
}
