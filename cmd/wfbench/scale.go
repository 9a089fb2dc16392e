package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// scaleScenarios are the scale mode's scenarios in the order they run (issue 13, point 9).
var scaleScenarios = []string{"replay", "timers", "signals", "neighbour", "sleeping", "recovery"}

// scaleOptions are the scale mode's sizes; the defaults are the issue's.
type scaleOptions struct {
	scenarios   string
	sizes       string // replay: the S values
	timers      int
	signals     int
	neighbourN  int
	backlog     int
	sleeping    int
	recovery    int
	idleWindow  time.Duration
	claimProbes int
}

func (o *options) scaleFlags() {
	s := &o.scale
	flag.StringVar(&s.scenarios, "scale", strings.Join(scaleScenarios, ","), "scale mode: the scenarios to run ("+strings.Join(scaleScenarios, ", ")+")")
	flag.StringVar(&s.sizes, "scale-s", "10,100,1000,10000", "scale mode, replay: the step counts S of one run (a 1 ms durable sleep after every step)")
	flag.IntVar(&s.timers, "scale-timers", 10_000, "scale mode, timers: runs whose sleeps end at the same instant")
	flag.IntVar(&s.signals, "scale-signals", 10_000, "scale mode, signals: waiting runs, one signal each")
	flag.IntVar(&s.neighbourN, "scale-neighbour-n", 300, "scale mode, neighbour: tenant B's 10-step runs in each phase")
	flag.IntVar(&s.backlog, "scale-backlog", 20_000, "scale mode, neighbour: tenant A's backlog of 10-step runs")
	flag.IntVar(&s.sleeping, "scale-sleeping", 1_000_000, "scale mode, sleeping: runs asleep for hours")
	flag.IntVar(&s.recovery, "scale-recovery", 10_000, "scale mode, recovery: journal entries of the interrupted run")
	flag.DurationVar(&s.idleWindow, "scale-idle", 10*time.Second, "scale mode, sleeping: how long to watch the idle daemon")
	flag.IntVar(&s.claimProbes, "scale-claims", 7, "scale mode, sleeping: timed claims of 32 (the median is reported)")
}

// runScale runs the chosen scenarios one after the other, each on a fresh store.
func runScale(ctx context.Context, o options, wasm []byte) error {
	for _, name := range strings.Split(o.scale.scenarios, ",") {
		var err error
		switch strings.TrimSpace(name) {
		case "replay":
			err = scaleReplay(ctx, o, wasm)
		case "timers":
			err = scaleTimers(ctx, o, wasm)
		case "signals":
			err = scaleSignals(ctx, o, wasm)
		case "neighbour":
			err = scaleNeighbour(ctx, o, wasm)
		case "sleeping":
			err = scaleSleeping(ctx, o, wasm)
		case "recovery":
			err = scaleRecovery(ctx, o, wasm)
		case "":
		default:
			err = fmt.Errorf("-scale: unknown scenario %q (want %s)", name, strings.Join(scaleScenarios, ", "))
		}
		if err != nil {
			return fmt.Errorf("scale %s: %w", name, err)
		}
	}
	return nil
}

// scaleLimits are the tenant defaults of the scale scenarios: no tenant cap in the way, and
// room for the journal of the largest run (S steps and S-1 sleeps).
func scaleLimits(entries int) store.Limits {
	return store.Limits{Concurrency: 100_000, MaxStepsPerRun: max(entries+10, engine.DefaultTenantLimits().MaxStepsPerRun)}
}

