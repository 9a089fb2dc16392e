package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/defaults"
)

// Reply is a Handler's answer to a host call: the status the guest sees and the pending data it
// will take.
type Reply struct {
	Status abi.Status
	Data   []byte
}

// Handler gives the host functions of one activation their meaning: the engine implements it
// over the run's journal. The host calls it only from the activation's goroutine, after it has
// read the guest's arguments and checked them by abi's rules, so a Handler checks none of them
// again: every name passes abi.CheckName; StepRun's options are abi.DecodeStepOptions' (any
// retry policy valid) and WaitEvent's abi.DecodeWaitOptions' (the event a name, the match nil
// or a storable object, the timeout 0 to abi.MaxDelay); StepDone comes only after a StepRun
// that returned StatusExecute, with a storable step output, or an error that is the JSON of
// an ErrorInfo as abi.DecodeErrorInfo returns it (storable, with a code). Secrets are already
// redacted from all of them.
//
// A non-nil error aborts the guest: the host function panics with it, wazero unwinds the guest,
// and Activate returns an error that wraps it (errors.As finds the handler's own error types,
// such as the engine's suspension).
type Handler interface {
	StepRun(ctx context.Context, name string, opts abi.StepOptions) (Reply, error)
	StepDone(ctx context.Context, outcome abi.Outcome, data []byte) (Reply, error)
	Sleep(ctx context.Context, name string, d time.Duration) (Reply, error)
	SleepUntil(ctx context.Context, name string, until time.Time) (Reply, error)
	WaitEvent(ctx context.Context, name string, opts abi.WaitOptions) (Reply, error)
	// StepInterrupted is called instead of StepDone when the host stopped the running step's
	// callback (its attempt timeout, or the activation's wall time: ABI.md §4.4), with info
	// (code abi.CodeTimeout) as the attempt's error. It journals the attempt as StepDone
	// journals a retryable error and returns the error the pass ends with: a suspension until
	// the retry's backoff or, with no attempt left, until the run goes on with the step's final
	// failure. The guest cannot continue: its instance is discarded.
	StepInterrupted(ctx context.Context, info abi.ErrorInfo) error
	// Now is the guest's clock outside step callbacks: the time of the latest journal entry
	// reached so far in this pass.
	Now() time.Time
	// CurrentStep is the journal key of the step whose callback is running ("" outside one);
	// guest log records carry it.
	CurrentStep() string
}

// Answer is a Handler error that is a reply to the guest in place of the call's own result:
// whatever the durable call (step_run, sleep, sleep_until, wait_event, or a kind added later),
// the guest is answered Reply and goes on. A query's dry pass answers its frontier so
// (abi.StatusQuery), without each verb knowing about queries.
type Answer struct{ Reply Reply }

func (a *Answer) Error() string { return "answered " + a.Reply.Status.String() }

// QueryResponder is the optional part of a Handler that takes a query's answer (ABI.md
// §4.17). query_respond traps with any other Handler. QueryRespond gets a result (outcome
// OK: storable, redacted JSON within the output limit) or an error (an ErrorInfo JSON, made
// storable and redacted) and returns the error that ends the pass: query_respond never
// returns to the guest.
type QueryResponder interface {
	QueryRespond(ctx context.Context, outcome abi.Outcome, data []byte) error
}

// Limits bound one activation. Zero values take the defaults of DefaultLimits.
type Limits struct {
	MemoryPages        uint32        // linear memory cap, 64 KiB pages
	WallTime           time.Duration // activation deadline
	MaxOutputBytes     int           // complete/fail payload
	MaxStepOutputBytes int           // step_done payload
}

// DefaultLimits returns the value of every zero field of Limits: the tenant defaults of
// internal/defaults, which the engine and the daemon's flags read too.
func DefaultLimits() Limits {
	return Limits{
		MemoryPages:        defaults.MemoryPages,
		WallTime:           defaults.ActivationTimeout,
		MaxOutputBytes:     defaults.MaxOutputBytes,
		MaxStepOutputBytes: defaults.MaxStepOutputBytes,
	}
}

// Activation is one pass of one run over a module.
type Activation struct {
	// Tenant is whose compile slot a compile for this activation's memory limit takes.
	Tenant   string
	Workflow string
	Input    json.RawMessage
	// RunID seeds the guest's random source outside step callbacks.
	RunID   string
	Handler Handler
	Limits  Limits
	// Logger receives guest log calls and stdout/stderr lines; it should carry the tenant,
	// workflow and run attributes.
	Logger *slog.Logger
	// Stats, when not nil, receives the activation's costs, whatever its outcome.
	Stats *Stats
	// Outbound is the policy of http_request; nil refuses every request.
	Outbound *Outbound
	// Resume, when set, starts the pass from a checkpoint of an earlier one (snapshots.go)
	// instead of from the top: the guest goes on in the step_run call it was taken at, and
	// the Handler must be where that call finds the journal. ErrRestore: it could not be.
	Resume *Checkpoint
}

// Stats are what one activation cost the host, for metrics.
type Stats struct {
	// Compile is the time spent compiling the module for this activation's memory limit: zero
	// when the compiled code was already in memory (a cache-directory hit counts as a compile).
	Compile time.Duration
	// Instantiate is the time from a compiled module to an instance ready to run the workflow
	// (instantiation and the guest's own initialisation).
	Instantiate time.Duration
	// MemoryBytes is the instance's linear memory size when the activation ended.
	MemoryBytes uint64
	// Discarded is "" when the instance went back to the idle pool after the activation, or
	// why it was closed instead (a Discard reason); both are also "" for an activation that
	// never had an instance.
	Discarded string
}

// Why an instance was closed after its activation instead of kept idle (Stats.Discarded).
// Every one costs the next activation a fresh instance.
const (
	DiscardFaulted     = "faulted"      // the activation ended in a guest fault: a trap may have left the instance's stack grown
	DiscardClosed      = "closed"       // the guest or the host closed the module (proc_exit, an interrupted call)
	DiscardNotPoolable = "not_poolable" // no reset: no memory, mutable globals it does not export, or pooling off (MaxIdleInstances < 0)
	DiscardMemoryGrown = "memory_grown" // the guest grew its memory past the reset image
	DiscardPoolFull    = "pool_full"    // the idle pool held its limit (Config.MaxIdleInstances)
	DiscardInterrupted = "interrupted"  // an Extism activation whose context ended mid-call
)

// DiscardReasons are every Stats.Discarded value but "".
var DiscardReasons = []string{DiscardFaulted, DiscardClosed, DiscardNotPoolable, DiscardMemoryGrown, DiscardPoolFull, DiscardInterrupted}

// Result is how a pass that ran to its end finished: exactly one of Output, Error and Continue
// is set.
type Result struct {
	Output json.RawMessage
	Error  *abi.ErrorInfo
	// Continue ends the run by starting a fresh one (continue_as_new, ABI.md §4.14).
	Continue *abi.ContinueAsNew
}
