package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// Schedules start runs of a workflow at the fire times of a cron expression or a fixed
// interval. The store keeps each schedule and where it stands; every host's scheduler loop
// looks for due ones and handles one fire time at a time. Two things make a fire time start
// one run however many hosts handle it at once: the run's idempotency key is the schedule and
// the fire time (scheduleKey), so the store makes one run and hands the others that run; and
// the schedule's state moves on only from the state a host read (store.AdvanceSchedule), so
// one host writes each step and the others find it done.

// Schedule bounds. A fire time is at least a second after the one before (the cron grammar's
// finest field is the second; an interval is at least a second): the loop is no busy poller.
const (
	maxScheduleIDBytes     = 100
	maxCronBytes           = 200
	maxTimeZoneBytes       = 64
	minIntervalMs          = 1000
	maxIntervalMs          = int64(366 * 24 * time.Hour / time.Millisecond)
	maxJitterMs            = int64(time.Hour / time.Millisecond)
	minCatchupWindowMs     = 1000
	maxCatchupWindowMs     = int64(7 * 24 * time.Hour / time.Millisecond)
	defaultCatchupWindowMs = int64(time.Minute / time.Millisecond)
	// MaxNextFireTimes is the most fire times NextFireTimes lists.
	MaxNextFireTimes = 100
	// scheduleBatch is the most schedules one pass of the loop reads.
	scheduleBatch = 100
)

// DefaultSchedulePoll is Config.SchedulePoll's default.
const DefaultSchedulePoll = 10 * time.Second

// scheduleIDPattern keeps a schedule id fit for a URL path and an idempotency key.
var scheduleIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// cronParser reads five fields (minute to day of week) or six (a second first), and the
// descriptors (@daily, ...) but not @every: an interval is IntervalMs, aligned to the epoch.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// fireTimes computes a schedule's fire times. Safe for concurrent use.
type fireTimes interface {
	// after is the first fire time strictly after t, zero when there is none.
	after(t time.Time) time.Time
}

type cronTimes struct{ spec *cron.SpecSchedule }

func (c cronTimes) after(t time.Time) time.Time {
	next := c.spec.Next(t)
	if next.IsZero() {
		return next
	}
	return next.UTC()
}

// intervalTimes fire at the multiples of every since the Unix epoch, so every host, and a
// host restarted, computes the same times with nothing but the interval.
type intervalTimes struct{ everyMs int64 }

func (i intervalTimes) after(t time.Time) time.Time {
	return time.UnixMilli((t.UnixMilli()/i.everyMs + 1) * i.everyMs).UTC()
}

// parseFireTimes reads a schedule's spec: a cron expression in tz, or an interval.
func parseFireTimes(cronExpr, tz string, intervalMs int64) (fireTimes, error) {
	switch {
	case cronExpr != "" && intervalMs != 0:
		return nil, invalid("schedule", "takes a cron expression or an intervalMs, not both")
	case intervalMs != 0:
		if tz != "" {
			return nil, invalid("timeZone", "applies to a cron expression only (an interval is the same in every zone)")
		}
		if intervalMs < minIntervalMs || intervalMs > maxIntervalMs {
			return nil, invalid("intervalMs", "must be from %d to %d, not %d", minIntervalMs, maxIntervalMs, intervalMs)
		}
		return intervalTimes{everyMs: intervalMs}, nil
	case cronExpr == "":
		return nil, invalid("schedule", "needs a cron expression or an intervalMs")
	}
	if err := checkText("cron", cronExpr, maxCronBytes); err != nil {
		return nil, err
	}
	if err := checkText("timeZone", tz, maxTimeZoneBytes); err != nil {
		return nil, err
	}
	if f := strings.Fields(cronExpr); len(f) > 0 && (strings.Contains(f[0], "TZ=") || strings.HasPrefix(f[0], "@every")) {
		return nil, invalid("cron", "%q: give the time zone as timeZone and an interval as intervalMs", cronExpr)
	}
	loc, err := loadLocation(tz)
	if err != nil {
		return nil, err
	}
	parsed, err := cronParser.Parse(cronExpr)
	if err != nil {
		return nil, invalid("cron", "%q: %v", cronExpr, err)
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, invalid("cron", "%q is not a cron expression", cronExpr)
	}
	spec.Location = loc
	return cronTimes{spec: spec}, nil
}