// scaleReplay: one run at a time of S steps, with a 1 ms durable sleep after every step (the
// run suspends S-1 times and every activation replays the journal so far), then without
// sleeps (one activation). Small S repeat until about 1,000 steps were measured, so the CPU
// figures are not one tick's worth.
func scaleReplay(ctx context.Context, o options, wasm []byte) error {
	sizes, err := intList(o.scale.sizes)
	if err != nil {
		return err
	}
	e, err := newScaleEnv(ctx, o, wasm, scaleLimits(2*slices.Max(sizes)), 0)
	if err != nil {
		return err
	}
	defer e.close(ctx)
	for range 5 { // warm-up: compiled code, pooled instances, prepared statements
		if _, err := e.oneRun(ctx, store.DefaultTenant, `{"n":10,"sleepMs":1}`); err != nil {
			return err
		}
	}
	for _, s := range sizes {
		reps := max(1, 1000/s)
		var per [2]struct{ host, pg, wall float64 }
		for i, sleepMs := range []int{1, 0} {
			input := fmt.Sprintf(`{"n":%d,"sleepMs":%d}`, s, sleepMs)
			pg0, cpu0, t0 := e.pgCPU(), selfCPU(), time.Now()
			for range reps {
				if _, err := e.oneRun(ctx, store.DefaultTenant, input); err != nil {
					return err
				}
			}
			steps := float64(s * reps)
			per[i].wall = time.Since(t0).Seconds() * 1000 / steps
			per[i].host = (selfCPU() - cpu0) * 1000 / steps
			per[i].pg = pgCPUDelta(pg0, e.pgCPU()) * 1000 / steps
		}
		fmt.Printf("%s s=%d runs=%d host_ms_per_step=%.3f%s wall_ms_per_step=%.3f nosleep_host_ms_per_step=%.4f%s host_ratio=%.1f\n",
			e.result("replay"), s, reps, per[0].host, e.pgField("pg_ms_per_step", per[0].pg), per[0].wall,
			per[1].host, e.pgField("nosleep_pg_ms_per_step", per[1].pg), per[0].host/max(per[1].host, 1e-6))
	}
	return nil
}

// oneRun starts a steps run and waits for it to complete.
func (e *scaleEnv) oneRun(ctx context.Context, tenant, input string) (store.Run, error) {
	done, err := e.eng.StartAndAwait(ctx, tenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(input)})
	if err != nil {
		return done, err
	}
	if done.Status != store.StatusCompleted {
		return done, fmt.Errorf("run %s ended %s: %+v", done.ID, done.Status, done.Error)
	}
	return done, nil
}

// scaleTimers: N runs of steps {"n":2} whose one sleep is sized, when the run is started, to
// end at the same instant T, set far enough ahead for all of them to be started and asleep
// first. A run's lateness is when its second step started minus its sleep's end as journaled
// (which is T plus however late the run reached its sleep: due_spread_ms says how tight the
// storm was).
func scaleTimers(ctx context.Context, o options, wasm []byte) error {
	n := o.scale.timers
	e, err := newScaleEnv(ctx, o, wasm, scaleLimits(0), 0)
	if err != nil {
		return err
	}
	defer e.close(ctx)
	lead := 10*time.Second + time.Duration(n)*4*time.Millisecond
	at := time.Now().Add(lead)
	// A quarter of the callers: more start runs faster than the engine takes them to their
	// sleep, and a run that waits for a slot reaches its sleep late, spreading the storm.
	ids, err := e.startMany(ctx, store.DefaultTenant, "steps", n, max(1, o.c/4), func(int) string {
		return fmt.Sprintf(`{"n":2,"sleepMs":%d}`, max(1, time.Until(at).Milliseconds()))
	})
	if err != nil {
		return err
	}
	if err := e.waitAsleep(ctx, at.Add(-time.Second), time.Until(at)-time.Second); err != nil {
		return fmt.Errorf("the runs were not all asleep before T (raise the lead): %w", err)
	}
	time.Sleep(time.Until(at))
	pg0, cpu0 := e.pgCPU(), selfCPU()
	if err := e.waitCompleted(ctx, store.DefaultTenant, "steps", n, 10*time.Minute); err != nil {
		return err
	}
	pgSec, hostSec := pgCPUDelta(pg0, e.pgCPU()), selfCPU()-cpu0
	var late []time.Duration
	var firstDue, lastDue, lastWake time.Time
	for _, id := range ids {
		steps, err := e.st.ListSteps(ctx, store.DefaultTenant, id)
		if err != nil {
			return err
		}
		if len(steps) != 3 || steps[1].WakeAt == nil {
			return fmt.Errorf("run %s: want a step, a sleep and a step, journal has %d entries", id, len(steps))
		}
		due, woke := *steps[1].WakeAt, steps[2].StartedAt
		late = append(late, woke.Sub(due))
		if firstDue.IsZero() || due.Before(firstDue) {
			firstDue = due
		}
		if due.After(lastDue) {
			lastDue = due
		}
		if woke.After(lastWake) {
			lastWake = woke
		}
	}
	slices.Sort(late)
	fmt.Printf("%s n=%d due_spread_ms=%.0f late_p50_ms=%.1f late_p99_ms=%.1f late_max_ms=%.1f wakes_per_s=%.0f host_ms_per_wake=%.3f%s\n",
		e.result("timers"), n, ms(lastDue.Sub(firstDue)), ms(pct(late, .5)), ms(pct(late, .99)), ms(late[len(late)-1]),
		float64(n)/lastWake.Sub(firstDue).Seconds(), hostSec*1000/float64(n), e.pgField("pg_ms_per_wake", pgSec*1000/float64(n)))
	return nil
}

