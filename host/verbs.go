package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// The workflow verbs, whatever the transport. A transport (the native wfhost import module in
// hostfuncs.go, the Extism host functions in extism_funcs.go) decodes a call's scalars, says
// where its data arguments are, and hands the Reply back to the guest in its own way; what a
// verb means (validation, journal, step state, redaction, capability policy) is written once,
// here and in outbound.go.

// span is one data argument: n bytes at ptr in the memory the transport names (the guest's own
// memory for a native module; Extism's kernel memory, where the guest's blocks live, for an
// Extism module).
type span struct{ ptr, n uint32 }

// arg is one argument of a call as its transport decoded it: a data span (abi.Data), or a
// scalar's bits.
type arg struct {
	span   span
	scalar uint64
}

func (a arg) i32() int32 { return api.DecodeI32(a.scalar) }
func (a arg) i64() int64 { return int64(a.scalar) }

// args are a call's arguments in the order of its abi.HostFuncs row. An array passed by value,
// so a call allocates nothing for them.
type args [abi.MaxParams]arg

// verb is a workflow verb as both transports call it. A verb whose row has no reply
// (abi.HostFunc.Reply) returns the zero Reply, which the transport drops.
type verb func(ctx context.Context, st *state, mem api.Memory, a args) Reply

// verbs are the workflow verbs by host function name, each reading its arguments as its
// abi.HostFuncs row orders them. Every row has one (TestEveryHostFuncHasAVerb).
var verbs = map[string]verb{
	abi.FuncStepRun: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.stepRun(ctx, mem, a[0].span, a[1].span)
	},
	abi.FuncStepDone: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.stepDone(ctx, mem, abi.Outcome(a[0].i32()), a[1].span)
	},
	abi.FuncSleep: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.sleep(ctx, mem, a[0].span, a[1].i64())
	},
	abi.FuncSleepUntil: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.sleepUntil(ctx, mem, a[0].span, a[1].i64())
	},
	abi.FuncWaitEvent: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.waitEvent(ctx, mem, a[0].span, a[1].span)
	},
	abi.FuncTake: func(_ context.Context, st *state, mem api.Memory, a args) Reply {
		st.take(mem, a[0].span)
		return Reply{}
	},
	abi.FuncLog: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		st.log(ctx, mem, a[0].i32(), a[1].span)
		return Reply{}
	},
	abi.FuncComplete: func(_ context.Context, st *state, mem api.Memory, a args) Reply {
		st.notBranched(abi.FuncComplete)
		st.complete(mem, a[0].span)
		return Reply{}
	},
	abi.FuncFail: func(_ context.Context, st *state, mem api.Memory, a args) Reply {
		st.notBranched(abi.FuncFail)
		st.fail(mem, a[0].span)
		return Reply{}
	},
	abi.FuncHTTPRequest: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.httpRequest(ctx, mem, a[0].span)
	},
	abi.FuncSecretGet: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.secretGet(ctx, mem, a[0].span)
	},
	abi.FuncEventSend: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.eventSend(ctx, mem, a[0].span)
	},
	abi.FuncChildRun: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.childRun(ctx, mem, a[0].span, a[1].span)
	},
	abi.FuncContinueAsNew: func(_ context.Context, st *state, mem api.Memory, a args) Reply {
		st.notBranched(abi.FuncContinueAsNew)
		st.continueAsNew(mem, a[0].span)
		return Reply{}
	},
	abi.FuncQueryRespond: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		st.queryRespond(ctx, mem, abi.Outcome(a[0].i32()), a[1].span)
		return Reply{}
	},
	abi.FuncParallelRun: func(ctx context.Context, st *state, mem api.Memory, a args) Reply {
		return st.parallelRun(ctx, mem, a[0].span, a[1].span)
	},
	abi.FuncBranchDone: func(_ context.Context, st *state, mem api.Memory, a args) Reply {
		st.branchDone(mem, abi.Outcome(a[0].i32()), a[1].span)
		return Reply{}
	},
}

