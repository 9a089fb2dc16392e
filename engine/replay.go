package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// A dry replay runs a workflow over a journal it is given, with no store: journaled steps
// return their recorded results, nothing executes or commits, and the pass stops at the first
// step the journal does not have. It answers "would this module replay that run?" offline
// (wfhost replay) and is what an upgrade gate checks runs in flight with. It checks each step
// by the same rules as a live pass (stepKey, checkReached, checkWaitEvent, checkParallel,
// finishedEarly), so a dry replay that says compatible is one a live pass would not mark
// nondeterministic.

// Replay is the run a dry replay replays: what a pass is claimed with, minus the store.
type Replay struct {
	Workflow string
	Input    json.RawMessage
	// RunID seeds the guest's random source outside step callbacks, as in the live run.
	RunID string
	// CreatedAt is the guest's clock before the first journal entry it reaches.
	CreatedAt time.Time
	// Journal is the run's journal in order: entry i has Seq i.
	Journal []store.Step
	// Limits bound the pass (zero fields: host.DefaultLimits).
	Limits host.Limits
}

// ReplayVerdict is what a dry replay found.
type ReplayVerdict string

const (
	// ReplayCompatible: every step the workflow reached is the journal's, in order.
	ReplayCompatible ReplayVerdict = "compatible"
	// ReplayDiverged: the workflow left its journal (a step renamed, reordered, removed or of
	// another kind, a wait for another event, or an end before the journal's).
	ReplayDiverged ReplayVerdict = "diverged"
)

// StepRef names a journal entry or a step a workflow reached.
type StepRef struct {
	Key  string         `json:"key"`
	Kind store.StepKind `json:"kind"`
	// Event is a wait's event name.
	Event string `json:"event,omitempty"`
}

func (r StepRef) String() string {
	if r.Event != "" {
		return fmt.Sprintf("%s %q for event %q", r.Kind, r.Key, r.Event)
	}
	return fmt.Sprintf("%s %q", r.Kind, r.Key)
}

// Divergence is the first place a workflow left its journal: entry Seq holds Expected, and
// the workflow reached Reached there (nil: it ended instead).
type Divergence struct {
	Seq      int      `json:"seq"`
	Expected StepRef  `json:"expected"`
	Reached  *StepRef `json:"reached,omitempty"`
	// Message is the error a live pass marks the run nondeterministic with.
	Message string `json:"message"`
}

func (d *Divergence) failure() *runFailure { return nondeterministic("%s", d.Message) }

// stepKey is the journal key of the next step named name in a pass that has reached seen[name]
// steps of that name so far: a name repeated in one pass (a loop) gets a stable suffix.
func stepKey(seen map[string]int, name string) string {
	n := seen[name]
	seen[name] = n + 1
	if n == 0 {
		return name
	}
	return name + abi.SuffixSep + strconv.Itoa(n)
}

// checkReached compares the step a pass reached (key, kind) with the journal's entry seq,
// s; nil when they are the same step.
func checkReached(seq int, s *store.Step, key string, kind store.StepKind) *Divergence {
	if s.Key == key && (s.Kind == kind || kind == store.KindParallel && s.Kind == store.KindBranch) {
		// A branch's journal holds, where the parent forked it, the branch's entry: the same
		// call, answered StatusBranch (parallel.go).
		return nil
	}
	return &Divergence{
		Seq: seq, Expected: StepRef{Key: s.Key, Kind: s.Kind, Event: s.Event}, Reached: &StepRef{Key: key, Kind: kind},
		Message: fmt.Sprintf("step %d: the journal holds %s %q but the workflow reached %s %q", seq, s.Kind, s.Key, kind, key),
	}
}

// checkWaitEvent compares the event of a wait a pass reached with the journal's wait s.
func checkWaitEvent(seq int, s *store.Step, event string) *Divergence {
	if s.Event == event {
		return nil
	}
	return &Divergence{
		Seq: seq, Expected: StepRef{Key: s.Key, Kind: s.Kind, Event: s.Event}, Reached: &StepRef{Key: s.Key, Kind: store.KindWait, Event: event},
		Message: fmt.Sprintf("wait %q: the journal waits for event %q but the workflow waits for %q", s.Key, s.Event, event),
	}
}

