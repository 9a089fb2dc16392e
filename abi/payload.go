package abi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Description is what ExportDescribe returns: every workflow the module declares.
type Description struct {
	Workflows []WorkflowDecl `json:"workflows"`
	// Features are the optional parts of the ABI the module's guest code handles (ABI.md §7):
	// the host uses one only with a module that declares it. Unknown names are ignored.
	Features []string `json:"features,omitempty"`
}

// FeatureCancel declares that the guest handles a cancellation (ABI.md §4.15): sleep and
// wait_event may answer StatusCancelled, and step_run a step failed with CodeCancelled, so the
// workflow can compensate before it ends. A module without it is stopped at once by a cancel.
const FeatureCancel = "cancel"

// FeatureQuery declares that the guest answers queries (ABI.md §4.17): any durable call may
// answer StatusQuery, and the guest replies with query_respond. The host queries no module
// without it.
const FeatureQuery = "query"

// Query is StatusQuery's pending data: the query's name (a name, §4.2) and its argument, any
// storable JSON value (null when the caller gave none).
type Query struct {
	Name string          `json:"name"`
	Arg  json.RawMessage `json:"arg"`
}

// QueryUnknownCode is the error code the SDKs answer a query with when the workflow registered
// no handler of its name; the host reports it to the caller as an unknown query (not a host
// code: the guest chooses it, so it is not one of HostCodes).
const QueryUnknownCode = "unknown_query"

// Has reports whether the description declares feature.
func (d Description) Has(feature string) bool {
	for _, f := range d.Features {
		if f == feature {
			return true
		}
	}
	return false
}

// WorkflowDecl declares one workflow entry point of a module.
type WorkflowDecl struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// RetentionDays is how long a terminal run is kept, 0 to MaxRetentionDays; 0 means the
	// operator's default.
	RetentionDays int `json:"retentionDays,omitempty"`
	// Retry is the default policy of the workflow's steps; nil means DefaultRetry.
	Retry *RetryPolicy `json:"retry,omitempty"`
	// Triggers are event names that start a run of this workflow when broadcast.
	Triggers []string `json:"triggers,omitempty"`
	// Flow is the workflow's flow control (concurrency, rate, debounce, priority); nil: none.
	Flow *Flow `json:"flow,omitempty"`
	// OnEnd are the workflow's completion hooks (Hook): what happens when one of its runs ends.
	OnEnd []Hook `json:"onEnd,omitempty"`
}

// Backoff names how the delay between attempts grows.
type Backoff string

// Backoff kinds.
const (
	BackoffFixed  Backoff = "fixed"
	BackoffLinear Backoff = "linear"
	BackoffExp    Backoff = "exp"
)

// RetryPolicy says how often and how fast a failed step is tried again. Zero fields take the
// value of the policy below them (step options, then the workflow's, then DefaultRetry).
type RetryPolicy struct {
	// Attempts counts every try, the first one included; 1 means never retry.
	Attempts int     `json:"attempts,omitempty"`
	Backoff  Backoff `json:"backoff,omitempty"`
	BaseMs   int64   `json:"baseMs,omitempty"`
	MaxMs    int64   `json:"maxMs,omitempty"`
	// Jitter is the fraction (0..1) by which a delay is randomly shortened or lengthened.
	Jitter float64 `json:"jitter,omitempty"`
	// OnExhausted is what a step whose attempts ran out does (ABI.md §7): ExhaustedFail (the
	// default) returns the failure to the workflow; ExhaustedPause pauses the run instead, for
	// an operator to fix the cause and resume it, which tries the step once more.
	OnExhausted Exhausted `json:"onExhausted,omitempty"`
}

// Exhausted names what a step does when its attempts run out.
type Exhausted string

// What a step does when its attempts run out.
const (
	ExhaustedFail  Exhausted = "fail"
	ExhaustedPause Exhausted = "pause"
)