// maxLogBytes bounds one guest log message; longer ones are cut.
const maxLogBytes = 4 << 10

// enter starts every host call: it finds the activation and refuses calls that come from none
// (a describe) or after the pass ended.
func enter(ctx context.Context, name string) *state {
	st := stateFrom(ctx)
	if st == nil {
		panic(guestError(abi.CodeABIViolation, "%s called outside an activation", name))
	}
	// The host's work is not the guest's: the core goes back to the tenant until the call
	// returns to the guest (backOnCore).
	st.core.give()
	if st.handler == nil && name != abi.FuncLog {
		st.violation("%s called during describe; host functions work only while a workflow runs", name)
	}
	if st.result != nil && name != abi.FuncLog {
		st.violation("%s called after the workflow finished with complete or fail", name)
	}
	if name != abi.FuncTake {
		// ABI.md §4.1: any call but take discards data the guest did not collect.
		st.pending, st.hasPend = nil, false
	}
	return st
}

// violation ends the pass: the guest broke the ABI.
func (st *state) violation(format string, args ...any) {
	st.fault = guestError(abi.CodeABIViolation, format, args...)
	panic(st.fault)
}

// stop ends the pass with a handler error (a suspension, a lost lease, a store failure).
func (st *state) stop(err error) {
	st.abort = err
	panic(err)
}

// read copies a data argument out of mem, trapping when it is not all there or exceeds limit.
func (st *state) read(mem api.Memory, fn string, s span, limit int, what string) []byte {
	if int64(s.n) > int64(limit) {
		st.violation("%s: %s is %d bytes, the limit is %d", fn, what, s.n, limit)
	}
	b, ok := mem.Read(s.ptr, s.n)
	if !ok {
		st.violation("%s: %s at %d+%d is outside the guest's memory (%d bytes)", fn, what, s.ptr, s.n, mem.Size())
	}
	return bytes.Clone(b)
}

// name reads a step, sleep or wait name and returns it redacted (redactName): the name is
// the step's journal key, served by the API, carried by logs, traces and metrics.
func (st *state) name(mem api.Memory, fn string, s span) string {
	name := string(st.read(mem, fn, s, abi.MaxNameLen, "step name"))
	if err := abi.CheckName("step", name); err != nil {
		st.violation("%s: %v", fn, err)
	}
	return st.redactName(name)
}

func (st *state) notInStep(fn string) {
	if st.inStep {
		st.violation("%s called inside a step callback; steps do not nest", fn)
	}
}

// answer ends a verb with a Handler's reply, or with its error. An *Answer error is a reply
// in place of the verb's own (a query's frontier, ABI.md §4.17).
func (st *state) answer(r Reply, err error) Reply {
	var a *Answer
	if errors.As(err, &a) {
		return a.Reply
	}
	if err != nil {
		st.stop(err)
	}
	return r
}

func (st *state) stepRun(ctx context.Context, mem api.Memory, nameArg, optsArg span) Reply {
	st.notInStep(abi.FuncStepRun)
	name := st.name(mem, abi.FuncStepRun, nameArg)
	opts, err := abi.DecodeStepOptions(st.read(mem, abi.FuncStepRun, optsArg, abi.MaxOptionsBytes, "options"))
	if err != nil {
		st.violation("%s %q: %v", abi.FuncStepRun, name, err)
	}
	r, err := st.handler.StepRun(ctx, name, opts)
	if err == nil && r.Status == abi.StatusExecute {
		st.inStep, st.sends = true, 0
		st.startAttempt(time.Duration(opts.TimeoutMs) * time.Millisecond)
	}
	return st.answer(r, err)
}