// onboardingUser is the user id the onboarding fixture derives from an email, which its
// wait for "verify" matches on (examples/wasm/go/onboarding.go).
func onboardingUser(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(email)))
	return "u-" + hex.EncodeToString(sum[:6])
}

// scaleSignals: N onboarding runs (a step, a 1 ms sleep, a step, then a wait for "verify"
// with a 10-hour timeout) are started and left waiting; then each is sent its one matching
// event through the engine's Signal by c callers. delivered_per_s counts from the first
// signal to the last run's completion.
func scaleSignals(ctx context.Context, o options, wasm []byte) error {
	n := o.scale.signals
	e, err := newScaleEnv(ctx, o, wasm, scaleLimits(0), 0)
	if err != nil {
		return err
	}
	defer e.close(ctx)
	email := func(i int) string { return fmt.Sprintf("user%d@example.com", i) }
	ids, err := e.startMany(ctx, store.DefaultTenant, "onboarding", n, o.c, func(i int) string {
		return fmt.Sprintf(`{"email":%q,"delayMs":1,"verifyTimeoutMs":36000000}`, email(i))
	})
	if err != nil {
		return err
	}
	if err := e.waitAsleep(ctx, time.Now().Add(time.Hour), 10*time.Minute); err != nil {
		return err
	}
	pg0, cpu0, t0 := e.pgCPU(), selfCPU(), time.Now()
	tx0, claims0, evicted0 := e.tx.n.Load(), e.metric("wfhost_store_claim_batch_size"), e.metric("wfhost_park_evictions_total")
	next := make(chan int, o.c)
	errs := make(chan error, o.c)
	go func() {
		defer close(next)
		for i := range n {
			next <- i
		}
	}()
	for range o.c {
		go func() {
			var first error
			for i := range next {
				if first != nil {
					continue
				}
				payload := fmt.Sprintf(`{"userId":%q,"via":"bench"}`, onboardingUser(email(i)))
				res, err := e.eng.Signal(ctx, store.DefaultTenant, engine.SignalRequest{RunID: ids[i], Event: "verify", Payload: json.RawMessage(payload)})
				if err == nil && !res.Delivered {
					err = fmt.Errorf("run %s: the signal was buffered, not delivered", ids[i])
				}
				first = err
			}
			errs <- first
		}()
	}
	for range o.c {
		if err := <-errs; err != nil {
			return err
		}
	}
	sent := time.Since(t0)
	if err := e.waitCompleted(ctx, store.DefaultTenant, "onboarding", n, 10*time.Minute); err != nil {
		return err
	}
	var last time.Time
	for _, id := range ids {
		r, err := e.st.GetRun(ctx, store.DefaultTenant, id)
		if err != nil {
			return err
		}
		if r.CompletedAt != nil && r.CompletedAt.After(last) {
			last = *r.CompletedAt
		}
	}
	pgSec, hostSec := pgCPUDelta(pg0, e.pgCPU()), selfCPU()-cpu0
	elapsed := last.Sub(t0)
	// What each signal cost the engine: its statements (the waits for completion polled too,
	// about ten a second), the claims that took the woken runs, and the parked passes evicted
	// (their runs replayed) while the signals came.
	claims, evicted := e.metric("wfhost_store_claim_batch_size")-claims0, e.metric("wfhost_park_evictions_total")-evicted0
	fmt.Printf("%s n=%d c=%d signal_calls_per_s=%.0f delivered_per_s=%.0f elapsed=%.2fs host_ms_per_signal=%.3f%s statements_per_signal=%.2f claims_per_signal=%.3f evicted=%.0f\n",
		e.result("signals"), n, o.c, float64(n)/sent.Seconds(), float64(n)/elapsed.Seconds(), elapsed.Seconds(),
		hostSec*1000/float64(n), e.pgField("pg_ms_per_signal", pgSec*1000/float64(n)),
		float64(e.tx.n.Load()-tx0)/float64(n), claims/float64(n), evicted)
	return nil
}

