package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the time zones below, whatever the machine has installed

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// scheduleEnv is an engine that is not started, on a fake clock, with a fresh embedded store:
// the test fires schedules itself (FireSchedules), and the runs they start stay pending, so
// live, until the test cancels them.
func scheduleEnv(t *testing.T) (*clock.Fake, *embedded.Store, *engine.Engine) {
	t.Helper()
	return scheduleEnvWith(t, engine.Config{})
}

// scheduleEnvWith is scheduleEnv with the engine configured as cfg.
func scheduleEnvWith(t *testing.T, cfg engine.Config) (*clock.Fake, *embedded.Store, *engine.Engine) {
	t.Helper()
	return fakeClockEngine(t, cfg)
}

// scheduledRuns is the runs schedule id started, by fire time.
func scheduledRuns(t *testing.T, st store.Store, tenant, id string) []store.Run {
	t.Helper()
	runs, _, err := st.ListRuns(context.Background(), tenant, store.RunFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Run
	for _, r := range runs {
		if strings.HasPrefix(r.IdempotencyKey, "schedule:"+id+"@") {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b store.Run) int { return strings.Compare(a.IdempotencyKey, b.IdempotencyKey) })
	return out
}

func keysOfRuns(runs []store.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = strings.TrimPrefix(r.IdempotencyKey[strings.Index(r.IdempotencyKey, "@"):], "@")
	}
	return out
}

func mustSchedule(t *testing.T, eng *engine.Engine, req engine.ScheduleRequest) store.Schedule {
	t.Helper()
	sc, err := eng.CreateSchedule(context.Background(), store.DefaultTenant, req)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func fireAll(eng *engine.Engine) int {
	total := 0
	for {
		n := eng.FireSchedules(context.Background())
		if n == 0 {
			return total
		}
		total += n
	}
}

// liveRun is the steps workflow's input for a run that stays live: it sleeps a day.
var liveRun = []byte(`{"n": 2, "sleepMs": 86400000}`)

func TestScheduleOverlapPolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		policy store.OverlapPolicy
		// want is the fire times (seconds past 9:00) of the runs started, after fire times
		// at 10s, 20s and 30s with the first run live throughout, then that run cancelled.
		want []string
	}{
		{store.OverlapSkip, []string{"09:00:10"}},
		{store.OverlapBufferOne, []string{"09:00:10", "09:00:20"}}, // 30s dropped; 20s started once 10s's run ended
		{store.OverlapAllowAll, []string{"09:00:10", "09:00:20", "09:00:30"}},
		{store.OverlapCancelPrevious, []string{"09:00:10", "09:00:20", "09:00:30"}},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			clk, st, eng := scheduleEnv(t)
			mustSchedule(t, eng, engine.ScheduleRequest{ID: "s", IntervalMs: 10000, Workflow: "steps", Input: liveRun, Overlap: tc.policy})
			for range 3 {
				clk.Advance(10 * time.Second)
				fireAll(eng)
			}
			runs := scheduledRuns(t, st, store.DefaultTenant, "s")
			if _, err := eng.TerminateRun(ctx, store.DefaultTenant, runs[0].ID); err != nil && !errors.Is(err, store.ErrConflict) {
				t.Fatal(err)
			}
			fireAll(eng)
			runs = scheduledRuns(t, st, store.DefaultTenant, "s")
			got := keysOfRuns(runs)
			for i := range got {
				got[i] = got[i][11:19]
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("runs started at %v, want %v", got, tc.want)
			}
			if tc.policy == store.OverlapCancelPrevious {
				// Each start asked the one before to cancel itself (it then ends cancelled, told
				// at its sleep; the first was terminated above); the last is live, not asked.
				for i, r := range runs {
					cur, _ := st.GetRun(ctx, store.DefaultTenant, r.ID)
					asked := cur.Status == store.StatusCancelled || cur.CancelRequestedAt != nil
					if (i < len(runs)-1) != asked || i == len(runs)-1 && cur.Status.Terminal() {
						t.Errorf("run %d is %s, cancel asked at %v", i, cur.Status, cur.CancelRequestedAt)
					}
				}
			}
			sc, err := st.GetSchedule(ctx, store.DefaultTenant, "s")
			if err != nil {
				t.Fatal(err)
			}
			if sc.BufferedFireAt != nil || sc.LastRunID != runs[len(runs)-1].ID {
				t.Errorf("schedule: buffered %v, last run %s, want none and %s", sc.BufferedFireAt, sc.LastRunID, runs[len(runs)-1].ID)
			}
		})
	}
}