// loadLocation reads an IANA time zone name; "" is UTC. "Local" is refused: it is whatever
// zone each host runs in, and hosts must agree on fire times.
func loadLocation(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if tz == "Local" {
		return nil, invalid("timeZone", `"Local" differs from host to host; name the zone (such as "Europe/Paris")`)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, invalid("timeZone", "%q is not an IANA time zone name", tz)
	}
	return loc, nil
}

// jitter is how long after fireAt the schedule's run starts: a fixed share of jitterMs that
// the schedule and the fire time choose, so every host computes the same due time.
func jitter(tenantID, id string, fireAt time.Time, jitterMs int64) time.Duration {
	if jitterMs <= 0 {
		return 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%d", tenantID, id, fireAt.UnixMilli())
	return time.Duration(h.Sum64()%uint64(jitterMs)) * time.Millisecond
}

// dueAt is when a schedule's run for fireAt starts.
func dueAt(sc store.Schedule, fireAt time.Time) time.Time {
	return fireAt.Add(jitter(sc.TenantID, sc.ID, fireAt, sc.JitterMs))
}

// scheduleKey is the idempotency key of the run a schedule starts for fireAt: the same on
// every host, so the store makes one run per fire time.
func scheduleKey(id string, fireAt time.Time) string {
	return "schedule:" + id + "@" + fireAt.UTC().Format("2006-01-02T15:04:05.000Z")
}

// CheckScheduleID checks a schedule id a client named: 1 to 100 letters, digits, '.', '_' or
// '-', starting with a letter or digit (it goes in URL paths and in idempotency keys).
func CheckScheduleID(id string) error {
	if len(id) > maxScheduleIDBytes || !scheduleIDPattern.MatchString(id) {
		return invalid("schedule id", "%q must be 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit", truncate(id, 40), maxScheduleIDBytes)
	}
	return nil
}

// truncate shortens what a message quotes of a client's string.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ScheduleRequest asks for a new schedule.
type ScheduleRequest struct {
	ID string
	// Cron (five fields, or six with a second first, or a descriptor such as @daily) in
	// TimeZone (IANA; "" is UTC), or IntervalMs: exactly one of Cron and IntervalMs.
	Cron       string
	TimeZone   string
	IntervalMs int64
	// Workflow, Version ("" takes the latest at each fire time) and Input of each run.
	Workflow string
	Version  string
	Input    json.RawMessage
	// Overlap is what a fire time does while the last run is live; "" is skip.
	Overlap store.OverlapPolicy
	// CatchupWindowMs: fire times missed by longer than this (every host down) are skipped;
	// 0 takes a minute.
	CatchupWindowMs int64
	// JitterMs delays each start by up to this much (at most an hour).
	JitterMs int64
	Paused   bool
}

// CreateSchedule checks and stores a schedule of the tenant. Its workflow must be deployed,
// and its input must fit the tenant's limits (which apply again to each run it starts).
func (s *Service) CreateSchedule(ctx context.Context, tenantID string, req ScheduleRequest) (store.Schedule, error) {
	fail := func(err error) (store.Schedule, error) {
		return store.Schedule{}, fmt.Errorf("create schedule: %w", err)
	}
	if err := CheckScheduleID(req.ID); err != nil {
		return fail(err)
	}
	times, err := parseFireTimes(req.Cron, req.TimeZone, req.IntervalMs)
	if err != nil {
		return fail(err)
	}
	if err := checkStart(StartRequest{Workflow: req.Workflow, Version: req.Version}); err != nil {
		return fail(err)
	}
	if req.Overlap == "" {
		req.Overlap = store.OverlapSkip
	}
	if !req.Overlap.Valid() {
		return fail(invalid("overlap", "must be skip, buffer_one, allow_all or cancel_previous, not %q", req.Overlap))
	}
	if req.CatchupWindowMs == 0 {
		req.CatchupWindowMs = defaultCatchupWindowMs
	}
	if req.CatchupWindowMs < minCatchupWindowMs || req.CatchupWindowMs > maxCatchupWindowMs {
		return fail(invalid("catchupWindowMs", "must be from %d to %d (0 takes %d), not %d", minCatchupWindowMs, maxCatchupWindowMs, defaultCatchupWindowMs, req.CatchupWindowMs))
	}
	if req.JitterMs < 0 || req.JitterMs > maxJitterMs {
		return fail(invalid("jitterMs", "must be from 0 to %d, not %d", maxJitterMs, req.JitterMs))
	}
	limits, err := s.Limits(ctx, tenantID)
	if err != nil {
		return fail(err)
	}
	input, err := checkInput(req.Input, limits)
	if err != nil {
		return fail(err)
	}
	if _, err := s.cfg.Store.ResolveWorkflow(ctx, tenantID, req.Workflow, req.Version); err != nil {
		return fail(err)
	}
	next := times.after(s.cfg.Clock.Now())
	if next.IsZero() {
		return fail(invalid("cron", "%q never fires", req.Cron))
	}
	sc := store.Schedule{
		TenantID: tenantID, ID: req.ID, Cron: req.Cron, TimeZone: req.TimeZone, IntervalMs: req.IntervalMs,
		Workflow: req.Workflow, Version: req.Version, Input: input, Overlap: req.Overlap,
		CatchupWindowMs: req.CatchupWindowMs, JitterMs: req.JitterMs, Paused: req.Paused, NextFireAt: next,
	}
	sc.DueAt = dueAt(sc, next)
	created, err := s.cfg.Store.CreateSchedule(ctx, sc)
	if err != nil {
		return fail(err)
	}
	s.exec.scheduler.wake()
	return created, nil
}

// PauseSchedule stops a schedule from firing until ResumeSchedule; its state is kept.
func (s *Service) PauseSchedule(ctx context.Context, tenantID, id string) (store.Schedule, error) {
	return s.cfg.Store.SetSchedulePaused(ctx, tenantID, id, true, time.Time{}, time.Time{})
}

// ResumeSchedule lets a paused schedule fire again, from its first fire time after now: the
// fire times it was paused through are not caught up, and a buffered one is dropped.
func (s *Service) ResumeSchedule(ctx context.Context, tenantID, id string) (store.Schedule, error) {
	sc, err := s.cfg.Store.GetSchedule(ctx, tenantID, id)
	if err != nil {
		return store.Schedule{}, err
	}
	times, err := parseFireTimes(sc.Cron, sc.TimeZone, sc.IntervalMs)
	if err != nil {
		return store.Schedule{}, fmt.Errorf("resume schedule %s: %w", id, err)
	}
	next := times.after(s.cfg.Clock.Now())
	sc, err = s.cfg.Store.SetSchedulePaused(ctx, tenantID, id, false, next, dueAt(sc, next))
	if err != nil {
		return store.Schedule{}, err
	}
	s.exec.scheduler.wake()
	return sc, nil
}

// DeleteSchedule removes a schedule; the runs it started are left as they are.
func (s *Service) DeleteSchedule(ctx context.Context, tenantID, id string) error {
	return s.cfg.Store.DeleteSchedule(ctx, tenantID, id)
}

// FireTime is one of a schedule's coming fire times and when its run starts (Due: the fire
// time plus the schedule's jitter).
type FireTime struct {
	At  time.Time
	Due time.Time
}

// NextFireTimes lists a schedule's next n fire times (1 to MaxNextFireTimes): from the next
// one it has not handled, or, paused, from the first after now (where a resume would start).
func (s *Service) NextFireTimes(ctx context.Context, tenantID, id string, n int) ([]FireTime, error) {
	if n < 1 || n > MaxNextFireTimes {
		return nil, invalid("count", "must be from 1 to %d, not %d", MaxNextFireTimes, n)
	}
	sc, err := s.cfg.Store.GetSchedule(ctx, tenantID, id)
	if err != nil {
		return nil, err
	}
	times, err := parseFireTimes(sc.Cron, sc.TimeZone, sc.IntervalMs)
	if err != nil {
		return nil, fmt.Errorf("schedule %s: %w", id, err)
	}
	at := sc.NextFireAt
	if sc.Paused {
		at = times.after(s.cfg.Clock.Now())
	}
	out := make([]FireTime, 0, n)
	for ; len(out) < n && !at.IsZero(); at = times.after(at) {
		out = append(out, FireTime{At: at, Due: dueAt(sc, at)})
	}
	return out, nil
}

// TriggerOutcome is what a fire time did.
type TriggerOutcome string

// Trigger outcomes.
const (
	TriggerStarted  TriggerOutcome = "started"  // a run was started (Run)
	TriggerSkipped  TriggerOutcome = "skipped"  // the last run is live and the policy is skip
	TriggerBuffered TriggerOutcome = "buffered" // kept until the live run ends (buffer_one)
	// TriggerFailed: the start was refused for good (the workflow is gone, the input is past
	// a lowered limit); Schedule.LastError says why.
	TriggerFailed TriggerOutcome = "failed"
	// triggerMissed: the loop's outcome for fire times past the catch-up window.
	triggerMissed TriggerOutcome = "missed"
)

// TriggerResult is what TriggerSchedule did.
type TriggerResult struct {
	Outcome TriggerOutcome
	FireAt  time.Time
	Run     *store.Run // TriggerStarted only
	Note    string     // otherwise, why no run started (Schedule.LastError)
}

// TriggerSchedule fires a schedule now, paused or not, as if now were one of its fire times:
// its overlap policy applies, and its next fire times stay as they were.
func (s *Service) TriggerSchedule(ctx context.Context, tenantID, id string) (TriggerResult, error) {
	fireAt := s.cfg.Clock.Now().UTC().Truncate(time.Millisecond)
	// A loop's advance between the read and the write makes the write stale: read again.
	for range 5 {
		sc, err := s.cfg.Store.GetSchedule(ctx, tenantID, id)
		if err != nil {
			return TriggerResult{}, err
		}
		adv := store.ScheduleAdvance{TenantID: tenantID, ID: id, From: sc.NextFireAt, FromBuffered: sc.BufferedFireAt,
			NextFireAt: sc.NextFireAt, DueAt: sc.DueAt, BufferedFireAt: sc.BufferedFireAt, LastError: sc.LastError}
		outcome, run, err := s.exec.scheduler.fire(ctx, sc, fireAt, &adv)
		if err != nil {
			return TriggerResult{}, fmt.Errorf("trigger schedule %s: %w", id, err)
		}
		done, err := s.cfg.Store.AdvanceSchedule(ctx, adv)
		if err != nil {
			return TriggerResult{}, fmt.Errorf("trigger schedule %s: %w", id, err)
		}
		if done || outcome == TriggerStarted {
			// A started run is started whether or not its record landed.
			res := TriggerResult{Outcome: outcome, FireAt: fireAt, Run: run}
			if run == nil {
				res.Note = adv.LastError
			}
			return res, nil
		}
	}
	return TriggerResult{}, fmt.Errorf("trigger schedule %s: %w: the schedule kept changing; try again", id, store.ErrConflict)
}

// scheduler is the loop that fires due schedules: one of the Executor's loops. It keeps no
// state between passes (the store does), so any number of hosts may run it on one store.
// Safe for concurrent use.
type scheduler struct {
	svc    *Service // set by New: a fire time starts its run as a client's start would
	store  store.Store
	obs    *observer
	log    *slog.Logger
	clock  clock.Clock
	poll   time.Duration
	wakeCh chan struct{}
}

func newScheduler(cfg Config, obs *observer) *scheduler {
	return &scheduler{store: cfg.Store, obs: obs, log: cfg.Logger, clock: cfg.Clock, poll: cfg.SchedulePoll, wakeCh: make(chan struct{}, 1)}
}

// wake makes the loop look again now: a schedule was created or resumed here.
func (sc *scheduler) wake() {
	select {
	case sc.wakeCh <- struct{}{}:
	default:
	}
}

// FireSchedules runs one pass of the scheduler now, whether or not the Executor is started,
// and returns how many schedule steps it took (fire times handled, buffered runs started).
func (x *Executor) FireSchedules(ctx context.Context) int { return x.scheduler.pass(ctx) }

// loop fires due schedules until ctx ends or drain is closed. It asks the store when the next
// schedule is due (one indexed query), fires what is due, and sleeps until the next due time,
// at most poll: a schedule created or resumed on another host is seen within poll, as is a
// buffered fire time whose live run ended. An idle host costs one query per poll.
func (sc *scheduler) loop(ctx context.Context, drain <-chan struct{}) {
	for {
		at, ok, err := sc.store.NextScheduleDue(ctx)
		now := sc.clock.Now()
		next := now.Add(sc.poll)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				sc.log.Warn("schedules: reading the next due time failed", "err", err)
			}
		case !ok:
		case at.After(now):
			next = clock.Earlier(next, at)
		case sc.pass(ctx) > 0:
			next = now // more may be due: catch-up, or a batch that was full
		}
		// Otherwise something is due that the pass could not move (a store error, a buffered
		// fire time whose run is live): it is looked at again after poll.
		t := sc.clock.NewTimerAt(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-drain:
			t.Stop()
			return
		case <-sc.wakeCh:
			t.Stop()
		case <-t.C():
		}
	}
}

