package wftest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
)

// Options is what a Harness needs besides a scenario.
type Options struct {
	// Runtime compiles the module once for every variant; required.
	Runtime *host.Runtime
	// Module is the .wasm file the scenarios run on; required.
	Module []byte
	// TempDir holds each variant's store, removed after it; default os.TempDir().
	TempDir string
	// Timeout bounds one variant in real time; default 2 minutes. A variant that has not
	// ended by then fails: a run stuck for good looks like this.
	Timeout time.Duration
	// NoCrashes skips the crash variants (a quick run).
	NoCrashes bool
	// Logger receives the engines' logs; default: discarded.
	Logger *slog.Logger
}

// start is where every variant's virtual clock begins: a fixed time, so two runs of a
// scenario see the same times.
var start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// Ending is how a variant's run ended: what every variant must agree on.
type Ending struct {
	Status  store.RunStatus `json:"status"`
	Output  json.RawMessage `json:"output,omitempty"`
	Error   string          `json:"error,omitempty"`
	Message string          `json:"message,omitempty"`
	Journal []string        `json:"journal"`
}

func (e Ending) same(o Ending) bool {
	return e.Status == o.Status && sameJSON(e.Output, o.Output) && e.Error == o.Error && slices.Equal(e.Journal, o.Journal)
}

// Variant is one run of a scenario and how it went.
type Variant struct {
	Name   string  `json:"name"`
	Ending *Ending `json:"ending,omitempty"`
	// Problem says why the variant failed; "" when it passed.
	Problem string `json:"problem,omitempty"`
	// Writes is how many store writes the variant's engines made (the baseline's sets how
	// many crash variants there are).
	Writes int64 `json:"writes"`
	// VirtualTime is how far the variant's clock moved.
	VirtualTime string `json:"virtualTime"`
}

// Result is a scenario's outcome: its baseline against the expectation, and every variant
// against the baseline.
type Result struct {
	Scenario string    `json:"scenario"`
	Passed   bool      `json:"passed"`
	Variants []Variant `json:"variants"`
	Elapsed  string    `json:"elapsed"`
}

// Failed is how many variants failed.
func (r *Result) Failed() int {
	n := 0
	for _, v := range r.Variants {
		if v.Problem != "" {
			n++
		}
	}
	return n
}

