package abi

import "strconv"

// Version is the ABI version this host implements. A guest declares the version it was built
// against by exporting ExportABIVersion returning this number; the host refuses any other.
const Version = 1

// ImportModule is the wasm import module name of every wfhost host function.
const ImportModule = "wfhost"

// Status is the low half of a host function's i64 reply.
type Status int32

// Reply statuses. Anything a guest cannot recover from is a trap, not a status.
const (
	// StatusOK: the call succeeded; pending data (if any) is the result.
	StatusOK Status = 0
	// StatusExecute: step_run found no journaled result; run the step's callback now and
	// report it with step_done.
	StatusExecute Status = 1
	// StatusStepFailed: the step's journaled outcome is an error (attempts spent or
	// non-retryable); pending data is the ErrorInfo JSON.
	StatusStepFailed Status = 2
	// StatusTimeout: wait_event timed out before a matching event arrived.
	StatusTimeout Status = 3
	// StatusError: a capability call (http_request, secret_get) was refused or failed; the
	// pending data is an ErrorInfo JSON. The workflow decides what to do with it.
	StatusError Status = 4
	// StatusCancelled: sleep or wait_event ended early because the run was cancelled
	// (ABI.md §4.15); pending data is the cancellation's ErrorInfo JSON. Only a module whose
	// description declares FeatureCancel is ever sent it.
	StatusCancelled Status = 5
	// StatusQuery: a query asks the workflow for its state (ABI.md §4.17). The durable call
	// the replayed journal does not answer (step_run, sleep, sleep_until, wait_event, or any
	// later kind of durable call) answers it instead of executing or suspending; pending data
	// is a Query JSON, and the guest answers with query_respond, which never returns. Only a
	// module whose description declares FeatureQuery is ever sent it.
	StatusQuery Status = 6
	// StatusBranch: parallel_run reached, in a branch's own pass, the call that forked the
	// branch (ABI.md §4.18): run branch i (pending data a Branch JSON) and end the pass with
	// branch_done. Only a branch run is ever sent it, and only there.
	StatusBranch Status = 7
)

// Statuses are every reply status, in ABI.md §4.1's order. Read-only.
var Statuses = []Status{StatusOK, StatusExecute, StatusStepFailed, StatusTimeout, StatusError, StatusCancelled, StatusQuery, StatusBranch}

// String names the status for logs and errors; ABI.md writes it in capitals.
func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusExecute:
		return "execute"
	case StatusStepFailed:
		return "step_failed"
	case StatusTimeout:
		return "timeout"
	case StatusError:
		return "error"
	case StatusCancelled:
		return "cancelled"
	case StatusQuery:
		return "query"
	case StatusBranch:
		return "branch"
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// Outcome is step_done's first argument.
type Outcome int32

const (
	// OutcomeOK: the callback returned a value; data is its JSON.
	OutcomeOK Outcome = 0
	// OutcomeError: the callback returned an error; data is an ErrorInfo JSON.
	OutcomeError Outcome = 1
)

// Log levels for FuncLog, numbered like slog's levels divided by 4.
const (
	LogDebug int32 = -1
	LogInfo  int32 = 0
	LogWarn  int32 = 1
	LogError int32 = 2
)

// PackReply packs a status and the length of the pending data into a host function's i64 result.
func PackReply(s Status, dataLen uint32) uint64 {
	return uint64(dataLen)<<32 | uint64(uint32(s))
}

// UnpackReply is the guest-side inverse of PackReply.
func UnpackReply(r uint64) (Status, uint32) {
	return Status(int32(uint32(r))), uint32(r >> 32)
}

// PackPtrLen packs a guest buffer into the i64 that ExportDescribe returns.
func PackPtrLen(ptr, length uint32) uint64 { return uint64(ptr)<<32 | uint64(length) }

// UnpackPtrLen is the inverse of PackPtrLen.
func UnpackPtrLen(v uint64) (ptr, length uint32) { return uint32(v >> 32), uint32(v) }

// MaxNameLen bounds a step or workflow name in bytes.
const MaxNameLen = 200

// SuffixSep separates a repeated step name from its occurrence number ("poll#1"); guests may
// not use it in names.
const SuffixSep = "#"