// TestScheduleCatchUpIsBoundedByItsWindow: after five minutes with no host firing, an
// every-10s schedule with a 30s window starts the fire times inside the window, no older.
func TestScheduleCatchUpIsBoundedByItsWindow(t *testing.T) {
	t.Parallel()
	clk, st, eng := scheduleEnv(t)
	mustSchedule(t, eng, engine.ScheduleRequest{ID: "c", IntervalMs: 10000, Workflow: "steps", Input: []byte(`{"n":1}`),
		Overlap: store.OverlapAllowAll, CatchupWindowMs: 30000})
	clk.Advance(5 * time.Minute)
	fireAll(eng)
	got := keysOfRuns(scheduledRuns(t, st, store.DefaultTenant, "c"))
	want := []string{"2026-03-01T09:04:30.000Z", "2026-03-01T09:04:40.000Z", "2026-03-01T09:04:50.000Z", "2026-03-01T09:05:00.000Z"}
	if !slices.Equal(got, want) {
		t.Fatalf("caught up %v, want %v", got, want)
	}
	sc, _ := st.GetSchedule(context.Background(), store.DefaultTenant, "c")
	if !sc.NextFireAt.Equal(time.Date(2026, 3, 1, 9, 5, 10, 0, time.UTC)) {
		t.Errorf("next fire time %v", sc.NextFireAt)
	}
}