// pass handles one step of every due schedule and returns how many it took.
func (sc *scheduler) pass(ctx context.Context) int {
	now := sc.clock.Now()
	due, err := sc.store.DueSchedules(ctx, now, scheduleBatch)
	if err != nil {
		if ctx.Err() == nil {
			sc.log.Error("schedules: reading due schedules failed", "err", err)
		}
		return 0
	}
	steps := 0
	for _, s := range due {
		if ctx.Err() != nil {
			break
		}
		ok, err := sc.step(ctx, s, now)
		if err != nil {
			if ctx.Err() == nil {
				sc.log.Warn("schedules: firing failed; trying again", "tenant", s.TenantID, "schedule", s.ID, "err", err)
			}
			continue
		}
		if ok {
			steps++
		}
	}
	return steps
}

// step takes one step of a due schedule: it starts a buffered fire time whose live run has
// ended, or handles the next fire time (skipped as missed when past the catch-up window), and
// says whether it wrote the step (false: not due, or another host took it first). An error
// leaves the schedule as it was, for the next pass.
func (sc *scheduler) step(ctx context.Context, s store.Schedule, now time.Time) (bool, error) {
	times, err := parseFireTimes(s.Cron, s.TimeZone, s.IntervalMs)
	if err != nil {
		return false, err
	}
	adv := store.ScheduleAdvance{TenantID: s.TenantID, ID: s.ID, From: s.NextFireAt, FromBuffered: s.BufferedFireAt,
		NextFireAt: s.NextFireAt, DueAt: s.DueAt, BufferedFireAt: s.BufferedFireAt, LastError: s.LastError}
	if s.BufferedFireAt != nil {
		live, err := sc.lastLive(ctx, s)
		if err != nil {
			return false, err
		}
		if !live {
			adv.BufferedFireAt = nil
			run, err := sc.start(ctx, s, *s.BufferedFireAt, &adv)
			if err != nil {
				return false, err
			}
			outcome := TriggerStarted
			if run == nil {
				outcome = TriggerFailed
			} else {
				sc.log.Info("schedules: started the buffered fire time", "tenant", s.TenantID, "schedule", s.ID, "fireAt", *s.BufferedFireAt, "run", run.ID)
			}
			return sc.advance(ctx, adv, outcome)
		}
	}
	if s.DueAt.After(now) {
		return false, nil
	}
	fireAt := s.NextFireAt
	if window := time.Duration(s.CatchupWindowMs) * time.Millisecond; now.Sub(s.DueAt) > window {
		// Every host was down (or the store was) past the window: the fire times due before
		// it are skipped, and the schedule goes on from the first due inside it. Lateness is
		// counted from the due time, so a jitter longer than the window delays, never skips.
		cutoff := now.Add(-window)
		from := cutoff.Add(-time.Duration(s.JitterMs)*time.Millisecond - time.Nanosecond)
		if from.Before(fireAt) {
			from = fireAt // fireAt's own due time is before the cutoff: it is skipped too
		}
		next := times.after(from)
		for !next.IsZero() && dueAt(s, next).Before(cutoff) {
			next = times.after(next)
		}
		if next.IsZero() {
			next = fireAt.AddDate(100, 0, 0)
		}
		adv.NextFireAt, adv.DueAt = next, dueAt(s, next)
		adv.LastError = fmt.Sprintf("missed the fire times from %s to before %s: past the catch-up window of %dms",
			fireAt.Format(time.RFC3339Nano), next.Format(time.RFC3339Nano), s.CatchupWindowMs)
		sc.log.Warn("schedules: fire times missed", "tenant", s.TenantID, "schedule", s.ID, "from", fireAt, "to", next)
		return sc.advance(ctx, adv, triggerMissed)
	}
	next := times.after(fireAt)
	if next.IsZero() {
		// No fire time within the cron library's five-year horizon: nothing more is due.
		next = fireAt.AddDate(100, 0, 0)
	}
	adv.NextFireAt, adv.DueAt = next, dueAt(s, next)
	outcome, _, err := sc.fire(ctx, s, fireAt, &adv)
	if err != nil {
		return false, err
	}
	return sc.advance(ctx, adv, outcome)
}

