package wf

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
)

// Reply statuses and outcomes of abi/ABI.md §4.1; the SDK keeps its own copy so a guest never
// depends on the host module.
const (
	statusOK         = 0
	statusExecute    = 1
	statusStepFailed = 2
	statusTimeout    = 3
	statusCancelled  = 5

	outcomeOK    = 0
	outcomeError = 1
)

// abiVersion is the ABI this SDK speaks.
const abiVersion = 1

// RetryPolicy says how often and how fast a failed step is tried again. Zero fields take the
// workflow's policy, then the host's default (3 attempts, exponential 1s to 60s, 20% jitter).
type RetryPolicy struct {
	// Attempts counts every try, the first one included.
	Attempts int `json:"attempts,omitempty"`
	// Backoff is "fixed", "linear" or "exp".
	Backoff string        `json:"backoff,omitempty"`
	Base    time.Duration `json:"-"`
	Max     time.Duration `json:"-"`
	// Jitter is the fraction (0..1) by which a delay varies at random.
	Jitter float64 `json:"jitter,omitempty"`
	// OnExhausted is what the step does when its attempts run out: "fail" (the default: the
	// error is returned to the workflow) or "pause" (the run pauses for an operator to fix the
	// cause and resume it, which tries the step once more).
	OnExhausted string `json:"onExhausted,omitempty"`
}

// MarshalJSON writes the policy in the ABI's shape (milliseconds).
func (p RetryPolicy) MarshalJSON() ([]byte, error) {
	type wire struct {
		Attempts    int     `json:"attempts,omitempty"`
		Backoff     string  `json:"backoff,omitempty"`
		BaseMs      int64   `json:"baseMs,omitempty"`
		MaxMs       int64   `json:"maxMs,omitempty"`
		Jitter      float64 `json:"jitter,omitempty"`
		OnExhausted string  `json:"onExhausted,omitempty"`
	}
	return json.Marshal(wire{p.Attempts, p.Backoff, p.Base.Milliseconds(), p.Max.Milliseconds(), p.Jitter, p.OnExhausted})
}

// Workflow declares a workflow: its identity, defaults and body. I and O are its input and
// output types, carried as JSON.
type Workflow[I, O any] struct {
	Name    string
	Version string
	// RetentionDays keeps a finished run this long; 0 takes the operator's default.
	RetentionDays int
	// Retry is the default policy of the workflow's steps.
	Retry *RetryPolicy
	// Triggers are event names whose broadcast starts a run.
	Triggers []string
	// Flow is the workflow's flow control (concurrency, rate, debounce per key, priority);
	// nil: none.
	Flow *Flow
	// OnEnd are the workflow's completion hooks (at most 16): what starts, or which webhook
	// is called, when one of its runs ends.
	OnEnd []Hook
	// Run is the workflow body. Outside Step callbacks it must be deterministic: the host
	// replays it from the top after every suspension, feeding it the journaled results.
	Run func(ctx *Context, input I) (O, error)
}

type registered struct {
	decl workflowDecl
	run  func(ctx *Context, input []byte) ([]byte, error)
}

type workflowDecl struct {
	Name          string       `json:"name"`
	Version       string       `json:"version"`
	RetentionDays int          `json:"retentionDays,omitempty"`
	Retry         *RetryPolicy `json:"retry,omitempty"`
	Triggers      []string     `json:"triggers,omitempty"`
	Flow          *Flow        `json:"flow,omitempty"`
	OnEnd         []Hook       `json:"onEnd,omitempty"`
}

var workflows []registered

// Register adds a workflow to the module. Call it from an init function.
func Register[I, O any](w Workflow[I, O]) {
	warmUp[I, O]()
	workflows = append(workflows, registered{
		decl: workflowDecl{Name: w.Name, Version: w.Version, RetentionDays: w.RetentionDays, Retry: w.Retry, Triggers: w.Triggers, Flow: w.Flow, OnEnd: w.OnEnd},
		run: func(ctx *Context, raw []byte) ([]byte, error) {
			var in I
			if len(raw) > 0 && string(raw) != "null" {
				if err := json.Unmarshal(raw, &in); err != nil {
					return nil, &Error{Code: "invalid_input", Message: "decode workflow input: " + err.Error(), NonRetryable: true}
				}
			}
			out, err := w.Run(ctx, in)
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		},
	})
}