// checkParallel compares the request of a parallel step a pass reached with the one the
// journal's step s forked (its Match, engine.forkRequest): a different number of branches or
// join would hand the guest a result shaped for other code. Only the parent's own entry holds
// the request: a branch's entry (KindBranch), a parallel step the cancellation reached before
// it forked, and one journaled before the request was kept are not compared.
func checkParallel(seq int, s *store.Step, req abi.Parallel) *Divergence {
	if s.Kind != store.KindParallel || len(s.Match) == 0 {
		return nil
	}
	var forked abi.Parallel
	var message string
	if err := json.Unmarshal(s.Match, &forked); err != nil {
		message = fmt.Sprintf("parallel %q: the journal's request %s cannot be read: %v", s.Key, s.Match, err)
	} else if forked.Branches != req.Branches || forked.Join != req.Join {
		message = fmt.Sprintf("parallel %q: the journal forked %d branches joined %q but the workflow asks %d joined %q",
			s.Key, forked.Branches, forked.Join, req.Branches, req.Join)
	} else {
		return nil
	}
	return &Divergence{Seq: seq, Expected: StepRef{Key: s.Key, Kind: s.Kind}, Reached: &StepRef{Key: s.Key, Kind: store.KindParallel}, Message: message}
}

// finishedEarly is the divergence of a workflow that ended after reached steps while the
// journal holds next after them.
func finishedEarly(reached int, next *store.Step) *Divergence {
	return &Divergence{
		Seq: reached, Expected: StepRef{Key: next.Key, Kind: next.Kind, Event: next.Event},
		Message: fmt.Sprintf("the workflow finished after %d steps but the journal holds more; the next is %s %q", reached, next.Kind, next.Key),
	}
}

// ReplayStop is where a compatible dry pass stopped: at entry Seq, a step the journal does not
// have (New) or has without its end (a run step between attempts, a sleep not yet elapsed, a
// wait not yet resolved), whose outcome a live pass would make by executing or waiting.
type ReplayStop struct {
	Seq int     `json:"seq"`
	At  StepRef `json:"at"`
	New bool    `json:"new"`
}

// ReplayLog is one record the guest logged during the dry pass (outside step callbacks: none
// runs).
type ReplayLog struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	// Stream is "stdout" or "stderr" for a line the guest wrote there; "" for a log call.
	Stream string `json:"stream,omitempty"`
}

// ReplayReport is the result of a dry replay. A compatible pass either stopped at the first
// step the journal does not have (Stopped), or ran to its end within the journal (Ended, with
// Output or Error: the run's end the module would write). A diverged one is Ended too when the
// workflow returned before its journal's end: Output or Error is what it returned.
type ReplayReport struct {
	Verdict ReplayVerdict `json:"verdict"`
	// Replayed counts the journal entries the pass reached and replayed.
	Replayed   int         `json:"replayed"`
	Journal    int         `json:"journal"`
	Divergence *Divergence `json:"divergence,omitempty"`
	Stopped    *ReplayStop `json:"stopped,omitempty"`
	Ended      bool        `json:"ended"`
	// Output is the output of a pass that completed; Error the failure of one that failed
	// (the workflow's error, or a guest fault such as a trap).
	Output json.RawMessage `json:"output,omitempty"`
	Error  *abi.ErrorInfo  `json:"error,omitempty"`
	// ContinuedAsNew is the next run's input of a pass that ended by continue_as_new.
	ContinuedAsNew json.RawMessage `json:"continuedAsNew,omitempty"`
	Logs           []ReplayLog     `json:"logs"`
	// LogsDropped counts guest records past maxGuestRecords, which are not kept.
	LogsDropped int `json:"logsDropped,omitempty"`
}