// DefaultRetry is the policy of a step that names none: 3 attempts, exponential 1s..60s, 20%
// jitter. A function, not a variable: the contract's default is not the program's to change.
func DefaultRetry() RetryPolicy {
	return RetryPolicy{Attempts: 3, Backoff: BackoffExp, BaseMs: 1000, MaxMs: 60000, Jitter: 0.2}
}

// MaxOptionsBytes bounds the options JSON of step_run and wait_event (ABI.md §4.4, §4.7):
// options are a policy and a match, never data, and the host reads them on every call.
const MaxOptionsBytes = 64 << 10

// MaxAttempts bounds RetryPolicy.Attempts so a typo cannot retry forever.
const MaxAttempts = 1000

// Merge returns p with its zero fields taken from under.
func (p RetryPolicy) Merge(under RetryPolicy) RetryPolicy {
	if p.Attempts == 0 {
		p.Attempts = under.Attempts
	}
	if p.Backoff == "" {
		p.Backoff = under.Backoff
	}
	if p.BaseMs == 0 {
		p.BaseMs = under.BaseMs
	}
	if p.MaxMs == 0 {
		p.MaxMs = under.MaxMs
	}
	if p.Jitter == 0 {
		p.Jitter = under.Jitter
	}
	if p.OnExhausted == "" {
		p.OnExhausted = under.OnExhausted
	}
	return p
}

// MaxDelay is the longest time the contract waits for anything: a sleep, a wait's timeout or a
// retry's delay past it is taken as MaxDelay (ABI.md §4.6, §4.7, §7), so every time computed
// from one stays far from overflowing a time.Duration (292 years).
const MaxDelay = 100 * 365 * 24 * time.Hour

// Validate reports a policy no host could follow (ABI.md §7). Zero fields are valid: they take
// the value of the policy below.
func (p RetryPolicy) Validate() error {
	switch {
	case p.Attempts < 0 || p.Attempts > MaxAttempts:
		return fmt.Errorf("retry attempts %d out of range 0..%d", p.Attempts, MaxAttempts)
	case p.Backoff != "" && p.Backoff != BackoffFixed && p.Backoff != BackoffLinear && p.Backoff != BackoffExp:
		return fmt.Errorf("retry backoff %q is not fixed, linear or exp", p.Backoff)
	case p.BaseMs < 0 || p.MaxMs < 0:
		return errors.New("retry delays must not be negative")
	case p.Jitter < 0 || p.Jitter > 1:
		return fmt.Errorf("retry jitter %v out of range 0..1", p.Jitter)
	case p.OnExhausted != "" && p.OnExhausted != ExhaustedFail && p.OnExhausted != ExhaustedPause:
		return fmt.Errorf("retry onExhausted %.40q is not fail or pause", string(p.OnExhausted))
	}
	return nil
}

// Delay is the wait before the attempt that follows failedAttempts failures (1 after the first
// failure), at most MaxDelay. r is a uniform random number in [0,1) used for jitter.
func (p RetryPolicy) Delay(failedAttempts int, r float64) time.Duration {
	base := float64(p.BaseMs)
	var d float64
	switch p.Backoff {
	case BackoffFixed:
		d = base
	case BackoffLinear:
		d = base * float64(failedAttempts)
	default:
		d = base
		for i := 1; i < failedAttempts && d < float64(p.MaxMs); i++ {
			d *= 2
		}
	}
	if p.MaxMs > 0 && d > float64(p.MaxMs) {
		d = float64(p.MaxMs)
	}
	d *= 1 + p.Jitter*(2*r-1)
	// Clamped before the conversion, which would wrap a delay past 292 years to a negative one.
	d = min(max(d, 0), float64(MaxDelay.Milliseconds()))
	return time.Duration(d * float64(time.Millisecond))
}