// TestScheduleSurvivesARestart: a schedule made by one daemon is fired by the next one on the
// same data directory, from where it stood, catching up what fell inside its window.
func TestScheduleSurvivesARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	clk := clock.NewFake(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	daemon := func() (*embedded.Store, *engine.Engine) {
		st, err := embedded.Open(ctx, embedded.Config{Dir: dir, Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
			t.Fatal(err)
		}
		eng, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		return st, eng
	}
	st, eng := daemon()
	if _, err := eng.Deploy(ctx, store.DefaultTenant, fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, eng, engine.ScheduleRequest{ID: "r", IntervalMs: 60000, Workflow: "steps", Input: []byte(`{"n":1}`),
		Overlap: store.OverlapAllowAll, CatchupWindowMs: 150000})
	clk.Advance(time.Minute)
	fireAll(eng)
	st.Close()

	clk.Advance(5 * time.Minute) // down from 9:01 to 9:06: 9:02 to 9:06 missed, 9:04 to 9:06 inside the window
	st, eng = daemon()
	defer st.Close()
	fireAll(eng)
	want := []string{"2026-03-01T09:01:00.000Z", "2026-03-01T09:04:00.000Z", "2026-03-01T09:05:00.000Z", "2026-03-01T09:06:00.000Z"}
	if got := keysOfRuns(scheduledRuns(t, st, store.DefaultTenant, "r")); !slices.Equal(got, want) {
		t.Fatalf("runs across the restart: %v, want %v", got, want)
	}
}

// TestScheduleJitterLongerThanTheWindowDelaysAndNeverSkips: lateness is counted from a fire
// time's due time, so a fire time whose jitter is past the catch-up window still starts.
func TestScheduleJitterLongerThanTheWindowDelaysAndNeverSkips(t *testing.T) {
	t.Parallel()
	clk, st, eng := scheduleEnv(t)
	sc := mustSchedule(t, eng, engine.ScheduleRequest{ID: "j", IntervalMs: 10000, Workflow: "steps", Input: []byte(`{"n":1}`),
		Overlap: store.OverlapAllowAll, JitterMs: 3_600_000, CatchupWindowMs: 1000})
	if sc.DueAt.Sub(sc.NextFireAt) < 2*time.Second {
		t.Skipf("this fire time's jitter is %v: too short to tell", sc.DueAt.Sub(sc.NextFireAt))
	}
	clk.Set(sc.DueAt)
	eng.FireSchedules(context.Background())
	if got := keysOfRuns(scheduledRuns(t, st, store.DefaultTenant, "j")); len(got) != 1 || got[0] != "2026-03-01T09:00:10.000Z" {
		t.Fatalf("runs at the first due time: %v, want the first fire time's", got)
	}
}

// TestScheduleStartRefusedByTheTenantsLimits: the tenant's limits apply to each run a schedule
// starts: with its input limit lowered below the schedule's input, a fire time starts nothing,
// says why, moves on, and is counted as failed (the metric by outcome).
func TestScheduleStartRefusedByTheTenantsLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	clk, st, eng := scheduleEnvWith(t, engine.Config{Metrics: reg})
	mustSchedule(t, eng, engine.ScheduleRequest{ID: "l", IntervalMs: 60000, Workflow: "steps", Input: []byte(`{"n": 1, "pad": "0123456789"}`),
		Overlap: store.OverlapAllowAll})
	clk.Advance(time.Minute)
	fireAll(eng)
	if _, err := st.SetTenantLimits(ctx, store.DefaultTenant, store.Limits{MaxInputBytes: 10}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute) // past the engine's trust in the limits it read
	fireAll(eng)
	res, err := eng.TriggerSchedule(ctx, store.DefaultTenant, "l")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != engine.TriggerFailed || !strings.Contains(res.Note, "limit is 10") {
		t.Fatalf("trigger past the input limit: %+v", res)
	}
	sc, _ := st.GetSchedule(ctx, store.DefaultTenant, "l")
	if !strings.Contains(sc.LastError, "limit is 10") || !sc.NextFireAt.Equal(time.Date(2026, 3, 1, 9, 3, 0, 0, time.UTC)) {
		t.Fatalf("schedule after a refused start: next %v, last error %q", sc.NextFireAt, sc.LastError)
	}
	if n := len(scheduledRuns(t, st, store.DefaultTenant, "l")); n != 1 {
		t.Fatalf("%d runs, want the one before the limit was lowered", n)
	}
	fires := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "wfhost_schedule_fires_total" {
			for _, m := range f.GetMetric() {
				fires[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if fires["started"] != 1 || fires["failed"] != 1 {
		t.Fatalf("wfhost_schedule_fires_total by outcome: %v, want started 1 and failed 1 (the loop's; a trigger is not counted)", fires)
	}
}

// TestScheduleCronWithSecondsAndTimeZone: a six-field expression in New York fires at 9:00:30
// local time, across the change to daylight saving time (8 March 2026).
func TestScheduleCronWithSecondsAndTimeZone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, st, eng := scheduleEnv(t)
	mustSchedule(t, eng, engine.ScheduleRequest{ID: "ny", Cron: "30 0 9 * * *", TimeZone: "America/New_York",
		Workflow: "steps", Input: []byte(`{"n":1}`), JitterMs: 2000})
	next, err := eng.NextFireTimes(ctx, store.DefaultTenant, "ny", 9)
	if err != nil {
		t.Fatal(err)
	}
	for i, ft := range next {
		wantHour := 14 // EST, UTC-5
		if i >= 7 {
			wantHour = 13 // EDT from 8 March
		}
		if want := time.Date(2026, 3, 1+i, wantHour, 0, 30, 0, time.UTC); !ft.At.Equal(want) {
			t.Errorf("fire time %d is %v, want %v", i, ft.At, want)
		}
		if j := ft.Due.Sub(ft.At); j < 0 || j >= 2*time.Second {
			t.Errorf("fire time %d: jitter %v outside [0, 2s)", i, j)
		}
	}
	// Not due at the fire time when its jitter is positive; due at its due time.
	if next[0].Due.After(next[0].At) {
		clk.Set(next[0].At)
		if n := fireAll(eng); n != 0 {
			t.Fatalf("fired %d steps before the jittered due time", n)
		}
	}
	clk.Set(next[0].Due)
	fireAll(eng)
	if got := keysOfRuns(scheduledRuns(t, st, store.DefaultTenant, "ny")); !slices.Equal(got, []string{"2026-03-01T14:00:30.000Z"}) {
		t.Fatalf("runs %v", got)
	}
}

func TestSchedulePauseResumeTrigger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, st, eng := scheduleEnv(t)
	mustSchedule(t, eng, engine.ScheduleRequest{ID: "p", IntervalMs: 60000, Workflow: "steps", Input: []byte(`{"n":1}`), Overlap: store.OverlapAllowAll})
	if _, err := eng.PauseSchedule(ctx, store.DefaultTenant, "p"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)
	if n := fireAll(eng); n != 0 {
		t.Fatalf("a paused schedule took %d steps", n)
	}
	// A trigger fires a paused schedule now.
	clk.Advance(1500 * time.Millisecond)
	res, err := eng.TriggerSchedule(ctx, store.DefaultTenant, "p")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != engine.TriggerStarted || res.Run == nil || !res.FireAt.Equal(clk.Now()) {
		t.Fatalf("trigger: %+v", res)
	}
	resumed, err := eng.ResumeSchedule(ctx, store.DefaultTenant, "p")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 3, 1, 9, 11, 0, 0, time.UTC); !resumed.NextFireAt.Equal(want) || resumed.Paused {
		t.Fatalf("resumed at %v (paused %v), want %v: no catch-up of the paused time", resumed.NextFireAt, resumed.Paused, want)
	}
	clk.Set(resumed.NextFireAt)
	fireAll(eng)
	got := keysOfRuns(scheduledRuns(t, st, store.DefaultTenant, "p"))
	if want := []string{"2026-03-01T09:10:01.500Z", "2026-03-01T09:11:00.000Z"}; !slices.Equal(got, want) {
		t.Fatalf("runs %v, want %v", got, want)
	}
	if err := eng.DeleteSchedule(ctx, store.DefaultTenant, "p"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if n := fireAll(eng); n != 0 {
		t.Fatalf("a deleted schedule took %d steps", n)
	}
	if _, err := eng.TriggerSchedule(ctx, store.DefaultTenant, "p"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("trigger of a deleted schedule: %v", err)
	}
}

// TestScheduleRefusals: every bad request is ErrInvalid (or the tenant's ErrTooLarge, or
// ErrNotFound for a workflow it does not have) with a message naming the field.
func TestScheduleRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st, eng := scheduleEnv(t)
	ok := engine.ScheduleRequest{ID: "ok", IntervalMs: 1000, Workflow: "steps"}
	for _, tc := range []struct {
		name string
		edit func(r *engine.ScheduleRequest)
		want error
		says string
	}{
		{"no spec", func(r *engine.ScheduleRequest) { r.IntervalMs = 0 }, engine.ErrInvalid, "needs a cron"},
		{"both specs", func(r *engine.ScheduleRequest) { r.Cron = "* * * * *" }, engine.ErrInvalid, "not both"},
		{"short interval", func(r *engine.ScheduleRequest) { r.IntervalMs = 999 }, engine.ErrInvalid, "intervalMs"},
		{"negative interval", func(r *engine.ScheduleRequest) { r.IntervalMs = -5 }, engine.ErrInvalid, "intervalMs"},
		{"zone on an interval", func(r *engine.ScheduleRequest) { r.TimeZone = "UTC" }, engine.ErrInvalid, "timeZone"},
		{"bad cron", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, "61 * * * *" }, engine.ErrInvalid, "cron"},
		{"seven fields", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, "0 0 0 1 1 * 2027" }, engine.ErrInvalid, "cron"},
		{"zero step", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, "*/0 * * * *" }, engine.ErrInvalid, "cron"},
		{"never fires", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, "0 0 0 30 2 *" }, engine.ErrInvalid, "never fires"},
		{"TZ prefix", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, "CRON_TZ=Asia/Tokyo * * * * *" }, engine.ErrInvalid, "timeZone"},
		{"@every", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, "@every 1s" }, engine.ErrInvalid, "intervalMs"},
		{"unknown zone", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron, r.TimeZone = 0, "@daily", "Mars/Olympus" }, engine.ErrInvalid, "IANA"},
		{"zone path", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron, r.TimeZone = 0, "@daily", "../../etc/passwd" }, engine.ErrInvalid, "IANA"},
		{"Local zone", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron, r.TimeZone = 0, "@daily", "Local" }, engine.ErrInvalid, "Local"},
		{"non-UTF-8 cron", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, "* * * * \xff" }, engine.ErrInvalid, "cron"},
		{"huge cron", func(r *engine.ScheduleRequest) { r.IntervalMs, r.Cron = 0, strings.Repeat("1,", 5000)+"1 * * * *" }, engine.ErrInvalid, "cron"},
		{"empty id", func(r *engine.ScheduleRequest) { r.ID = "" }, engine.ErrInvalid, "id"},
		{"id with a slash", func(r *engine.ScheduleRequest) { r.ID = "a/b" }, engine.ErrInvalid, "id"},
		{"long id", func(r *engine.ScheduleRequest) { r.ID = strings.Repeat("a", 101) }, engine.ErrInvalid, "id"},
		{"bad overlap", func(r *engine.ScheduleRequest) { r.Overlap = "sometimes" }, engine.ErrInvalid, "overlap"},
		{"short window", func(r *engine.ScheduleRequest) { r.CatchupWindowMs = 10 }, engine.ErrInvalid, "catchupWindowMs"},
		{"long jitter", func(r *engine.ScheduleRequest) { r.JitterMs = 3600001 }, engine.ErrInvalid, "jitterMs"},
		{"bad input", func(r *engine.ScheduleRequest) { r.Input = []byte(`{"a":`) }, engine.ErrInvalid, "input"},
		{"big input", func(r *engine.ScheduleRequest) { r.Input = []byte(`"` + strings.Repeat("x", 2<<20) + `"`) }, engine.ErrTooLarge, "limit"},
		{"unknown workflow", func(r *engine.ScheduleRequest) { r.Workflow = "nope" }, store.ErrNotFound, "nope"},
		{"bad workflow name", func(r *engine.ScheduleRequest) { r.Workflow = "a\x00b" }, engine.ErrInvalid, "workflow"},
	} {
		req := ok
		tc.edit(&req)
		_, err := eng.CreateSchedule(ctx, store.DefaultTenant, req)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.want, tc.says)
		}
	}
	if _, err := eng.NextFireTimes(ctx, store.DefaultTenant, "ok", 101); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("101 fire times: %v", err)
	}
	mustSchedule(t, eng, ok)
	if _, err := eng.CreateSchedule(ctx, store.DefaultTenant, ok); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second schedule with one id: %v", err)
	}
	// Another tenant sees nothing of it.
	if err := st.EnsureTenant(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.TriggerSchedule(ctx, "other", "ok"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another tenant's trigger: %v", err)
	}
	if _, err := eng.NextFireTimes(ctx, "other", "ok", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another tenant's next fire times: %v", err)
	}
}