// advance writes a step and, when this host's write is the one that landed, counts it.
func (sc *scheduler) advance(ctx context.Context, adv store.ScheduleAdvance, outcome TriggerOutcome) (bool, error) {
	done, err := sc.store.AdvanceSchedule(ctx, adv)
	if done {
		sc.obs.scheduleFired(string(outcome))
	}
	return done, err
}

// fire handles fire time fireAt of s by its overlap policy, writing the outcome into adv: a
// run started (adv.Started), a fire time buffered (adv.BufferedFireAt) or skipped
// (adv.LastError). An error leaves adv to be dropped: the store could not answer.
func (sc *scheduler) fire(ctx context.Context, s store.Schedule, fireAt time.Time, adv *store.ScheduleAdvance) (TriggerOutcome, *store.Run, error) {
	live, err := sc.lastLive(ctx, s)
	if err != nil {
		return "", nil, err
	}
	if live {
		switch s.Overlap {
		case store.OverlapSkip:
			adv.LastError = fmt.Sprintf("skipped the fire time %s: run %s is still live", fireAt.Format(time.RFC3339Nano), s.LastRunID)
			return TriggerSkipped, nil, nil
		case store.OverlapBufferOne:
			if adv.BufferedFireAt != nil {
				adv.LastError = fmt.Sprintf("dropped the fire time %s: run %s is still live and %s is already buffered",
					fireAt.Format(time.RFC3339Nano), s.LastRunID, adv.BufferedFireAt.Format(time.RFC3339Nano))
				return TriggerSkipped, nil, nil
			}
			adv.BufferedFireAt = &fireAt
			return TriggerBuffered, nil, nil
		case store.OverlapCancelPrevious:
			// A cancel the previous run's workflow is told of (cancel.go), with the default
			// grace to compensate; a module that does not handle one is terminated. The new run
			// starts now, beside the previous one's compensation (Temporal's CancelOther waits
			// for it; a fire time here is not held back by another run's clean-up). A run that
			// ended meanwhile (or that another host cancelled) is a conflict, and as good.
			if _, err := sc.svc.CancelRun(ctx, s.TenantID, s.LastRunID, 0); err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				return "", nil, err
			}
		}
	}
	run, err := sc.start(ctx, s, fireAt, adv)
	if err != nil {
		return "", nil, err
	}
	if run == nil {
		return TriggerFailed, nil, nil
	}
	return TriggerStarted, run, nil
}