func (st *state) stepDone(ctx context.Context, mem api.Memory, outcome abi.Outcome, dataArg span) Reply {
	if !st.inStep {
		st.violation("%s called with no step callback running", abi.FuncStepDone)
	}
	if outcome != abi.OutcomeOK && outcome != abi.OutcomeError {
		st.violation("%s: outcome %d is neither 0 (ok) nor 1 (error)", abi.FuncStepDone, outcome)
	}
	if limit, timedOut := st.endAttempt(); timedOut {
		// The timeout fired first: the guest is being stopped, and this result is dropped.
		st.stop(st.attemptTimedOut(context.WithoutCancel(ctx), timeoutMessage(limit)))
	}
	st.inStep = false
	var info abi.ErrorInfo
	switch {
	case int64(dataArg.n) > int64(st.limits.MaxStepOutputBytes):
		// An oversized result is the step's fault, not the ABI's: journal it as a final error
		// the workflow can see and handle.
		info = abi.ErrorInfo{
			Code:         abi.CodePayloadTooLarge,
			Message:      fmt.Sprintf("step output is %d bytes, the limit is %d", dataArg.n, st.limits.MaxStepOutputBytes),
			NonRetryable: true,
		}
	case outcome == abi.OutcomeOK:
		out := st.read(mem, abi.FuncStepDone, dataArg, st.limits.MaxStepOutputBytes, "step result")
		if !json.Valid(out) {
			st.violation("%s: step output is not valid JSON", abi.FuncStepDone)
		}
		if err := abi.CheckJSON(out); err != nil {
			// Valid JSON no store keeps (a NUL, a lone surrogate, invalid UTF-8, a number out
			// of range): the same code would write it again, so the step fails for good.
			info = abi.ErrorInfo{Code: abi.CodeNotStorable, Message: "step output cannot be stored: " + err.Error(), NonRetryable: true}
			break
		}
		return st.answer(st.handler.StepDone(ctx, abi.OutcomeOK, st.redactJSON(out)))
	default:
		info = abi.ParseErrorInfo(st.read(mem, abi.FuncStepDone, dataArg, st.limits.MaxStepOutputBytes, "step error"))
	}
	data, _ := json.Marshal(st.storableError(info))
	return st.answer(st.handler.StepDone(ctx, abi.OutcomeError, data))
}

func (st *state) sleep(ctx context.Context, mem api.Memory, nameArg span, ms int64) Reply {
	st.notInStep(abi.FuncSleep)
	name := st.name(mem, abi.FuncSleep, nameArg)
	d := abi.MaxDelay
	if ms < abi.MaxDelay.Milliseconds() {
		d = time.Duration(ms) * time.Millisecond
	}
	return st.answer(st.handler.Sleep(ctx, name, d))
}

func (st *state) sleepUntil(ctx context.Context, mem api.Memory, nameArg span, ms int64) Reply {
	st.notInStep(abi.FuncSleepUntil)
	name := st.name(mem, abi.FuncSleepUntil, nameArg)
	limit := time.Now().Add(abi.MaxDelay).UnixMilli()
	ms = min(max(ms, 0), limit, math.MaxInt64)
	return st.answer(st.handler.SleepUntil(ctx, name, time.UnixMilli(ms).UTC()))
}

func (st *state) waitEvent(ctx context.Context, mem api.Memory, nameArg, optsArg span) Reply {
	st.notInStep(abi.FuncWaitEvent)
	name := st.name(mem, abi.FuncWaitEvent, nameArg)
	opts, err := abi.DecodeWaitOptions(st.read(mem, abi.FuncWaitEvent, optsArg, abi.MaxOptionsBytes, "options"))
	if errors.Is(err, abi.ErrNotStorable) {
		st.fault = guestError(abi.CodeNotStorable, "%s %q: %v", abi.FuncWaitEvent, name, err)
		panic(st.fault)
	}
	if err != nil {
		st.violation("%s %q: %v", abi.FuncWaitEvent, name, err)
	}
	// The event name and match are stored with the wait, and the name labels its metrics.
	opts.Event = st.redactName(opts.Event)
	if opts.Match != nil {
		opts.Match = st.redactJSON(opts.Match)
	}
	return st.answer(st.handler.WaitEvent(ctx, name, opts))
}