// TestScheduleFiresOnItsOwnOnAFakeClock: a started engine's scheduler loop wakes at a due
// time when the clock reaches it, and the run it starts completes.
func TestScheduleFiresOnItsOwnOnAFakeClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, st, eng := onAFakeClock(t, engine.Config{})
	sc := mustSchedule(t, eng, engine.ScheduleRequest{ID: "tick", IntervalMs: 5000, Workflow: "steps", Input: []byte(`{"n":1}`)})
	for i := range 3 {
		clk.Set(sc.NextFireAt.Add(time.Duration(i) * 5 * time.Second))
		testenv.Await(t, time.Minute, func() error {
			runs := scheduledRuns(t, st, store.DefaultTenant, "tick")
			if len(runs) < i+1 {
				return fmt.Errorf("%d runs after fire time %d", len(runs), i+1)
			}
			if r, _ := st.GetRun(ctx, store.DefaultTenant, runs[i].ID); r.Status != store.StatusCompleted {
				return fmt.Errorf("run %d is %s", i, r.Status)
			}
			return nil
		})
	}
	// Each run says which schedule and fire time started it (GET run's triggeredBy).
	for i, r := range scheduledRuns(t, st, store.DefaultTenant, "tick") {
		trig, err := st.RunTrigger(ctx, store.DefaultTenant, r.ID)
		if err != nil || trig.Kind != store.TriggerSchedule || trig.ScheduleID != "tick" || trig.FireAt == nil {
			t.Fatalf("run %d's trigger: %+v, %v", i, trig, err)
		}
	}
}

