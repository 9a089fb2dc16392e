package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// maxOptionsBytes bounds the options JSON of step_run and wait_event.
const maxOptionsBytes = 64 << 10

// maxLogBytes bounds one guest log message; longer ones are cut.
const maxLogBytes = 4 << 10

// instantiateHostModule registers the wfhost import module in rt. The functions find their
// activation through the context of the guest call, so one registration serves every instance.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(abi.ImportModule)
	fn := func(name string, f api.GoModuleFunc) {
		sig := hostImports[name]
		b.NewFunctionBuilder().WithGoModuleFunction(guard(name, f), sig.params, sig.results).Export(name)
	}
	fn(abi.FuncStepRun, stepRun)
	fn(abi.FuncStepDone, stepDone)
	fn(abi.FuncSleep, sleepFor)
	fn(abi.FuncSleepUntil, sleepUntil)
	fn(abi.FuncWaitEvent, waitEvent)
	fn(abi.FuncTake, take)
	fn(abi.FuncLog, logLine)
	fn(abi.FuncComplete, complete)
	fn(abi.FuncFail, fail)
	fn(abi.FuncHTTPRequest, httpRequest)
	fn(abi.FuncSecretGet, secretGet)
	_, err := b.Instantiate(ctx)
	return err
}

// guard refuses host calls that come from no activation (a describe) or after the pass ended.
func guard(name string, f api.GoModuleFunc) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		st := stateFrom(ctx)
		if st == nil {
			panic(guestError(abi.CodeABIViolation, "%s called outside an activation", name))
		}
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
		f(ctx, mod, stack)
	}
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

// read copies len bytes at ptr out of the guest's memory, trapping when they are not all there
// or exceed limit.
func (st *state) read(mod api.Module, fn string, ptr, n uint32, limit int, what string) []byte {
	if int64(n) > int64(limit) {
		st.violation("%s: %s is %d bytes, the limit is %d", fn, what, n, limit)
	}
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		st.violation("%s: %s at %d+%d is outside the guest's memory (%d bytes)", fn, what, ptr, n, mod.Memory().Size())
	}
	return bytes.Clone(b)
}

func (st *state) name(mod api.Module, fn string, ptr, n uint32) string {
	name := string(st.read(mod, fn, ptr, n, abi.MaxNameLen, "step name"))
	if err := checkName("step", name); err != nil {
		st.violation("%s: %v", fn, err)
	}
	return name
}

func (st *state) notInStep(fn string) {
	if st.inStep {
		st.violation("%s called inside a step callback; steps do not nest", fn)
	}
}

// reply hands a Handler's reply to the guest, keeping its data for take.
func (st *state) reply(r Reply, err error) uint64 {
	if err != nil {
		st.stop(err)
	}
	if len(r.Data) > 0 {
		st.pending, st.hasPend = r.Data, true
	}
	return abi.PackReply(r.Status, uint32(len(r.Data)))
}