// warmUp runs encoding/json over the workflow's input and output types once and then collects
// the heap, while the guest initialises. The host snapshots the guest's memory right after
// initialisation and puts every instance back to that snapshot after each activation, so
// whatever initialisation leaves (json's per-type encoders and field caches, a collected heap)
// every activation starts with, instead of rebuilding the caches and running into a
// collection each time.
func warmUp[I, O any]() {
	var in I
	var out O
	_ = json.Unmarshal([]byte("{}"), &in)
	_, _ = json.Marshal(in)
	_, _ = json.Marshal(out)
	runtime.GC()
}

func describeJSON() []byte {
	decls := make([]workflowDecl, len(workflows))
	for i, w := range workflows {
		decls[i] = w.decl
	}
	// features: this SDK hands a cancellation to the workflow (abi/ABI.md §4.15) and answers
	// queries (§4.17).
	b, _ := json.Marshal(struct {
		Workflows []workflowDecl `json:"workflows"`
		Features  []string       `json:"features"`
	}{decls, []string{"cancel", "query"}})
	return b
}

// Context is the handle a workflow body passes to every durable call.
type Context struct {
	workflow string
	inStep   bool
	queries  map[string]queryHandler // OnQuery's handlers
}

// Workflow is the name of the running workflow.
func (c *Context) Workflow() string { return c.workflow }

// runWorkflow runs one pass and reports its end to the host.
func runWorkflow(name string, input []byte) {
	var target *registered
	for i := range workflows {
		if workflows[i].decl.Name == name {
			target = &workflows[i]
		}
	}
	if target == nil {
		failWith(errorInfo{Code: "unknown_workflow", Message: "this module has no workflow " + name})
		return
	}
	ctx := &Context{workflow: name}
	out, err := runGuarded(ctx, target, input)
	if err != nil {
		failWith(toErrorInfo(err))
		return
	}
	callComplete(out)
}

// runGuarded turns a panic in workflow code into the run's error, with the stack, instead of a
// trap that says less.
func runGuarded(ctx *Context, w *registered, input []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError("workflow", r)
		}
	}()
	return w.run(ctx, input)
}

// codePanic is the code of a panic the SDK caught (abi/ABI.md §5): the AssemblyScript SDK's
// for an abort in a step, too.
const codePanic = "panic"

// maxStackBytes bounds the stack kept with a panic: the frames that matter are the first, and
// an error must stay far below the run's output limit.
const maxStackBytes = 16 << 10

// panicError is the error of a panic with value r in what ("workflow" or "step"): code panic,
// the panic's value in a one-line message that does not say the code again, and the stack
// in details.stack, where a client shows it once and a transcript does not compare it
// (abi/ABI.md §5).
func panicError(what string, r any) *Error {
	e := &Error{Code: codePanic, Message: fmt.Sprintf("%s panicked: %v", what, r)}
	// TinyGo's debug.Stack is empty: then no details rather than an empty stack.
	if stack := debug.Stack(); len(stack) > 0 {
		e.Details, _ = json.Marshal(struct {
			Stack string `json:"stack"`
		}{string(cutStack(stack))})
	}
	return e
}

// cutStack is stack within maxStackBytes, its head kept and "..." saying lines went.
func cutStack(stack []byte) []byte {
	if len(stack) <= maxStackBytes {
		return stack
	}
	return append(stack[:maxStackBytes:maxStackBytes], "\n..."...)
}

func failWith(info errorInfo) {
	b, _ := json.Marshal(info)
	callFail(b)
}

// Log writes a record to the host's log, tagged with the tenant, workflow, run and step.
func Log(ctx *Context, format string, args ...any) { logAt(0, format, args...) }

// Warn logs at warning level.
func Warn(ctx *Context, format string, args ...any) { logAt(1, format, args...) }

func logAt(level uint32, format string, args ...any) {
	callLog(level, []byte(fmt.Sprintf(format, args...)))
}

// StepContext is what a step callback receives.
type StepContext struct {
	// Attempt is 1 on the first try of the step and counts up with each retry.
	Attempt int
}

type stepConfig struct {
	Retry     *RetryPolicy `json:"retry,omitempty"`
	TimeoutMs int64        `json:"timeoutMs,omitempty"`
}

// StepOption adjusts one step.
type StepOption func(*stepConfig)

// WithRetry sets the step's retry policy, over the workflow's.
func WithRetry(p RetryPolicy) StepOption { return func(c *stepConfig) { c.Retry = &p } }