// Run runs the scenario's baseline, checks it against the expectation, then runs every
// variant and checks each ends as the baseline did.
func Run(ctx context.Context, opts Options, sc *Scenario) (*Result, error) {
	if opts.Runtime == nil || len(opts.Module) == 0 {
		return nil, errors.New("wftest: a runtime and a module are required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	began := time.Now()
	res := &Result{Scenario: sc.Name}
	base, err := runVariant(ctx, opts, sc, plan{name: "baseline"})
	if err != nil {
		return nil, err
	}
	if base.Problem == "" {
		base.Problem = sc.Expect.mismatch(*base.Ending)
	}
	res.Variants = append(res.Variants, *base)
	if base.Problem == "" {
		plans := []plan{{name: "duplicated events", events: duplicated}, {name: "early events", events: early}, {name: "late events", events: late}}
		if len(sc.Events) == 0 {
			plans = nil
		}
		if !opts.NoCrashes {
			for n := int64(1); n <= base.Writes; n++ {
				plans = append(plans, plan{name: fmt.Sprintf("crash before write %d", n), crashAt: n},
					plan{name: fmt.Sprintf("crash after write %d (reply lost)", n), crashAt: n, afterCommit: true})
			}
		}
		for _, p := range plans {
			v, err := runVariant(ctx, opts, sc, p)
			if err != nil {
				return nil, err
			}
			if v.Problem == "" && !v.Ending.same(*base.Ending) {
				v.Problem = fmt.Sprintf("ended %s, the baseline %s", v.Ending, base.Ending)
			}
			res.Variants = append(res.Variants, *v)
		}
	}
	res.Passed = res.Failed() == 0
	res.Elapsed = time.Since(began).Round(time.Millisecond).String()
	return res, nil
}

func (e *Ending) String() string {
	s := string(e.Status)
	if len(e.Output) > 0 {
		s += " " + compact(e.Output)
	}
	if e.Error != "" {
		s += " " + e.Error + ": " + e.Message
	}
	return fmt.Sprintf("%s, journal %q", s, e.Journal)
}

// mismatch says how the baseline's ending differs from what the scenario expects; "": not.
func (x Expect) mismatch(e Ending) string {
	switch {
	case e.Status != x.Status:
		return fmt.Sprintf("ended %s, want %s", &e, x.Status)
	case len(x.Output) > 0 && !sameJSON(x.Output, e.Output):
		return fmt.Sprintf("output %s, want %s", compact(e.Output), compact(x.Output))
	case x.Error != "" && e.Error != x.Error:
		return fmt.Sprintf("error %q (%s), want %q", e.Error, e.Message, x.Error)
	case x.Journal != nil && !slices.Equal(x.Journal, e.Journal):
		return fmt.Sprintf("journal %q, want %q", e.Journal, x.Journal)
	}
	return ""
}

// eventMode is how a variant delivers the scenario's events.
type eventMode int

const (
	// onTime: when the clock reaches the event's time and the run has settled there.
	onTime eventMode = iota
	// duplicated: as onTime, each sent twice with the same signal id.
	duplicated
	// early: the moment the clock reaches its time, racing what comes due there.
	early
	// late: after its time, in virtual time: the clock moves on past the event's time (half
	// way to what comes due next, at most an hour) before the event is sent, as a sender that
	// is slow or was down would deliver it.
	late
)

// plan is one variant: how events arrive and which write crashes.
type plan struct {
	name   string
	events eventMode
	// crashAt is the store write (1-based, counting the engines' writes) that fails; 0: none.
	crashAt     int64
	afterCommit bool
}

// errCrash is the injected fault: the store unreachable, as a crashed connection or host is.
var errCrash = fmt.Errorf("%w: injected crash (wfhost test)", store.ErrUnavailable)

// faults counts the engines' store writes and fails the plan's one. Writes the harness makes
// itself (the start, signals, secrets) are not counted: they are the scenario, not the run.
type faults struct {
	p       plan
	writes  atomic.Int64
	own     atomic.Int32
	crashed atomic.Bool
}

func (f *faults) hook(_ string, committed bool) error {
	if f.own.Load() > 0 {
		return nil
	}
	if !committed {
		n := f.writes.Add(1)
		if n == f.p.crashAt && !f.p.afterCommit {
			f.crashed.Store(true)
			return errCrash
		}
		return nil
	}
	if f.writes.Load() == f.p.crashAt && f.p.afterCommit && f.crashed.CompareAndSwap(false, true) {
		return errCrash
	}
	return nil
}

// mine runs fn as one of the harness's own writes.
func (f *faults) mine(fn func() error) error {
	f.own.Add(1)
	defer f.own.Add(-1)
	return fn()
}

// variant is one variant's world: its store, clock and engine.
type variant struct {
	opts   Options
	sc     *Scenario
	p      plan
	clk    *clock.Fake
	st     *embedded.Store
	f      *faults
	keys   *envelope.Keyring
	mu     sync.Mutex
	eng    *engine.Engine
	runID  string
	engCfg engine.Config
	// owner is the live engine's name in leases: a new one for the engine that takes over
	// after a crash, so a lease the crashed one left is told from one a live activation holds.
	owner       string
	generations int
}

func runVariant(ctx context.Context, opts Options, sc *Scenario, p plan) (*Variant, error) {
	dir, err := os.MkdirTemp(opts.TempDir, "wftest-")
	if err != nil {
		return nil, fmt.Errorf("wftest: %w", err)
	}
	defer os.RemoveAll(dir)
	v := &variant{opts: opts, sc: sc, p: p, clk: clock.NewFake(start), f: &faults{p: p}}
	v.st, err = embedded.Open(ctx, embedded.Config{Dir: dir, Clock: v.clk, Faults: v.f.hook})
	if err != nil {
		return nil, fmt.Errorf("wftest: %w", err)
	}
	defer v.st.Close()
	entry, err := envelope.NewEntry("wftest")
	if err != nil {
		return nil, err
	}
	if v.keys, err = envelope.Parse(entry); err != nil {
		return nil, err
	}
	out := &Variant{Name: p.name}
	ending, problem := v.run(ctx)
	out.Ending, out.Problem = ending, problem
	out.Writes = v.f.writes.Load()
	out.VirtualTime = v.clk.Now().Sub(start).String()
	return out, nil
}

// newEngine starts an engine on the variant's store: at the start, and after a crash (a
// fresh process on the same database).
func (v *variant) newEngine(ctx context.Context) error {
	v.generations++
	owner := fmt.Sprintf("wftest-%d", v.generations)
	eng, err := engine.New(engine.Config{
		Owner: owner,
		Store: v.st, Runtime: v.opts.Runtime, Logger: v.opts.Logger, Clock: v.clk, Rand: clock.Seeded(1),
		SecretKeys: v.keys, HTTPTransport: fakeTransport(v.sc.HTTP),
		// A minute's lease: heartbeats tick only while an activation runs, and the clock is
		// moved only when none does, so a 30-day sleep costs no heartbeat. A crash whose
		// lease outlives it costs a minute of virtual time.
		LeaseFor: time.Minute,
		// The safety polls and sweeps are for work no notice announced; on one embedded store
		// every write announces itself, and a tick per 10 s over 30 days is 260,000 ticks.
		PollInterval: 24 * time.Hour, SweepInterval: 24 * time.Hour, SchedulePoll: 24 * time.Hour,
		ShutdownGrace: 5 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("wftest: %w", err)
	}
	if err := eng.Start(ctx); err != nil {
		return fmt.Errorf("wftest: %w", err)
	}
	v.mu.Lock()
	v.eng, v.owner = eng, owner
	v.mu.Unlock()
	return nil
}

// run plays the scenario; it returns the run's ending, or a problem.
func (v *variant) run(ctx context.Context) (*Ending, string) {
	ctx, cancel := context.WithTimeout(ctx, v.opts.Timeout)
	defer cancel()
	if err := v.f.mine(func() error { return v.st.EnsureTenant(ctx, store.DefaultTenant) }); err != nil {
		return nil, err.Error()
	}
	if err := v.newEngine(ctx); err != nil {
		return nil, err.Error()
	}
	defer func() { v.eng.Stop() }()
	err := v.f.mine(func() error {
		if _, err := v.eng.Deploy(ctx, store.DefaultTenant, v.opts.Module, false); err != nil {
			return fmt.Errorf("deploy the module: %w", err)
		}
		if len(v.sc.HTTP) > 0 {
			limits, err := v.eng.Limits(ctx, store.DefaultTenant)
			if err != nil {
				return err
			}
			limits.AllowedHosts = fakeHosts(v.sc.HTTP)
			if _, err := v.eng.SetTenantLimits(ctx, store.DefaultTenant, limits); err != nil {
				return fmt.Errorf("allow the fakes' hosts: %w", err)
			}
		}
		for name, value := range v.sc.Secrets {
			if _, err := v.eng.PutSecret(ctx, store.DefaultTenant, name, []byte(value)); err != nil {
				return fmt.Errorf("secret %s: %w", name, err)
			}
		}
		run, _, err := v.eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: v.sc.Workflow, Version: v.sc.Version, Input: v.sc.Input})
		if err != nil {
			return fmt.Errorf("start %s: %w", v.sc.Workflow, err)
		}
		v.runID = run.ID
		return nil
	})
	if err != nil {
		return nil, err.Error()
	}
	next := 0     // the next event to send
	delayed := -1 // late: the last event the clock has been moved past before sending
	restarted := false
	var lastChange time.Time
	var lastSeen string
	var leaseReadFor string // the state whose lease was read: liveLease says if the live engine held it
	var liveLease bool
	for {
		if ctx.Err() != nil {
			return nil, fmt.Sprintf("the run had not ended after %v of real time (virtual clock at +%v; %s)", v.opts.Timeout, v.clk.Now().Sub(start), v.where(start))
		}
		if v.f.crashed.Load() && !restarted {
			// The process that saw the crash is gone; a fresh one takes over the database.
			restarted = true
			v.eng.Stop()
			if err := v.newEngine(ctx); err != nil {
				return nil, err.Error()
			}
		}
		run, err := v.st.GetRun(ctx, store.DefaultTenant, v.runID)
		if err != nil {
			return nil, err.Error()
		}
		if run.Status.Terminal() || run.Status == store.StatusNondeterministic {
			return v.ending(ctx, run)
		}
		steps, err := v.st.ListSteps(ctx, store.DefaultTenant, v.runID)
		if err != nil {
			return nil, err.Error()
		}
		// The run settled when nothing about it changed for a while of real time: the engine
		// has done what is due now, and only the clock or an event moves it on.
		seen := fmt.Sprintf("%s %d %v %d %v", run.Status, run.Activations, run.AvailableAt, len(steps), run.UpdatedAt)
		if len(steps) > 0 {
			last := steps[len(steps)-1]
			seen += fmt.Sprintf(" %s %s %d", last.Key, last.Status, last.Attempt)
		}
		now := time.Now()
		if seen != lastSeen {
			lastSeen, lastChange = seen, now
		}
		settle := 60 * time.Millisecond
		if v.p.events == late {
			settle = 200 * time.Millisecond
		}
		if now.Sub(lastChange) < settle {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		vnow := v.clk.Now()
		var eventAt time.Time
		if next < len(v.sc.Events) {
			eventAt = start.Add(time.Duration(v.sc.Events[next].At))
		}
		if next < len(v.sc.Events) && !eventAt.After(vnow) {
			if v.p.events == late && delayed < next {
				delayed = next
				if later := v.lateTime(run, steps, vnow, start, next); later.After(vnow) {
					v.clk.Set(later)
					lastSeen = ""
					continue
				}
			}
			if err := v.send(ctx, next); err != nil {
				return nil, err.Error()
			}
			next++
			lastSeen = ""
			continue
		}
		// What comes due next: the run's own wake-up, or the next event. A run whose journal
		// does not end at a timer (a sleep, a wait, a retry's backoff) and that is due later
		// is held by a lease: an activation slower than the settling time, or one a crash
		// left behind. The clock moves to the lease's end only once the run has stood still
		// for longer, so that a slow activation never sees its lease run out under it: much
		// longer when the live engine holds the lease, whose activation is only slow (the
		// first activation of a module under -race on a loaded machine took more than
		// leaseStall, and the jump cost the scenario a minute of virtual time).
		wake := time.Time{}
		if run.AvailableAt != nil && run.AvailableAt.After(vnow) {
			wake = *run.AvailableAt
			if !atTimer(steps) {
				if leaseReadFor != lastSeen {
					// Read once per state the run stands still in, not at every look.
					owner, _, err := v.st.RunLease(ctx, store.DefaultTenant, v.runID)
					leaseReadFor, liveLease = lastSeen, err == nil && owner == v.liveOwner()
				}
				stall := leaseStall
				if liveLease {
					stall = liveLeaseStall
				}
				if now.Sub(lastChange) < stall {
					time.Sleep(5 * time.Millisecond)
					continue
				}
			}
		}
		if !eventAt.IsZero() && (wake.IsZero() || eventAt.Before(wake)) {
			wake = eventAt
			if v.p.events == early {
				// Sent as the clock gets there, before the run has done what is due then.
				v.clk.Set(wake)
				if err := v.send(ctx, next); err != nil {
					return nil, err.Error()
				}
				next++
				lastSeen = ""
				continue
			}
		}
		switch {
		case !wake.IsZero():
			v.clk.Set(wake)
		case run.AvailableAt != nil || run.Status == store.StatusPending:
			// Due, yet nothing moved: the engine waits on a timer of its own (a claim tried
			// again, a crashed host's lease running out, a fault's backoff). The clock moves
			// a second at a time after the settling time: a wait of minutes (a crash variant's
			// backoff) is hundreds of moves, so a longer stall here (400 ms, tried at stop 34)
			// ran such a variant past its two minutes of real time.
			v.clk.Advance(time.Second)
		default:
			return nil, fmt.Sprintf("the run waits for an event the scenario does not send (virtual clock at +%v, journal %q)", vnow.Sub(start), keys(steps))
		}
		lastSeen = ""
	}
}

// where says where a run that did not end stands, for the problem that reports it: its status,
// when it is due, who leases it, and its journal's last entries. The store is read afresh (the
// variant's context has run out).
func (v *variant) where(start time.Time) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	run, err := v.st.GetRun(ctx, store.DefaultTenant, v.runID)
	if err != nil {
		return "run unread: " + err.Error()
	}
	due := "never (waits for an event)"
	if run.AvailableAt != nil {
		due = "+" + run.AvailableAt.Sub(start).String()
	}
	owner, _, _ := v.st.RunLease(ctx, store.DefaultTenant, v.runID)
	steps, _ := v.st.ListSteps(ctx, store.DefaultTenant, v.runID)
	var tail []string
	for _, st := range steps[max(len(steps)-3, 0):] {
		tail = append(tail, fmt.Sprintf("%s %s attempt %d", st.Key, st.Status, st.Attempt))
	}
	return fmt.Sprintf("run %s %s, due %s, leased by %q (the live engine is %q), journal ends %q", run.ID, run.Status, due, owner, v.liveOwner(), tail)
}

// lateTime is when the late variant sends event i, which fell due at vnow or before: half way
// from vnow to what comes due next (the run's own timer, or the next event), and at most an
// hour on. A run that is due now, or held by a lease rather than suspended on a timer, gets
// its event at vnow: moving the clock under an activation would run its lease out.
func (v *variant) lateTime(run store.Run, steps []store.Step, vnow, start time.Time, i int) time.Time {
	later := vnow.Add(time.Hour)
	if run.AvailableAt != nil {
		if !run.AvailableAt.After(vnow) || !atTimer(steps) {
			return vnow
		}
		if half := vnow.Add(run.AvailableAt.Sub(vnow) / 2); half.Before(later) {
			later = half
		}
	}
	if i+1 < len(v.sc.Events) {
		nextAt := start.Add(time.Duration(v.sc.Events[i+1].At))
		if !nextAt.After(vnow) {
			return vnow
		}
		if half := vnow.Add(nextAt.Sub(vnow) / 2); half.Before(later) {
			later = half
		}
	}
	return later
}

// leaseStall is how long a leased run must stand still before the clock is moved to its
// lease's end; liveLeaseStall, when the live engine holds the lease (its activation is slow,
// not gone).
const (
	leaseStall     = 400 * time.Millisecond
	liveLeaseStall = 20 * time.Second
)

// liveOwner is the live engine's name in leases.
func (v *variant) liveOwner() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.owner
}