// start starts the run of fire time fireAt, keyed by it, and records it in adv; nil, with the
// reason in adv.LastError, when it cannot ever start (the workflow is gone, the input is past
// a lowered limit); an error when the store could not answer, to be tried again.
func (sc *scheduler) start(ctx context.Context, s store.Schedule, fireAt time.Time, adv *store.ScheduleAdvance) (*store.Run, error) {
	run, _, err := sc.svc.StartRun(ctx, s.TenantID, StartRequest{
		Workflow: s.Workflow, Version: s.Version, Input: s.Input, IdempotencyKey: scheduleKey(s.ID, fireAt),
		trigger: &store.Trigger{Kind: store.TriggerSchedule, ScheduleID: s.ID, FireAt: &fireAt},
	})
	switch {
	case err == nil:
		adv.Started = &store.ScheduleStart{FireAt: fireAt, RunID: run.ID}
		adv.LastError = ""
		return &run, nil
	case errors.Is(err, store.ErrUnavailable) || ctx.Err() != nil:
		return nil, err
	}
	adv.LastError = fmt.Sprintf("started nothing at the fire time %s: %v", fireAt.Format(time.RFC3339Nano), err)
	sc.log.Warn("schedules: a fire time started nothing", "tenant", s.TenantID, "schedule", s.ID, "fireAt", fireAt, "err", err)
	return nil, nil
}

// lastLive says whether the last run s started is live (not terminal).
func (sc *scheduler) lastLive(ctx context.Context, s store.Schedule) (bool, error) {
	if s.LastRunID == "" {
		return false, nil
	}
	run, err := sc.store.GetRun(ctx, s.TenantID, s.LastRunID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil // swept
	case err != nil:
		return false, err
	}
	return !run.Status.Terminal(), nil
}