// CheckReplayJournal checks that a journal given to a dry replay is one a store could hold:
// entry i has Seq i, a key, and a kind and status that go together. A journal read from a
// file is untrusted.
func CheckReplayJournal(steps []store.Step) error {
	for i, s := range steps {
		if s.Seq != i {
			return fmt.Errorf("%w: journal entry %d has seq %d", ErrInvalid, i, s.Seq)
		}
		if s.Key == "" || !utf8.ValidString(s.Key) || !utf8.ValidString(s.Event) {
			return fmt.Errorf("%w: journal entry %d: its key or event is empty or not UTF-8", ErrInvalid, i)
		}
		var ok bool
		switch s.Kind {
		case store.KindRun:
			ok = s.Status == store.StepCompleted || s.Status == store.StepFailed || s.Status == store.StepRetrying || s.Status == store.StepCancelled
		case store.KindSleep:
			ok = s.Status == store.StepCompleted || s.Status == store.StepSleeping || s.Status == store.StepCancelled
		case store.KindWait:
			ok = s.Status == store.StepCompleted || s.Status == store.StepTimedOut || s.Status == store.StepWaiting || s.Status == store.StepCancelled
		case store.KindChild, store.KindParallel:
			ok = s.Status == store.StepCompleted || s.Status == store.StepFailed || s.Status == store.StepWaiting || s.Status == store.StepCancelled
		case store.KindBranch:
			// A branch's own entry at its fork: written completed, as the fork wrote it.
			ok = s.Status == store.StepCompleted
		default:
			return fmt.Errorf("%w: journal entry %d: unknown kind %q", ErrInvalid, i, s.Kind)
		}
		if !ok {
			return fmt.Errorf("%w: journal entry %d: status %q is not one a %s step can have", ErrInvalid, i, s.Status, s.Kind)
		}
		if len(s.Output) > 0 && !json.Valid(s.Output) {
			return fmt.Errorf("%w: journal entry %d: output is not JSON", ErrInvalid, i)
		}
	}
	return nil
}

// DryReplay replays r on mod in rt with no store and reports whether the module is compatible
// with the journal. Its error is for a replay that could not be made (an invalid journal, an
// instance that could not be made, ctx ended); whatever the guest does is in the report.
func DryReplay(ctx context.Context, rt *host.Runtime, mod *host.Module, r Replay) (*ReplayReport, error) {
	if err := CheckReplayJournal(r.Journal); err != nil {
		return nil, err
	}
	logs := &replayLogs{max: maxGuestRecords}
	d := &dryPass{journal: r.Journal, seen: map[string]int{}, clock: r.CreatedAt.UTC().Truncate(time.Microsecond)}
	res, err := rt.Activate(ctx, mod, host.Activation{
		Workflow: r.Workflow, Input: r.Input, RunID: r.RunID, Handler: d, Limits: r.Limits,
		Logger: slog.New(logs),
	})
	rep := &ReplayReport{Verdict: ReplayCompatible, Journal: len(r.Journal), Replayed: d.cursor}
	rep.Logs, rep.LogsDropped = logs.taken()
	var (
		end   *dryEnd
		guest *host.GuestError
	)
	switch {
	case err == nil:
		if d.cursor < len(r.Journal) {
			rep.Verdict, rep.Divergence = ReplayDiverged, finishedEarly(d.cursor, &r.Journal[d.cursor])
		}
		rep.Ended, rep.Output, rep.Error = true, res.Output, res.Error
		if res.Continue != nil {
			rep.ContinuedAsNew = res.Continue.Input
		}
	case errors.As(err, &end):
		if end.divergence != nil {
			rep.Verdict, rep.Divergence = ReplayDiverged, end.divergence
			rep.Replayed = end.divergence.Seq
		} else {
			rep.Stopped = end.stop
			rep.Replayed = end.stop.Seq
		}
	case errors.As(err, &guest):
		// A trap or a guest fault before the journal's end: the live pass would fail the run.
		rep.Ended, rep.Error = true, &guest.Info
	case errors.Is(err, host.ErrInvalidModule):
		return nil, err
	default:
		return nil, fmt.Errorf("dry replay: %w", err)
	}
	return rep, nil
}