// StepOptions is step_run's opts JSON (DecodeStepOptions). Empty opts (len 0) mean all defaults.
type StepOptions struct {
	Retry *RetryPolicy `json:"retry,omitempty"`
	// TimeoutMs > 0 bounds each attempt of the step's callback: past it the host stops the
	// guest, journals the attempt as failed with CodeTimeout and retries it by the policy
	// (ABI.md §4.4). At most MaxDelay; 0 is no bound but the activation's wall time.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// EventSend is event_send's req JSON (DecodeEventSend): an event for one run of the tenant
// (RunID) or for the whole tenant (Broadcast), exactly one of them.
type EventSend struct {
	RunID     string          `json:"runId,omitempty"`
	Broadcast bool            `json:"broadcast,omitempty"`
	Event     string          `json:"event"`
	Payload   json.RawMessage `json:"payload,omitempty"` // any JSON value; absent is {}
}

// ContinueAsNew is continue_as_new's req JSON (DecodeContinueAsNew): the next run's input, and
// whether it runs the workflow's most recently deployed version instead of this run's.
type ContinueAsNew struct {
	Input         json.RawMessage `json:"input,omitempty"` // any JSON value; absent is null
	LatestVersion bool            `json:"latestVersion,omitempty"`
}

// ChildRun is child_run's req JSON (DecodeChildRun): the child's workflow (of the parent's
// tenant), its version ("" the latest), its input, its id (its idempotency key; "" derives
// "<parent run id>:<step key>"), its run timeout, whether the parent detaches from it instead of
// awaiting its end, and what the parent's cancellation does to it (ParentClose).
type ChildRun struct {
	Workflow    string          `json:"workflow"`
	Version     string          `json:"version,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"` // any JSON value; absent is null
	ID          string          `json:"id,omitempty"`
	TimeoutMs   int64           `json:"timeoutMs,omitempty"`
	Detach      bool            `json:"detach,omitempty"`
	ParentClose string          `json:"parentClose,omitempty"`
}

// Parent-close policies (ChildRun.ParentClose): what a parent's cancellation or termination
// does to its child.
const (
	ParentCloseCancel  = "cancel"  // the child is cancelled too (an awaited child's default)
	ParentCloseAbandon = "abandon" // the child runs on (a detached child's default)
)

// ChildStarted is child_run's StatusOK data for a detached child: the child run's id.
type ChildStarted struct {
	RunID string `json:"runId"`
}

// EventSent is event_send's StatusOK data: what became of the event. To a run: State
// (EventDelivered or EventBuffered). To the tenant: the waiting runs it Resolved and the runs
// it Started. Duplicate is set when the same send was made before (the step's callback ran
// again): nothing changed, and the rest is the first sending's, as far as the host knows it.
type EventSent struct {
	State     string   `json:"state,omitempty"`
	Resolved  int      `json:"resolved,omitempty"`
	Started   []string `json:"started,omitempty"`
	Duplicate bool     `json:"duplicate,omitempty"`
}

// EventSent states.
const (
	EventDelivered = "delivered" // a wait of the run took it
	EventBuffered  = "buffered"  // kept for the run's next matching wait
)

// WaitOptions is wait_event's opts JSON (DecodeWaitOptions).
type WaitOptions struct {
	// Event is the event name to wait for; required.
	Event string `json:"event"`
	// Match, if set, is a JSON object that CheckJSON accepts; an event resolves the wait only if
	// its payload is a JSON superset of Match (Postgres `payload @> match`).
	Match json.RawMessage `json:"match,omitempty"`
	// TimeoutMs > 0 resolves the wait with StatusTimeout after that long (at most MaxDelay);
	// 0 waits forever.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// ErrorInfo is how errors cross the ABI and are stored: a step's error (step_done with
// OutcomeError, StatusStepFailed replies) and a run's error (fail, and errors the host records).
type ErrorInfo struct {
	// Code classifies the error; guests choose their own, the host uses the Code* constants.
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	// NonRetryable, set by a guest on a step error, skips the remaining attempts.
	NonRetryable bool `json:"nonRetryable,omitempty"`
	// Details is any JSON the guest attached.
	Details json.RawMessage `json:"details,omitempty"`
}

// Error makes ErrorInfo usable as a Go error on the host side.
func (e *ErrorInfo) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// HostCodes are the error codes the host assigns to a run's or a step's error (ABI.md §5), and
// CapabilityCodes those of a capability call's StatusError reply (§4.11, §4.12). Read-only.
var (
	HostCodes = []string{
		CodeWorkflowError, CodeTrap, CodeDeadline, CodeABIViolation, CodePayloadTooLarge,
		CodeNondeterministic, CodeCancelled, CodeNoResult, CodeUnknownWorkflow, CodeStepLimit,
		CodeMemoryLimit, CodeNotStorable, CodeStoreRefused, CodeNoProgress, CodeTimeout, CodeRunTimeout,
		CodeChildFailed, CodeChildRefused, CodeBranchFailed,
	}
	CapabilityCodes = []string{
		CodeOutsideStep, CodeHTTPDenied, CodeHTTPFailed, CodeHTTPTimeout, CodeHTTPTooLarge,
		CodeSecretNotFound, CodeEventRefused,
	}
)

// Error codes the host assigns.
const (
	CodeWorkflowError    = "workflow_error"    // the guest returned an error without a code
	CodeTrap             = "trap"              // the guest trapped (panic, unreachable, out of memory)
	CodeDeadline         = "deadline_exceeded" // an activation ran past its wall-time limit
	CodeABIViolation     = "abi_violation"     // the guest broke this ABI (bad pointer, bad JSON, ...)
	CodePayloadTooLarge  = "payload_too_large" // an input, output or step output over its limit
	CodeNondeterministic = "nondeterministic"  // replay met a different step than the journal holds
	CodeCancelled        = "cancelled"
	CodeNoResult         = "no_result"        // wfhost_run returned without complete or fail
	CodeUnknownWorkflow  = "unknown_workflow" // the module does not declare the workflow
	CodeStepLimit        = "step_limit"       // the run reached its maximum number of steps
	CodeMemoryLimit      = "memory_limit"     // the module needs more memory than the run's limit allows
	CodeStoreRefused     = "store_refused"    // the store refused a value the run wrote (ABI.md §5)
	CodeNoProgress       = "no_progress"      // activated too often in a row without journal progress (ABI.md §5)
	// CodeTimeout: a step attempt's callback ran past the step's timeoutMs, or past the
	// activation's wall-time limit; the attempt fails with it and is retried by the policy.
	CodeTimeout = "timeout"
	// CodeRunTimeout: the run reached its deadline (a start's timeoutMs) before it ended.
	CodeRunTimeout = "run_timeout"
	// CodeNotStorable: a JSON value the guest wrote (a step output, the run's output, a wait's
	// match) breaks CheckJSON, so no store could keep it. A step output fails the step (final,
	// never retried: the same code writes the same value); the others fail the run.
	CodeNotStorable = "not_storable"
	// CodeChildFailed: an awaited child run failed or was cancelled (child_run's step error,
	// never retried; details: the child's run id, status and error).
	CodeChildFailed = "child_failed"
	// CodeChildRefused: a child run could not be started: its id is another run's, or the
	// tenant has no such workflow (version).
	CodeChildRefused = "child_refused"
	// CodeBranchFailed: parallel_run's join failed (a branch of an "all" join failed or was
	// cancelled, or every branch of a "first" join did); never retried; details: a
	// BranchFailure.
	CodeBranchFailed = "branch_failed"

	// Capability errors (StatusError replies of http_request and secret_get).
	CodeOutsideStep    = "outside_step"     // a capability used outside a step callback
	CodeHTTPDenied     = "http_denied"      // the host, address or redirect is not allowed
	CodeHTTPFailed     = "http_failed"      // the request could not be made (DNS, connect, TLS, ...)
	CodeHTTPTimeout    = "http_timeout"     // no complete response within the request's time
	CodeHTTPTooLarge   = "http_too_large"   // the request or the response body is over its limit
	CodeSecretNotFound = "secret_not_found" // the tenant has no secret of that name
	CodeEventRefused   = "event_refused"    // no such run, the run ended, its buffer is full, the event too large (§4.13)
)

// Secret values (ABI.md §4.12). A value shorter than MinSecretBytes would turn redaction into
// noise (every "abc" in every output replaced) or, shorter still, into a leak of its own: the
// redaction marker would contain it.
const (
	MinSecretBytes = 8
	MaxSecretBytes = 64 << 10
	// Redacted replaces a secret's value wherever a run writes it out.
	Redacted = "[redacted]"
)

// HTTPRequest is http_request's argument.
type HTTPRequest struct {
	Method  string              `json:"method"` // default GET
	URL     string              `json:"url"`    // http or https, absolute
	Headers map[string][]string `json:"headers,omitempty"`
	Body    []byte              `json:"body,omitempty"` // base64 in JSON
	// TimeoutMs bounds the request; the host also bounds it by its own limit and the
	// activation's deadline. 0 takes the host's limit.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// HTTPResponse is http_request's StatusOK data.
type HTTPResponse struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers,omitempty"`
	Body    []byte              `json:"body,omitempty"` // base64 in JSON
}

// StepAttempt is the pending data of step_run's StatusExecute reply: which try of the step
// the callback about to run is, 1 on the first and counting up with each retry.
type StepAttempt struct {
	Attempt int `json:"attempt"`
}

// JSON is a's encoding, {"attempt":N}.
func (a StepAttempt) JSON() []byte {
	return []byte(`{"attempt":` + strconv.Itoa(a.Attempt) + `}`)
}

// WaitTimeout is the JSON a timed-out wait journals.
const WaitTimeout = `{"timeout":true}`

// Parallel is parallel_run's req JSON (DecodeParallel): how many branches, how they join, and
// how many of them may run at once (0: DefaultMaxConcurrent, never more than Branches).
type Parallel struct {
	Branches      int    `json:"branches"`
	Join          string `json:"join,omitempty"`
	MaxConcurrent int    `json:"maxConcurrent,omitempty"`
}

// Joins (Parallel.Join): when parallel_run's step resolves.
const (
	JoinAll        = "all"        // OK when every branch completed; STEP_FAILED at the first that did not
	JoinFirst      = "first"      // OK at the first branch that completed; STEP_FAILED when none did
	JoinAllSettled = "allSettled" // OK when every branch ended, whatever their ends
)

// MaxBranches bounds a parallel_run's branches; DefaultMaxConcurrent is how many of them run
// at once when the request leaves it to the host.
const (
	MaxBranches          = 64
	DefaultMaxConcurrent = 16
)

// Branch is StatusBranch's pending data: the branch the pass is to run, from 0.
type Branch struct {
	Branch int `json:"branch"`
}

// ParallelResult is parallel_run's StatusOK data: one entry per branch, in branch order, and
// the index of the first branch to complete (-1 when none did).
type ParallelResult struct {
	Branches []BranchResult `json:"branches"`
	First    int            `json:"first"`
}

// BranchResult is one branch's end in a ParallelResult: BranchCompleted with its Output,
// BranchFailed with its Error (failed, or cancelled by anything but the join), or
// BranchCancelled for a branch the join cancelled or never started.
type BranchResult struct {
	Status string          `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  *ErrorInfo      `json:"error,omitempty"`
}

// BranchResult statuses.
const (
	BranchCompleted = "completed"
	BranchFailed    = "failed"
	BranchCancelled = "cancelled"
)

// BranchFailure is the details of a CodeBranchFailed error: the branch whose end decided the
// join, its run, how it ended and its error.
type BranchFailure struct {
	Branch int        `json:"branch"`
	RunID  string     `json:"runId"`
	Status string     `json:"status"`
	Error  *ErrorInfo `json:"error"`
}
