package wire

import (
	"encoding/json"
	"time"

	"github.com/wfhost/wfhost/abi"
)

// RunStatus is where a run stands.
type RunStatus string

// Run statuses. Pending and running runs are live; completed, failed, cancelled and continued
// are final (a continued run handed on to a new run, its continuedAs: continue-as-new, or a
// retry of a failed run); a nondeterministic run waits for a deploy of compatible code (or a
// cancel); a paused run waits for a resume (or a cancel).
const (
	RunPending          RunStatus = "pending"
	RunRunning          RunStatus = "running"
	RunPaused           RunStatus = "paused"
	RunCompleted        RunStatus = "completed"
	RunFailed           RunStatus = "failed"
	RunCancelled        RunStatus = "cancelled"
	RunContinued        RunStatus = "continued"
	RunNondeterministic RunStatus = "nondeterministic"
)

// RunStatuses returns every run status in the order of a run's life, then its ends.
func RunStatuses() []RunStatus {
	return []RunStatus{RunPending, RunRunning, RunPaused, RunCompleted, RunFailed, RunCancelled, RunContinued, RunNondeterministic}
}

// Ended reports whether a run in status s has stopped and will not move on its own: it is
// final, nondeterministic (which only a deploy or a cancel moves) or paused (which only a
// resume or a cancel moves). This is what a caller waiting for a run's end waits for.
func (s RunStatus) Ended() bool {
	switch s {
	case RunCompleted, RunFailed, RunCancelled, RunContinued, RunNondeterministic, RunPaused:
		return true
	}
	return false
}