// scaleNeighbour: tenant B runs one 10-step workflow at a time, start to result, alone; then
// again while tenant A's backlog of 10-step runs (started by c callers as fast as they go)
// drains. B's second phase ends when its runs are done or A's backlog is, whichever is first:
// a_left says how much of the backlog was still there.
func scaleNeighbour(ctx context.Context, o options, wasm []byte) error {
	const a, b = "tenant-a", "tenant-b"
	e, err := newScaleEnv(ctx, o, wasm, scaleLimits(0), 0, a, b)
	if err != nil {
		return err
	}
	defer e.close(ctx)
	input := `{"n":10}`
	phase := func(stop func() bool) ([]time.Duration, error) {
		var lats []time.Duration
		for range o.scale.neighbourN {
			if stop != nil && stop() {
				break
			}
			t0 := time.Now()
			if _, err := e.oneRun(ctx, b, input); err != nil {
				return nil, err
			}
			lats = append(lats, time.Since(t0))
		}
		slices.Sort(lats)
		return lats, nil
	}
	for range 20 {
		if _, err := e.oneRun(ctx, b, input); err != nil {
			return err
		}
	}
	alone, err := phase(nil)
	if err != nil {
		return err
	}
	startErr := make(chan error, 1)
	go func() {
		_, err := e.startMany(ctx, a, "steps", o.scale.backlog, o.c, func(int) string { return input })
		startErr <- err
	}()
	// Let the backlog build before B's first run.
	for {
		c, err := e.counts(ctx, a, "steps")
		if err != nil {
			return err
		}
		if c[store.StatusPending]+c[store.StatusRunning]+c[store.StatusCompleted] >= min(o.scale.backlog, 1000) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	aDone := func() bool {
		c, err := e.counts(ctx, a, "steps")
		return err == nil && c[store.StatusCompleted] >= o.scale.backlog
	}
	c0, err := e.counts(ctx, a, "steps")
	if err != nil {
		return err
	}
	b0 := time.Now()
	busy, err := phase(aDone)
	if err != nil {
		return err
	}
	busyFor := time.Since(b0)
	c, err := e.counts(ctx, a, "steps")
	if err != nil {
		return err
	}
	aLeft := o.scale.backlog - c[store.StatusCompleted]
	// What fairness costs the busy tenant: its runs completed per second while B ran.
	aRate := float64(c[store.StatusCompleted]-c0[store.StatusCompleted]) / busyFor.Seconds()
	if err := <-startErr; err != nil {
		return err
	}
	if len(busy) == 0 {
		return fmt.Errorf("tenant A's backlog drained before tenant B's first run: raise -scale-backlog")
	}
	fmt.Printf("%s backlog=%d n_alone=%d n_busy=%d a_left=%d alone_p50_ms=%.2f alone_p99_ms=%.2f busy_p50_ms=%.2f busy_p99_ms=%.2f p99_ratio=%.1f a_wf_per_s=%.0f\n",
		e.result("neighbour"), o.scale.backlog, len(alone), len(busy), aLeft,
		ms(pct(alone, .5)), ms(pct(alone, .99)), ms(pct(busy, .5)), ms(pct(busy, .99)),
		float64(pct(busy, .99))/float64(pct(alone, .99)), aRate)
	// Do not leave A's backlog to the next scenario's clock: it has its own store, but not its
	// own CPU.
	return e.waitCompleted(ctx, a, "steps", o.scale.backlog, 30*time.Minute)
}

// scaleSleeping: N runs of steps {"n":2} whose sleep lasts 12 hours, started by c callers
// (each start runs the first step and suspends the run at its sleep); then, with nothing
// due: the process's RSS, the store's claim of 32 timed directly (it finds nothing due,
// among N sleeping rows), and the statements per second the idle engine sends (Postgres).
func scaleSleeping(ctx context.Context, o options, wasm []byte) error {
	n := o.scale.sleeping
	e, err := newScaleEnv(ctx, o, wasm, scaleLimits(0), 0)
	if err != nil {
		return err
	}
	defer e.close(ctx)
	// The heap earlier scenarios left behind goes back to the system first, so the RSS
	// figures are this scenario's.
	debug.FreeOSMemory()
	rss0 := rssMB()
	t0 := time.Now()
	const input = `{"n":2,"sleepMs":43200000}`
	if _, err := e.startMany(ctx, store.DefaultTenant, "steps", n, o.c, func(int) string { return input }); err != nil {
		return err
	}
	if err := e.waitAsleep(ctx, time.Now().Add(time.Hour), 30*time.Minute); err != nil {
		return err
	}
	created := time.Since(t0)
	time.Sleep(time.Second) // the last activations' instances go back to the pool
	debug.FreeOSMemory()
	var claims []time.Duration
	for range o.scale.claimProbes {
		c0 := time.Now()
		got, err := e.st.ClaimRuns(ctx, store.ClaimParams{Owner: "wfbench-probe", Limit: 32, LeaseFor: time.Minute})
		if err != nil {
			return err
		}
		if len(got) > 0 {
			return fmt.Errorf("the claim probe took %d runs: none should be due", len(got))
		}
		claims = append(claims, time.Since(c0))
	}
	slices.Sort(claims)
	tx0, i0 := e.tx.n.Load(), time.Now()
	time.Sleep(o.scale.idleWindow)
	idle := float64(e.tx.n.Load()-tx0) / time.Since(i0).Seconds()
	line := fmt.Sprintf("%s n=%d c=%d create_s=%.1f runs_per_s=%.0f rss_before_mb=%.0f rss_mb=%.0f claim32_ms=%.2f",
		e.result("sleeping"), n, o.c, created.Seconds(), float64(n)/created.Seconds(), rss0, rssMB(), ms(claims[len(claims)/2]))
	if o.store == "postgres" {
		line += fmt.Sprintf(" idle_xact_per_s=%.2f", idle)
	}
	fmt.Println(line)
	return nil
}

// scaleRecovery: a run whose host died with a journal of E entries (steps only), taken up by
// a fresh engine with a cold runtime. The run is a steps run of E+2 steps whose first engine
// runs it on a store that fails the commit of entry E, as a host dying there would: the pass
// faults and hands the run back, its journal holding entries 0..E-1 and, with snapshots on, the
// latest snapshot (at most -snapshot-every entries back). The figures are of a fresh engine
// from its start to the run's completion: the claim, the restore of the snapshot or the replay
// of the whole journal, and the two new steps; cold_* is the same for a fresh engine whose first
// run is a new 1-step run (the cost of a cold start without the recovery), and
// recovery_host_cpu_ms the difference. In-process: the dead host is a failed commit, not a
// process (the SIGKILL end-to-end tests kill real daemons).
func scaleRecovery(ctx context.Context, o options, wasm []byte) error {
	entries := o.scale.recovery
	const leaseFor = 2 * time.Second
	e, err := newScaleEnv(ctx, o, wasm, scaleLimits(entries+2), leaseFor)
	if err != nil {
		return err
	}
	defer e.close(ctx)
	e.eng.Stop()
	e.rt.Close(ctx)
	e.eng, e.rt = nil, nil

	real := e.st
	dies := &failAtEntry{Store: real, seq: entries, failed: make(chan struct{})}
	e.st = dies
	rt, eng, err := e.newEngine(ctx, leaseFor)
	if err != nil {
		return err
	}
	run, _, err := eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, entries+2))})
	if err != nil {
		return err
	}
	select {
	case <-dies.failed:
	case <-time.After(10 * time.Minute):
		return fmt.Errorf("the run never reached entry %d", entries)
	}
	eng.Stop()
	rt.Close(ctx)
	e.st = real
	journal, err := real.ListSteps(ctx, store.DefaultTenant, run.ID)
	if err != nil {
		return err
	}
	if len(journal) != entries {
		return fmt.Errorf("the dead host left %d entries, not %d", len(journal), entries)
	}
	time.Sleep(time.Second) // the fault's backoff

	measure := func(runID string, start func(*engine.Engine) (string, error)) (wall, cpu float64, err error) {
		cpu0, t0 := selfCPU(), time.Now()
		rt, eng, err := e.newEngine(ctx, leaseFor)
		if err != nil {
			return 0, 0, err
		}
		defer rt.Close(ctx)
		defer eng.Stop()
		if start != nil {
			if runID, err = start(eng); err != nil {
				return 0, 0, err
			}
		}
		done, err := eng.AwaitRun(ctx, store.DefaultTenant, runID)
		if err != nil {
			return 0, 0, err
		}
		if done.Status != store.StatusCompleted {
			return 0, 0, fmt.Errorf("run %s ended %s: %+v", done.ID, done.Status, done.Error)
		}
		return time.Since(t0).Seconds() * 1000, (selfCPU() - cpu0) * 1000, nil
	}
	wall, cpu, err := measure(run.ID, nil)
	if err != nil {
		return err
	}
	coldWall, coldCPU, err := measure("", func(eng *engine.Engine) (string, error) {
		r, err := eng.StartAndAwait(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: json.RawMessage(`{"n":1}`)})
		return r.ID, err
	})
	if err != nil {
		return err
	}
	snapshots, err := o.snapshotConfig()
	if err != nil {
		return err
	}
	fmt.Printf("%s entries=%d snapshots=%t wall_ms=%.1f host_cpu_ms=%.1f cold_wall_ms=%.1f cold_host_cpu_ms=%.1f recovery_host_cpu_ms=%.1f\n",
		e.result("recovery"), len(journal), snapshots.WasmOpt != "", wall, cpu, coldWall, coldCPU, cpu-coldCPU)
	return nil
}

// failAtEntry is a store whose commit of journal entry seq fails, once, as a host dying just
// before it would: the pass faults and hands its run back.
type failAtEntry struct {
	store.Store
	seq    int
	once   sync.Once
	failed chan struct{}
}

func (f *failAtEntry) dies(seq int) error {
	if seq != f.seq {
		return nil
	}
	f.once.Do(func() { close(f.failed) })
	return fmt.Errorf("%w: the host died before entry %d", store.ErrUnavailable, seq)
}

func (f *failAtEntry) CommitStep(ctx context.Context, l store.Lease, s store.Step, leaseFor time.Duration) error {
	if err := f.dies(s.Seq); err != nil {
		return err
	}
	return f.Store.CommitStep(ctx, l, s, leaseFor)
}

func (f *failAtEntry) SaveSnapshot(ctx context.Context, l store.Lease, held *store.Step, snap store.Snapshot, leaseFor time.Duration) error {
	if held != nil {
		if err := f.dies(held.Seq); err != nil {
			return err
		}
	}
	return f.Store.SaveSnapshot(ctx, l, held, snap, leaseFor)
}