func stepRun(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.notInStep(abi.FuncStepRun)
	name := st.name(mod, abi.FuncStepRun, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	var opts abi.StepOptions
	if raw := st.read(mod, abi.FuncStepRun, api.DecodeU32(stack[2]), api.DecodeU32(stack[3]), maxOptionsBytes, "options"); len(raw) > 0 {
		if err := json.Unmarshal(raw, &opts); err != nil {
			st.violation("%s %q: options are not a StepOptions JSON: %v", abi.FuncStepRun, name, err)
		}
		if opts.Retry != nil {
			if err := opts.Retry.Validate(); err != nil {
				st.violation("%s %q: %v", abi.FuncStepRun, name, err)
			}
		}
	}
	r, err := st.handler.StepRun(ctx, name, opts)
	if err == nil && r.Status == abi.StatusExecute {
		st.inStep = true
	}
	stack[0] = st.reply(r, err)
}

func stepDone(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	if !st.inStep {
		st.violation("%s called with no step callback running", abi.FuncStepDone)
	}
	outcome := abi.Outcome(int32(api.DecodeU32(stack[0])))
	ptr, n := api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	if outcome != abi.OutcomeOK && outcome != abi.OutcomeError {
		st.violation("%s: outcome %d is neither 0 (ok) nor 1 (error)", abi.FuncStepDone, outcome)
	}
	st.inStep = false
	var data []byte
	if int64(n) > int64(st.limits.MaxStepOutputBytes) {
		// An oversized result is the step's fault, not the ABI's: journal it as a final error
		// the workflow can see and handle.
		outcome = abi.OutcomeError
		data, _ = json.Marshal(abi.ErrorInfo{
			Code:         abi.CodePayloadTooLarge,
			Message:      fmt.Sprintf("step output is %d bytes, the limit is %d", n, st.limits.MaxStepOutputBytes),
			NonRetryable: true,
		})
	} else {
		data = st.read(mod, abi.FuncStepDone, ptr, n, st.limits.MaxStepOutputBytes, "step result")
		if outcome == abi.OutcomeOK && !json.Valid(data) {
			st.violation("%s: step output is not valid JSON", abi.FuncStepDone)
		}
		if len(st.secrets) > 0 {
			if data = st.redact(data); !json.Valid(data) {
				data = []byte(`"[redacted]"`) // a secret that spanned JSON structure
			}
		}
	}
	r, err := st.handler.StepDone(ctx, outcome, data)
	stack[0] = st.reply(r, err)
}

// maxSleep keeps duration arithmetic far from overflow: a sleep of more than a century is
// taken as a century.
const maxSleep = 100 * 365 * 24 * time.Hour

func sleepFor(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.notInStep(abi.FuncSleep)
	name := st.name(mod, abi.FuncSleep, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	ms := int64(stack[2])
	d := maxSleep
	if ms < int64(maxSleep/time.Millisecond) {
		d = time.Duration(ms) * time.Millisecond
	}
	r, err := st.handler.Sleep(ctx, name, d)
	stack[0] = st.reply(r, err)
}

func sleepUntil(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.notInStep(abi.FuncSleepUntil)
	name := st.name(mod, abi.FuncSleepUntil, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	ms := int64(stack[2])
	limit := time.Now().Add(maxSleep).UnixMilli()
	ms = min(max(ms, 0), limit, math.MaxInt64)
	r, err := st.handler.SleepUntil(ctx, name, time.UnixMilli(ms).UTC())
	stack[0] = st.reply(r, err)
}

func waitEvent(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.notInStep(abi.FuncWaitEvent)
	name := st.name(mod, abi.FuncWaitEvent, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	raw := st.read(mod, abi.FuncWaitEvent, api.DecodeU32(stack[2]), api.DecodeU32(stack[3]), maxOptionsBytes, "options")
	var opts abi.WaitOptions
	if err := json.Unmarshal(raw, &opts); err != nil {
		st.violation("%s %q: options are not a WaitOptions JSON: %v", abi.FuncWaitEvent, name, err)
	}
	if err := checkName("event", opts.Event); err != nil {
		st.violation("%s %q: %v", abi.FuncWaitEvent, name, err)
	}
	if m := bytes.TrimSpace(opts.Match); len(m) > 0 && !bytes.Equal(m, []byte("null")) && m[0] != '{' {
		st.violation("%s %q: match must be a JSON object", abi.FuncWaitEvent, name)
	}
	if opts.TimeoutMs < 0 {
		st.violation("%s %q: timeoutMs must not be negative", abi.FuncWaitEvent, name)
	}
	if opts.TimeoutMs > int64(maxSleep/time.Millisecond) {
		opts.TimeoutMs = int64(maxSleep / time.Millisecond)
	}
	r, err := st.handler.WaitEvent(ctx, name, opts)
	stack[0] = st.reply(r, err)
}

func take(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if !st.hasPend {
		st.violation("%s called with no reply data pending", abi.FuncTake)
	}
	if int(n) != len(st.pending) {
		st.violation("%s: length %d, but %d bytes are pending", abi.FuncTake, n, len(st.pending))
	}
	if !mod.Memory().Write(ptr, st.pending) {
		st.violation("%s: buffer at %d+%d is outside the guest's memory", abi.FuncTake, ptr, n)
	}
	st.pending, st.hasPend = nil, false
}

func logLine(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	level := int32(api.DecodeU32(stack[0]))
	ptr, n := api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	if _, ok := mod.Memory().Read(ptr, n); !ok {
		st.violation("%s: message at %d+%d is outside the guest's memory", abi.FuncLog, ptr, n)
	}
	msg := st.redact(st.read(mod, abi.FuncLog, ptr, min(n, maxLogBytes), maxLogBytes, "message"))
	lvl := slog.LevelInfo
	switch {
	case level <= abi.LogDebug:
		lvl = slog.LevelDebug
	case level == abi.LogWarn:
		lvl = slog.LevelWarn
	case level >= abi.LogError:
		lvl = slog.LevelError
	}
	st.logger.Log(ctx, lvl, string(bytes.ToValidUTF8(msg, []byte("?"))), st.logAttrs()...)
}

func complete(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.notInStep(abi.FuncComplete)
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if int64(n) > int64(st.limits.MaxOutputBytes) {
		st.fault = guestError(abi.CodePayloadTooLarge, "workflow output is %d bytes, the limit is %d", n, st.limits.MaxOutputBytes)
		panic(st.fault)
	}
	out := st.read(mod, abi.FuncComplete, ptr, n, st.limits.MaxOutputBytes, "output")
	if len(out) == 0 {
		out = []byte("null")
	}
	if !json.Valid(out) {
		st.violation("%s: output is not valid JSON", abi.FuncComplete)
	}
	if len(st.secrets) > 0 {
		if out = st.redact(out); !json.Valid(out) {
			out = []byte(`"[redacted]"`)
		}
	}
	st.result = &Result{Output: out}
}

func fail(ctx context.Context, mod api.Module, stack []uint64) {
	st := stateFrom(ctx)
	st.notInStep(abi.FuncFail)
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	raw := st.redact(st.read(mod, abi.FuncFail, ptr, min(n, uint32(st.limits.MaxOutputBytes)), st.limits.MaxOutputBytes, "error"))
	var info abi.ErrorInfo
	if err := json.Unmarshal(raw, &info); err != nil || info.Message == "" && info.Code == "" {
		info = abi.ErrorInfo{Message: string(bytes.ToValidUTF8(raw, []byte("?")))}
	}
	if info.Code == "" {
		info.Code = abi.CodeWorkflowError
	}
	st.result = &Result{Error: &info}
}