// Run is one run of a workflow: GET /v1/workflows/{name}/runs/{id}, the answer of a start and
// a cancel, and each item of a run listing.
type Run struct {
	ID       string          `json:"id"`
	Workflow string          `json:"workflow"`
	Version  string          `json:"version"`
	Status   RunStatus       `json:"status"`
	Input    json.RawMessage `json:"input"`
	// Output is a completed run's result.
	Output json.RawMessage `json:"output,omitempty"`
	// Error is why a failed, cancelled or nondeterministic run ended.
	Error          *abi.ErrorInfo `json:"error,omitempty"`
	IdempotencyKey string         `json:"idempotencyKey,omitempty"`
	RetentionDays  int            `json:"retentionDays"`
	ModuleDigest   string         `json:"moduleDigest"`
	// Activations counts the passes the run has had.
	Activations int        `json:"activations"`
	CreatedAt   time.Time  `json:"createdAt"`
	StartedAt   *time.Time `json:"startedAt,omitempty"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	// Deadline is when the run times out (its start's timeoutMs), if it has one. A run that
	// continues another keeps its deadline: it bounds the whole chain.
	Deadline *time.Time `json:"deadline,omitempty"`
	// Retry is the run's own retry policy (its start's retry), handed on to its retries.
	Retry *abi.RetryPolicy `json:"retry,omitempty"`
	// Attempt counts a retry chain: 1 for a run a client started, n+1 for the retry of
	// attempt n.
	Attempt int `json:"attempt"`
	// ContinuedFrom is the run this one continues (continue-as-new or a retry).
	ContinuedFrom string `json:"continuedFrom,omitempty"`
	// ContinuedAs is the run that continues this one, once it ended so: status continued
	// (continue-as-new) or failed (retried).
	ContinuedAs string `json:"continuedAs,omitempty"`
	// CancelRequestedAt is when a cancel was asked of the run (POST .../cancel); the workflow
	// may compensate until CancelGraceUntil, when it is terminated.
	CancelRequestedAt *time.Time `json:"cancelRequestedAt,omitempty"`
	CancelGraceUntil  *time.Time `json:"cancelGraceUntil,omitempty"`
	// RestartedFrom is the ended run this one restarts (POST .../restart).
	RestartedFrom string `json:"restartedFrom,omitempty"`
	// ParentRunID is the run whose step started this one as a child (abi/ABI.md §4.16), its
	// step's key ParentKey, and ParentClose what the parent's cancellation does to it (cancel,
	// abandon): in GET run's answer, and in a listing filtered by ?parent=. ParentWorkflow is
	// the parent's workflow, in GET run's answer only.
	ParentRunID    string `json:"parentRunId,omitempty"`
	ParentKey      string `json:"parentKey,omitempty"`
	ParentClose    string `json:"parentClose,omitempty"`
	ParentWorkflow string `json:"parentWorkflow,omitempty"`
	// PausedAt is when a pause was asked of the run (POST .../pause, its workflow's pause, or
	// its creation under one): status paused, or running until its next durable call.
	PausedAt *time.Time `json:"pausedAt,omitempty"`
	// Lease names the host executing a live run and until when it holds it: in GET run's
	// answer only, and only while a host holds the run.
	Lease *RunLease `json:"lease,omitempty"`
	// Flow is where the run stands under its workflow's flow control: in GET run's answer
	// only, for a run started under one that has not begun (why it waits).
	Flow *RunFlow `json:"flow,omitempty"`
	// Features are the optional ABI features the run's module declares (abi/ABI.md §7: cancel,
	// query), so a client offers only what the module handles: in GET run's answer only, and
	// only while the run has not ended.
	Features []string `json:"features,omitempty"`
	// TriggeredBy is what started the run: in GET run's answer only.
	TriggeredBy *RunTrigger `json:"triggeredBy,omitempty"`
}

// RunTrigger is what started a run. Kind is api (a client's start: the API, the CLI, the
// console), schedule, event (a trigger), signalWithStart, parent (a child step), branch (a
// parallel step), hook (a completion hook), retry, continueAsNew or restart (a restart or a
// fork); the fields its kind does not use are absent.
type RunTrigger struct {
	Kind string `json:"kind"`
	// Host is the host that created a client's start leased to itself (absent when it was
	// created pending).
	Host string `json:"host,omitempty"`
	// TokenID is the id of the API token a client's start came with (absent for a start the
	// daemon made in process, as wfbench's direct mode does).
	TokenID string `json:"tokenId,omitempty"`
	// ScheduleID and FireAt are the schedule and the fire time it started the run for.
	ScheduleID string     `json:"scheduleId,omitempty"`
	FireAt     *time.Time `json:"fireAt,omitempty"`
	// Event is the trigger's or signal-with-start's event, EventID its id (or the signal's).
	Event   string `json:"event,omitempty"`
	EventID string `json:"eventId,omitempty"`
	// RunID is the run it came from: the parent (parent, branch), the run that ended (hook),
	// the predecessor (retry, continueAsNew), the source (restart).
	RunID string `json:"runId,omitempty"`
	// Key is the parent's step that started it (parent, branch).
	Key string `json:"key,omitempty"`
	// HookID is the hook whose start it is (hook).
	HookID string `json:"hookId,omitempty"`
}

// RunLease is which host holds a run and until when (it renews the lease while it runs it).
type RunLease struct {
	Owner     string    `json:"owner"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// RunCounts is the answer of GET /v1/runs/counts: the runs a listing with the same filters
// lists, by status (every status present), and their total.
type RunCounts struct {
	Counts map[RunStatus]int `json:"counts"`
	Total  int               `json:"total"`
}

// RunPage is one page of a run listing, newest first; NextCursor is "" on the last page.
type RunPage struct {
	Runs       []Run  `json:"runs"`
	NextCursor string `json:"nextCursor"`
}

// StartRun is the body of POST /v1/workflows/{name}/runs. Every field may be left out: no
// input is null, no version the latest, no retention the workflow's or the daemon's.
type StartRun struct {
	Input          json.RawMessage `json:"input,omitempty"`
	Version        string          `json:"version,omitempty"`
	IdempotencyKey string          `json:"idempotencyKey,omitempty"`
	RetentionDays  int             `json:"retentionDays,omitempty"`
	TimeoutMs      int64           `json:"timeoutMs,omitempty"`
	// Retry, when set, retries the run when it fails: a fresh run of the same version with the
	// same input, after the policy's backoff, until its attempts (the first run included) are
	// spent. A failure marked nonRetryable is not retried.
	Retry *abi.RetryPolicy `json:"retry,omitempty"`
	// Priority is the run's priority in seconds (-600 to 600): it is claimed as if started
	// that much earlier (later, a delay, when negative). Absent: the workflow's flow default,
	// else 0.
	Priority *int `json:"priority,omitempty"`
}

// SignalWithStart is POST /v1/workflows/{name}/signal-with-start's body: the event goes to
// the run IdempotencyKey names, which is started with Input (and Version, RetentionDays) first
// if there is none or it has ended.
type SignalWithStart struct {
	IdempotencyKey string           `json:"idempotencyKey"`
	Input          json.RawMessage  `json:"input,omitempty"`
	Version        string           `json:"version,omitempty"`
	RetentionDays  int              `json:"retentionDays,omitempty"`
	TimeoutMs      int64            `json:"timeoutMs,omitempty"`
	Retry          *abi.RetryPolicy `json:"retry,omitempty"`
	Event          string           `json:"event"`
	Payload        json.RawMessage  `json:"payload,omitempty"`
	SignalID       string           `json:"signalId,omitempty"`
}

// SignalWithStartResult answers POST /v1/workflows/{name}/signal-with-start: the run (Created
// when this request started it) and what became of the event.
type SignalWithStartResult struct {
	Run     Run          `json:"run"`
	Created bool         `json:"created"`
	Signal  SignalResult `json:"signal"`
}

// Step kinds: the verb that made a journal entry.
const (
	StepKindRun   = "run"
	StepKindSleep = "sleep"
	StepKindWait  = "wait"
)

// Step statuses. Completed, timed out and failed are final; the others change in place.
const (
	StepCompleted = "completed" // run: Output; sleep: elapsed; wait: Output is the event's payload
	StepTimedOut  = "timed_out" // wait: no matching event before WakeAt
	StepCancelled = "cancelled" // the run's cancellation reached the workflow here (error says so)
	StepFailed    = "failed"    // run: Error is final
	StepRetrying  = "retrying"  // run: Attempt attempts failed, Error is the last; the next at WakeAt
	StepSleeping  = "sleeping"  // sleep: until WakeAt
	StepWaiting   = "waiting"   // wait: for Event matching Match, until WakeAt (none: forever)
)

// Step is one entry of a run's journal (GET .../steps).
type Step struct {
	Seq         int             `json:"seq"`
	Key         string          `json:"key"`
	Kind        string          `json:"kind"`
	Status      string          `json:"status"`
	Attempt     int             `json:"attempt,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	Error       *abi.ErrorInfo  `json:"error,omitempty"`
	WakeAt      *time.Time      `json:"wakeAt,omitempty"`
	Event       string          `json:"event,omitempty"`
	Match       json.RawMessage `json:"match,omitempty"` // a wait's filter; a parallel step's request as forked
	StartedAt   time.Time       `json:"startedAt"`
	CompletedAt *time.Time      `json:"completedAt,omitempty"`
	DurationMs  *float64        `json:"durationMs,omitempty"`
	// Outbound are the HTTP requests the step made (or tried), in order.
	Outbound []OutboundRecord `json:"outbound,omitempty"`
}

// StepPage is a run's whole journal, in order.
type StepPage struct {
	Steps []Step `json:"steps"`
	// NextCursor, in a paged read (limit or cursor given), is the cursor of the next page; ""
	// after the journal's last entry. A whole read leaves it out.
	NextCursor string `json:"nextCursor,omitempty"`
}

// OutboundRecord is one hop of an outbound HTTP request in a run's audit trail: the request
// the guest asked for (hop 0) and each redirect the host followed, refused ones included.
type OutboundRecord struct {
	Step      string `json:"step,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	Hop       int    `json:"hop"`
	Method    string `json:"method"`
	Scheme    string `json:"scheme,omitempty"`
	Host      string `json:"host"`
	Port      int    `json:"port,omitempty"`
	Path      string `json:"path"`
	// Status is the response's status; 0 when none came.
	Status int `json:"status,omitempty"`
	// Error is the host's code when the request was refused or failed.
	Error      string    `json:"error,omitempty"`
	BytesOut   int       `json:"bytesOut"`
	BytesIn    int       `json:"bytesIn"`
	DurationMs float64   `json:"durationMs"`
	At         time.Time `json:"at"`
}

// OutboundPage is a run's whole outbound audit trail (GET .../outbound).
type OutboundPage struct {
	Outbound []OutboundRecord `json:"outbound"`
}

// Signal states: what became of an event sent to one run.
const (
	SignalDelivered = abi.EventDelivered // a wait of the run took it
	SignalBuffered  = abi.EventBuffered  // kept for the run until one of its waits takes it
)

// SignalResult answers POST .../signals/{event}. A Duplicate (a signal id sent to the run
// before) changed nothing; State is what became of the first sending.
type SignalResult struct {
	Event     string `json:"event"`
	SignalID  string `json:"signalId,omitempty"`
	State     string `json:"state"`
	Duplicate bool   `json:"duplicate"`
}

// BroadcastResult answers POST /v1/events/{event}: how many waiting runs the event resolved
// and the runs it started. A Duplicate (an event id sent before) changed nothing, and repeats
// the runs the first send started.
type BroadcastResult struct {
	Event     string `json:"event"`
	EventID   string `json:"eventId"`
	Resolved  int    `json:"resolved"`
	Started   []Run  `json:"started"`
	Duplicate bool   `json:"duplicate"`
}

// ForkRun is POST /v1/workflows/{name}/runs/{id}/fork's body: every field may be left out (a
// fork of the journal so far, with the run's input and version).
type ForkRun struct {
	Input json.RawMessage `json:"input,omitempty"`
	// FromStep cuts the journal before this key; "": after the last entry that has ended.
	FromStep  string `json:"fromStep,omitempty"`
	Version   string `json:"version,omitempty"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

// ResumeRun is POST /v1/workflows/{name}/runs/{id}/resume's body, which may be left out (the
// run resumes on its own version).
type ResumeRun struct {
	// Version, when set and not the run's own, moves the paused run to that version of its
	// workflow if a dry replay of its journal against it passes (409 resume_refused otherwise).
	Version string `json:"version,omitempty"`
}

// WorkflowPaused answers a workflow's (or version's) pause or resume: how many of its runs
// it paused (or asked to pause) or resumed.
type WorkflowPaused struct {
	Workflow string `json:"workflow"`
	Version  string `json:"version,omitempty"`
	Paused   bool   `json:"paused"`
	Runs     int    `json:"runs"`
}

// RestartRun is POST /v1/workflows/{name}/runs/{id}/restart's body: every field may be left
// out (a restart from scratch with the ended run's input and version).
type RestartRun struct {
	Input     json.RawMessage `json:"input,omitempty"`
	FromStep  string          `json:"fromStep,omitempty"`
	Version   string          `json:"version,omitempty"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
}

// LogEntry is one entry of a run's lifecycle log (GET .../log). Kind is one of the store's
// lifecycle kinds (created, claimed, suspended, released, faulted, woken, cancel_requested,
// nondeterministic, upgraded, paused, resumed, ended, step_retrying, step_failed,
// event_delivered, wait_timed_out); Detail is the kind's object.
type LogEntry struct {
	Seq    int64           `json:"seq"`
	At     time.Time       `json:"at"`
	Kind   string          `json:"kind"`
	Host   string          `json:"host,omitempty"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

// LogPage is a page of a run's lifecycle log, in order.
type LogPage struct {
	Entries []LogEntry `json:"entries"`
	// NextCursor is the cursor of the next page when more entries follow this one; "" after
	// the last. A follower asks again with the seq of the last entry it has.
	NextCursor string `json:"nextCursor,omitempty"`
}

// GuestLogLine is a line a run's guest logged (the ABI's log, or a line of its stdout or
// stderr), storable and redacted.
type GuestLogLine struct {
	Seq     int64     `json:"seq"`
	At      time.Time `json:"at"`
	Level   string    `json:"level"`
	Message string    `json:"message"`
	// Stream is stdout or stderr for an output line; absent for a log call.
	Stream string `json:"stream,omitempty"`
	// Step is the key of the step whose callback logged it; absent outside steps.
	Step string `json:"step,omitempty"`
}

// GuestLogPage is a page of a run's guest log, in order.
type GuestLogPage struct {
	Lines []GuestLogLine `json:"lines"`
	// NextCursor is the cursor of the next page when more lines follow this one; "" after the
	// last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// QueryAnswer is a query's answer (POST .../runs/{id}/query/{name}): the result the workflow's
// handler returned, and where in its journal the run stood when it was asked.
type QueryAnswer struct {
	Result json.RawMessage `json:"result"`
	At     ReplayStop      `json:"at"`
}

// RunFlow is where a run stands under its workflow's flow control (abi/ABI.md §7 "flow"), in
// GET run's answer for a run started under one that has not begun.
type RunFlow struct {
	// Waiting says why the run has not begun: "concurrency" (its key is at its limit: it
	// starts when a run of its key ends), "rate" (throttled until its rate's notBefore),
	// "debounce" (a later start of its key may still replace its input), "priority" (a
	// negative priority delays it), or "" (it is claimable now).
	Waiting     string                `json:"waiting,omitempty"`
	Priority    int                   `json:"priority"`
	Concurrency *FlowConcurrencyState `json:"concurrency,omitempty"`
	Rate        *FlowRateState        `json:"rate,omitempty"`
	Debounce    *FlowDebounceState    `json:"debounce,omitempty"`
}

// FlowConcurrencyState is a run's concurrency key, its limit, the runs of the key holding a
// slot now, and whether this run waits for one.
type FlowConcurrencyState struct {
	Key    string `json:"key"`
	Limit  int    `json:"limit"`
	Active int    `json:"active"`
	Held   bool   `json:"held"`
}

// FlowRateState is a run's rate key and limit per period, and the earliest its rate let it
// start.
type FlowRateState struct {
	Key       string    `json:"key"`
	Limit     int       `json:"limit"`
	PeriodMs  int64     `json:"periodMs"`
	NotBefore time.Time `json:"notBefore"`
}

// FlowDebounceState is a run's debounce key and window.
type FlowDebounceState struct {
	Key      string `json:"key"`
	PeriodMs int64  `json:"periodMs"`
}