// dryEnd is the error a dry pass's host call unwinds the guest with: where it stopped, or how
// it diverged.
type dryEnd struct {
	stop       *ReplayStop
	divergence *Divergence
}

func (e *dryEnd) Error() string {
	if e.divergence != nil {
		return "dry replay diverged: " + e.divergence.Message
	}
	return fmt.Sprintf("dry replay stopped at step %d (%s)", e.stop.Seq, e.stop.At)
}

// dryPass implements host.Handler over a journal in memory. Only the activation's goroutine
// uses it.
type dryPass struct {
	journal []store.Step
	cursor  int            // the entry the pass reaches next
	seen    map[string]int // name -> times reached, for key suffixes
	clock   time.Time      // the guest's clock: the latest journal time reached
	// query, when set, makes this a query's pass (query.go): the frontier answers it
	// (abi.StatusQuery) instead of stopping the pass, and asked says it did, at frontier.
	query    *abi.Query
	asked    bool
	frontier *ReplayStop
}

var _ host.Handler = (*dryPass)(nil)

// next is the journal entry for the step named name of kind, or the dryEnd that stops the pass
// at it: the journal has no entry there, or another step.
func (d *dryPass) next(name string, kind store.StepKind) (*store.Step, error) {
	if d.asked {
		return nil, errNotAnswered(name)
	}
	key, seq := stepKey(d.seen, name), d.cursor
	if seq >= len(d.journal) {
		return nil, d.stopAt(&ReplayStop{Seq: seq, At: StepRef{Key: key, Kind: kind}, New: true})
	}
	s := &d.journal[seq]
	if dv := checkReached(seq, s, key, kind); dv != nil {
		return nil, &dryEnd{divergence: dv}
	}
	d.cursor++
	return s, nil
}

// unresolved stops the pass at s, which the journal holds without its end.
func (d *dryPass) unresolved(s *store.Step) error {
	d.cursor = s.Seq
	return d.stopAt(&ReplayStop{Seq: s.Seq, At: StepRef{Key: s.Key, Kind: s.Kind, Event: s.Event}})
}

// stopAt is what the pass does at its frontier, stop, whatever the call's kind: a dry replay
// ends there; a query's pass answers the query there and lets the guest go on to its handler.
func (d *dryPass) stopAt(stop *ReplayStop) error {
	if d.query == nil {
		return &dryEnd{stop: stop}
	}
	d.asked, d.frontier = true, stop
	data, _ := json.Marshal(d.query)
	return &host.Answer{Reply: host.Reply{Status: abi.StatusQuery, Data: data}}
}

func (d *dryPass) advance(t *time.Time) {
	if t != nil && t.After(d.clock) {
		d.clock = *t
	}
}

func (d *dryPass) StepRun(_ context.Context, name string, _ abi.StepOptions) (host.Reply, error) {
	s, err := d.next(name, store.KindRun)
	if err != nil {
		return host.Reply{}, err
	}
	return d.ended(s) // retrying: the next attempt would execute, so the pass stops there
}

// ended answers a step or child step from its journal entry: its output or its failure, or,
// for one that has not ended, the stop of the pass there.
func (d *dryPass) ended(s *store.Step) (host.Reply, error) {
	switch s.Status {
	case store.StepCompleted:
		d.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusOK, Data: s.Output}, nil
	case store.StepFailed, store.StepCancelled:
		d.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusStepFailed, Data: errorJSON(s.Error)}, nil
	}
	return host.Reply{}, d.unresolved(s)
}

func (d *dryPass) StepDone(context.Context, abi.Outcome, []byte) (host.Reply, error) {
	// A dry pass never answers StatusExecute, so no callback runs to end.
	return host.Reply{}, &host.GuestError{Info: abi.ErrorInfo{Code: abi.CodeABIViolation, Message: "a step ended with no running step"}}
}

func (d *dryPass) StepInterrupted(context.Context, abi.ErrorInfo) error {
	return &host.GuestError{Info: abi.ErrorInfo{Code: abi.CodeABIViolation, Message: "a step was interrupted with no running step"}}
}