func (st *state) log(ctx context.Context, mem api.Memory, level int32, msgArg span) {
	if _, ok := mem.Read(msgArg.ptr, msgArg.n); !ok {
		st.violation("%s: message at %d+%d is outside the guest's memory", abi.FuncLog, msgArg.ptr, msgArg.n)
	}
	// Read past the cut as far as a secret can reach, so it is redacted whole before the cut.
	raw := st.read(mem, abi.FuncLog, span{msgArg.ptr, min(msgArg.n, keptLineBytes)}, keptLineBytes, "message")
	msg := st.storableText(raw, maxLogBytes)
	lvl := slog.LevelInfo
	switch {
	case level <= abi.LogDebug:
		lvl = slog.LevelDebug
	case level == abi.LogWarn:
		lvl = slog.LevelWarn
	case level >= abi.LogError:
		lvl = slog.LevelError
	}
	st.logger.Log(ctx, lvl, msg, st.logAttrs()...)
}

func (st *state) complete(mem api.Memory, outArg span) {
	st.notInStep(abi.FuncComplete)
	if int64(outArg.n) > int64(st.limits.MaxOutputBytes) {
		st.fault = guestError(abi.CodePayloadTooLarge, "workflow output is %d bytes, the limit is %d", outArg.n, st.limits.MaxOutputBytes)
		panic(st.fault)
	}
	out := st.read(mem, abi.FuncComplete, outArg, st.limits.MaxOutputBytes, "output")
	if len(out) == 0 {
		out = []byte("null")
	}
	if !json.Valid(out) {
		st.violation("%s: output is not valid JSON", abi.FuncComplete)
	}
	if err := abi.CheckJSON(out); err != nil {
		st.fault = guestError(abi.CodeNotStorable, "workflow output cannot be stored: %v", err)
		panic(st.fault)
	}
	st.result = &Result{Output: st.redactJSON(out)}
}

// errContinued unwinds a guest that called continue_as_new; passEnded turns it into the Result.
var errContinued = errors.New("continued as new")

// continueAsNew ends the pass as complete does, with the next run's input instead of an output,
// and never returns to the guest: nothing it could do after would be kept (ABI.md §4.14). The
// input is bounded by the output limit, as the value a pass hands on; the engine holds it to
// the tenant's input limit too.
func (st *state) continueAsNew(mem api.Memory, reqArg span) {
	st.notInStep(abi.FuncContinueAsNew)
	limit := st.limits.MaxOutputBytes + abi.MaxOptionsBytes
	if int64(reqArg.n) > int64(limit) {
		st.fault = guestError(abi.CodePayloadTooLarge, "continue_as_new request is %d bytes, the limit is %d", reqArg.n, limit)
		panic(st.fault)
	}
	req, err := abi.DecodeContinueAsNew(st.read(mem, abi.FuncContinueAsNew, reqArg, limit, "request"))
	if errors.Is(err, abi.ErrNotStorable) {
		// As complete's output: a value no store keeps is the workflow's failure, not a broken call.
		st.fault = guestError(abi.CodeNotStorable, "%s: the next run's input cannot be stored: %v", abi.FuncContinueAsNew, err)
		panic(st.fault)
	}
	if err != nil {
		st.violation("%s: %v", abi.FuncContinueAsNew, err)
	}
	req.Input = st.redactJSON(req.Input)
	st.result = &Result{Continue: &req}
	panic(errContinued)
}

func (st *state) fail(mem api.Memory, errArg span) {
	st.notInStep(abi.FuncFail)
	// An error over the output limit is kept cut (its first words say most), but read as far
	// past the limit as a secret can reach, so the cut comes after the redaction.
	limit := st.limits.MaxOutputBytes + abi.MaxSecretBytes
	errArg.n = uint32(min(int64(errArg.n), int64(limit)))
	info := st.storableError(abi.ParseErrorInfo(st.read(mem, abi.FuncFail, errArg, limit, "error")))
	info.Message = st.cutText(info.Message, st.limits.MaxOutputBytes)
	st.result = &Result{Error: &info}
}