// WithTimeout bounds each attempt of the step: an attempt whose fn has not returned within d
// is stopped by the host where it is (an outbound request in flight is cancelled), fails with
// the code "timeout" and is retried by the step's policy (abi/ABI.md §4.4). Nothing fn did
// after the timeout reaches the journal. d is rounded down to milliseconds; under one
// millisecond is no timeout.
func WithTimeout(d time.Duration) StepOption {
	return func(c *stepConfig) { c.TimeoutMs = d.Milliseconds() }
}

// Step runs fn as a durable step: its result is journaled and on replay returned without
// running fn again. An error from fn is retried by the step's policy; once attempts are spent
// (or for a NonRetryable error) Step returns a *StepError the workflow may handle.
//
// fn may run more than once (at least once, never concurrently); make its side effects
// idempotent. The workflow sees the result decoded from the JSON the host committed, on the
// first pass as on replay.
func Step[T any](ctx *Context, name string, fn func(sc *StepContext) (T, error), opts ...StepOption) (T, error) {
	var zero T
	var cfg stepConfig
	for _, o := range opts {
		o(&cfg)
	}
	var optsJSON []byte
	if cfg.Retry != nil || cfg.TimeoutMs > 0 {
		optsJSON, _ = json.Marshal(cfg)
	}
	status, data := callStepRun([]byte(name), optsJSON)
	if status == statusQuery {
		ctx.answerQuery(data)
	}
	switch status {
	case statusOK:
		return decodeStepOutput[T](name, data)
	case statusStepFailed:
		return zero, stepError(name, data)
	case statusExecute:
	default:
		return zero, &StepError{Step: name, Code: "abi", Message: fmt.Sprintf("unexpected reply status %d", status)}
	}
	var attempt struct {
		Attempt int `json:"attempt"`
	}
	_ = json.Unmarshal(data, &attempt)
	sc := &StepContext{Attempt: max(attempt.Attempt, 1)}

	ctx.inStep = true
	out, err := runStep(sc, fn)
	ctx.inStep = false
	var result []byte
	outcome := uint32(outcomeOK)
	if err == nil {
		result, err = json.Marshal(out)
	}
	if err != nil {
		outcome = outcomeError
		result, _ = json.Marshal(toErrorInfo(err))
	}
	status, data = callStepDone(outcome, result)
	switch status {
	case statusOK:
		return decodeStepOutput[T](name, result)
	case statusStepFailed:
		return zero, stepError(name, data)
	}
	return zero, &StepError{Step: name, Code: "abi", Message: fmt.Sprintf("unexpected reply status %d", status)}
}

// runStep turns a panic in a step callback into the step's error, with the stack, so it is
// retried like one.
func runStep[T any](sc *StepContext, fn func(*StepContext) (T, error)) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError("step", r)
		}
	}()
	return fn(sc)
}

func decodeStepOutput[T any](name string, data []byte) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return v, &StepError{Step: name, Code: "decode", Message: "decode step output: " + err.Error()}
	}
	return v, nil
}

// Sleep suspends the run for d, durably: a crash or restart does not shorten or restart it.
// It returns nil once d has passed, or a cancellation error (IsCancelled) when the run is
// cancelled during it: the workflow may then compensate before it returns the error.
func Sleep(ctx *Context, name string, d time.Duration) error {
	status, data := callSleep([]byte(name), d.Milliseconds())
	return slept(ctx, name, status, data)
}

// SleepUntil suspends the run until t, as Sleep does.
func SleepUntil(ctx *Context, name string, t time.Time) error {
	status, data := callSleepUntil([]byte(name), t.UnixMilli())
	return slept(ctx, name, status, data)
}

// slept is the end of a sleep the host answered with status and data.
func slept(ctx *Context, name string, status int32, data []byte) error {
	if status == statusQuery {
		ctx.answerQuery(data)
	}
	if status == statusCancelled {
		return cancelled("sleep "+name, data)
	}
	return nil
}

// cancelled is the error a call (what) answered with the run's cancellation: its code is
// "cancelled", so a workflow that returns it ends the run cancelled.
func cancelled(what string, data []byte) *Error {
	var info errorInfo
	_ = json.Unmarshal(data, &info)
	return &Error{Code: codeCancelled, Message: what + ": " + cmp.Or(info.Message, "the run was cancelled"), NonRetryable: true}
}

// codeCancelled is the code of a cancellation's error (abi/ABI.md §4.15).
const codeCancelled = "cancelled"