// atTimer says whether the journal ends at a timer the run is suspended on.
func atTimer(steps []store.Step) bool {
	if len(steps) == 0 {
		return false
	}
	switch steps[len(steps)-1].Status {
	case store.StepSleeping, store.StepWaiting, store.StepRetrying:
		return true
	}
	return false
}

// send delivers event i as the plan says.
func (v *variant) send(ctx context.Context, i int) error {
	ev := v.sc.Events[i]
	req := engine.SignalRequest{RunID: v.runID, Event: ev.Name, Payload: ev.Payload, SignalID: fmt.Sprintf("wftest-%d", i)}
	if len(req.Payload) == 0 {
		req.Payload = json.RawMessage(`null`)
	}
	times := 1
	if v.p.events == duplicated {
		times = 2
	}
	for range times {
		if err := v.f.mine(func() error {
			_, err := v.eng.Signal(ctx, store.DefaultTenant, req)
			return err
		}); err != nil {
			return fmt.Errorf("events[%d] %s: %w", i, ev.Name, err)
		}
	}
	return nil
}

func (v *variant) ending(ctx context.Context, run store.Run) (*Ending, string) {
	steps, err := v.st.ListSteps(ctx, store.DefaultTenant, v.runID)
	if err != nil {
		return nil, err.Error()
	}
	e := &Ending{Status: run.Status, Output: run.Output, Journal: keys(steps)}
	if run.Error != nil {
		e.Error, e.Message = run.Error.Code, run.Error.Message
	}
	return e, ""
}

func keys(steps []store.Step) []string {
	out := make([]string, 0, len(steps))
	for _, s := range steps {
		out = append(out, s.Key)
	}
	return out
}

func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func compact(b json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