// TestScheduleFiredByTwoHostsStartsOneRunPerFireTime: two engines on one store (a Postgres
// schema; one embedded store) fire the same schedules at the same moments, on one fake clock
// moved a second at a time; each fire time starts exactly one run, none is missed.
func TestScheduleFiredByTwoHostsStartsOneRunPerFireTime(t *testing.T) {
	t.Parallel()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		schema := testenv.Schema(t, "wfhost_sched")
		var stores []store.Store
		for i := range 2 {
			st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: schema, MaxConns: 6})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(st.Close)
			if i == 0 {
				if err := st.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
			}
			stores = append(stores, st)
		}
		fireFromTwoHosts(t, clock.NewFake(time.Now().UTC().Truncate(time.Second)), stores)
	})
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(time.Now().UTC().Truncate(time.Second))
		st, err := embedded.Open(context.Background(), embedded.Config{Dir: t.TempDir(), Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		fireFromTwoHosts(t, clk, []store.Store{st, st})
	})
}

func fireFromTwoHosts(t *testing.T, clk *clock.Fake, stores []store.Store) {
	ctx := context.Background()
	if err := stores[0].EnsureTenant(ctx, store.DefaultTenant); err != nil {
		t.Fatal(err)
	}
	var hosts []*engine.Engine
	for i, st := range stores {
		eng, err := engine.New(engine.Config{Store: st, Runtime: runtimeForTests(t), Clock: clk, Owner: fmt.Sprintf("host-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, eng)
	}
	if _, err := hosts[0].Deploy(ctx, store.DefaultTenant, fixture(t, "examples.wasm"), false); err != nil {
		t.Fatal(err)
	}
	const schedules, seconds = 4, 20
	policies := []store.OverlapPolicy{store.OverlapAllowAll, store.OverlapAllowAll, store.OverlapCancelPrevious, store.OverlapAllowAll}
	for i := range schedules {
		_, err := hosts[i%2].CreateSchedule(ctx, store.DefaultTenant, engine.ScheduleRequest{ID: fmt.Sprintf("s%d", i),
			IntervalMs: 1000, Workflow: "steps", Input: liveRun, Overlap: policies[i], CatchupWindowMs: 3_600_000})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range seconds {
		clk.Advance(time.Second)
		var wg sync.WaitGroup
		for _, h := range hosts {
			wg.Go(func() {
				for range 3 {
					h.FireSchedules(ctx)
				}
			})
		}
		wg.Wait()
	}
	// Whatever a host left (a step it lost the race for is the other's), one of them finishes.
	fireAll(hosts[0])
	st := hosts[0].Service
	for i := range schedules {
		id := fmt.Sprintf("s%d", i)
		runs, _, err := st.ListRuns(ctx, store.DefaultTenant, store.RunFilter{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		seen, started := map[string]bool{}, 0
		for _, r := range runs {
			if strings.HasPrefix(r.IdempotencyKey, "schedule:"+id+"@") {
				seen[r.IdempotencyKey] = true
				started++
			}
		}
		if len(seen) != seconds || started != seconds {
			t.Errorf("schedule %s started %d runs for %d fire times, want one for each of %d", id, started, len(seen), seconds)
		}
	}
}

// TestScheduleOfAPausedWorkflowStartsPausedRuns: a schedule's start of a paused workflow
// creates its run paused (the fire time is taken; the run waits for the workflow's resume), and
// the schedule's overlap policy sees that run as live.
func TestScheduleOfAPausedWorkflowStartsPausedRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk, st, eng := scheduleEnv(t)
	if _, err := eng.PauseWorkflow(ctx, store.DefaultTenant, "steps", ""); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, eng, engine.ScheduleRequest{ID: "held", IntervalMs: 60000, Workflow: "steps", Input: []byte(`{"n":1}`), Overlap: store.OverlapSkip})
	clk.Advance(1500 * time.Millisecond)
	res, err := eng.TriggerSchedule(ctx, store.DefaultTenant, "held")
	if err != nil || res.Outcome != engine.TriggerStarted || res.Run == nil {
		t.Fatalf("trigger: %+v %v", res, err)
	}
	if res.Run.Status != store.StatusPaused {
		t.Fatalf("the scheduled run of a paused workflow is %s, want paused", res.Run.Status)
	}
	clk.Advance(2 * time.Minute)
	fireAll(eng)
	if runs := scheduledRuns(t, st, store.DefaultTenant, "held"); len(runs) != 1 {
		t.Fatalf("%d scheduled runs, want 1: the paused run is live, so later fire times skip", len(runs))
	}
}