// IsCancelled reports whether err is the run's cancellation, as a step, a sleep or a wait
// returns it once the run is cancelled (abi/ABI.md §4.15). A workflow that sees it may run
// compensation steps, which run as usual, and then return it: the run ends cancelled.
func IsCancelled(err error) bool {
	var (
		se *StepError
		e  *Error
	)
	switch {
	case errors.As(err, &se):
		return se.Code == codeCancelled
	case errors.As(err, &e):
		return e.Code == codeCancelled
	}
	return false
}

type waitConfig struct {
	Event     string `json:"event"`
	Match     any    `json:"match,omitempty"`
	TimeoutMs int64  `json:"timeoutMs,omitempty"`
}

// WaitOption adjusts a WaitForEvent.
type WaitOption func(*waitConfig)

// Match resolves the wait only with an event whose payload is a JSON superset of m.
func Match(m any) WaitOption { return func(c *waitConfig) { c.Match = m } }

// Timeout gives up waiting after d; WaitForEvent then reports timedOut.
func Timeout(d time.Duration) WaitOption {
	return func(c *waitConfig) { c.TimeoutMs = max(d.Milliseconds(), 1) }
}

// WaitForEvent suspends the run until an event named event arrives (one sent to this run,
// before or after the wait was reached, or a broadcast since the run started) and returns its
// payload, or until the timeout passes (timedOut true).
func WaitForEvent[T any](ctx *Context, name, event string, opts ...WaitOption) (payload T, timedOut bool, err error) {
	cfg := waitConfig{Event: event}
	for _, o := range opts {
		o(&cfg)
	}
	optsJSON, err := json.Marshal(cfg)
	if err != nil {
		return payload, false, fmt.Errorf("wait %s: encode match: %w", name, err)
	}
	status, data := callWaitEvent([]byte(name), optsJSON)
	if status == statusQuery {
		ctx.answerQuery(data)
	}
	switch status {
	case statusTimeout:
		return payload, true, nil
	case statusCancelled:
		return payload, false, cancelled("wait "+name, data)
	case statusOK:
		if err := json.Unmarshal(data, &payload); err != nil {
			return payload, false, fmt.Errorf("wait %s: decode event payload: %w", name, err)
		}
		return payload, false, nil
	}
	return payload, false, fmt.Errorf("wait %s: unexpected reply status %d", name, status)
}

// errorInfo is the ABI's error shape.
type errorInfo struct {
	Code         string          `json:"code,omitempty"`
	Message      string          `json:"message"`
	NonRetryable bool            `json:"nonRetryable,omitempty"`
	Details      json.RawMessage `json:"details,omitempty"`
}

// Error is an error with a code, for steps and workflows. A step error with NonRetryable set
// is not retried.
type Error struct {
	Code         string
	Message      string
	NonRetryable bool
	// Details is JSON kept with the error (ErrorInfo.details): a caught panic's
	// {"stack": "..."}, say. Not storable JSON (abi/ABI.md §3) is dropped by the host.
	Details json.RawMessage
}

func (e *Error) Error() string {
	if e.Code == "" {
		return e.Message
	}
	return e.Code + ": " + e.Message
}

// NewError returns an *Error with a code.
func NewError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NonRetryable marks err so the step fails at once, without retries.
func NonRetryable(err error) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.NonRetryable = true
		return &c
	}
	return &Error{Message: err.Error(), NonRetryable: true}
}

// StepError is a step's final failure, as journaled: the workflow sees it when a step's
// attempts are spent, and may compensate or return it.
type StepError struct {
	Step    string
	Code    string
	Message string
	Details json.RawMessage
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %s failed: %s", e.Step, (&Error{Code: e.Code, Message: e.Message}).Error())
}

func stepError(name string, data []byte) *StepError {
	var info errorInfo
	if err := json.Unmarshal(data, &info); err != nil {
		info.Message = string(data)
	}
	return &StepError{Step: name, Code: info.Code, Message: info.Message, Details: info.Details}
}

func toErrorInfo(err error) errorInfo {
	var (
		se *StepError
		e  *Error
	)
	switch {
	case errors.As(err, &se):
		return errorInfo{Code: se.Code, Message: se.Error(), Details: se.Details}
	case errors.As(err, &e):
		return errorInfo{Code: e.Code, Message: e.Message, NonRetryable: e.NonRetryable, Details: e.Details}
	}
	return errorInfo{Message: err.Error()}
}