func (d *dryPass) Sleep(_ context.Context, name string, _ time.Duration) (host.Reply, error) {
	return d.sleep(name)
}

func (d *dryPass) SleepUntil(_ context.Context, name string, _ time.Time) (host.Reply, error) {
	return d.sleep(name)
}

func (d *dryPass) sleep(name string) (host.Reply, error) {
	s, err := d.next(name, store.KindSleep)
	if err != nil {
		return host.Reply{}, err
	}
	if s.Status == store.StepCancelled {
		d.advance(s.CompletedAt)
		return cancelledReply(s.Kind, s.Error), nil
	}
	if s.Status != store.StepCompleted {
		return host.Reply{}, d.unresolved(s)
	}
	d.advance(s.CompletedAt)
	return host.Reply{Status: abi.StatusOK}, nil
}

func (d *dryPass) WaitEvent(_ context.Context, name string, opts abi.WaitOptions) (host.Reply, error) {
	s, err := d.next(name, store.KindWait)
	if err != nil {
		return host.Reply{}, err
	}
	if dv := checkWaitEvent(s.Seq, s, opts.Event); dv != nil {
		d.cursor = s.Seq
		return host.Reply{}, &dryEnd{divergence: dv}
	}
	switch s.Status {
	case store.StepCompleted:
		d.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusOK, Data: s.Output}, nil
	case store.StepTimedOut:
		d.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusTimeout}, nil
	case store.StepCancelled:
		d.advance(s.CompletedAt)
		return cancelledReply(s.Kind, s.Error), nil
	}
	return host.Reply{}, d.unresolved(s)
}

var _ host.ChildRunner = (*dryPass)(nil)

// RunChild answers a child step from the journal: the child's output or its id, its failure,
// or where the cancellation reached it. One still waiting for its child stops the pass.
func (d *dryPass) RunChild(_ context.Context, name string, _ abi.ChildRun) (host.Reply, error) {
	s, err := d.next(name, store.KindChild)
	if err != nil {
		return host.Reply{}, err
	}
	return d.ended(s)
}

var _ host.ParallelRunner = (*dryPass)(nil)

// RunParallel answers a parallel step from the journal: its result, its failure, where the
// cancellation reached it, or, in a branch's journal, StatusBranch. One still waiting for its
// join stops the pass.
func (d *dryPass) RunParallel(_ context.Context, name string, req abi.Parallel) (host.Reply, error) {
	s, err := d.next(name, store.KindParallel)
	if err != nil {
		return host.Reply{}, err
	}
	if s.Kind == store.KindBranch {
		d.advance(s.CompletedAt)
		return host.Reply{Status: abi.StatusBranch, Data: s.Output}, nil
	}
	if dv := checkParallel(s.Seq, s, req); dv != nil {
		d.cursor = s.Seq
		return host.Reply{}, &dryEnd{divergence: dv}
	}
	return d.ended(s)
}

func (d *dryPass) Now() time.Time { return d.clock }

// CurrentStep is always "": no callback runs in a dry pass.
func (d *dryPass) CurrentStep() string { return "" }

// replayLogs keeps the guest's log records of a dry pass, the first max of them. slog allows a
// handler to be shared, hence the lock.
type replayLogs struct {
	mu      sync.Mutex
	max     int
	logs    []ReplayLog
	dropped int
}

func (l *replayLogs) Enabled(context.Context, slog.Level) bool { return true }

func (l *replayLogs) Handle(_ context.Context, r slog.Record) error {
	rec := ReplayLog{Level: r.Level.String(), Message: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "stream" {
			rec.Stream = a.Value.String()
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.logs) >= l.max {
		l.dropped++
		return nil
	}
	l.logs = append(l.logs, rec)
	return nil
}

func (l *replayLogs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *replayLogs) WithGroup(string) slog.Handler      { return l }

func (l *replayLogs) taken() ([]ReplayLog, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ReplayLog{}, l.logs...), l.dropped
}
