package host

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// The native transport of the workflow verbs (verbs.go): the wfhost import module of
// ABI.md §4, whose data arguments are (ptr, len) pairs in the guest's own memory and whose
// replies leave their data pending for take.

// instantiateHostModule registers the wfhost import module in rt. The functions find their
// activation through the context of the guest call, so one registration serves every instance.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(abi.ImportModule)
	fn := func(name string, f func(ctx context.Context, st *state, mem api.Memory, stack []uint64)) {
		sig := hostImports[name]
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			f(ctx, enter(ctx, name), mod.Memory(), stack)
		}), sig.params, sig.results).Export(name)
	}
	fn(abi.FuncStepRun, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		stack[0] = st.pend(st.stepRun(ctx, mem, pair(stack[0], stack[1]), pair(stack[2], stack[3])))
	})
	fn(abi.FuncStepDone, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		stack[0] = st.pend(st.stepDone(ctx, mem, abi.Outcome(api.DecodeI32(stack[0])), pair(stack[1], stack[2])))
	})
	fn(abi.FuncSleep, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		stack[0] = st.pend(st.sleep(ctx, mem, pair(stack[0], stack[1]), int64(stack[2])))
	})
	fn(abi.FuncSleepUntil, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		stack[0] = st.pend(st.sleepUntil(ctx, mem, pair(stack[0], stack[1]), int64(stack[2])))
	})
	fn(abi.FuncWaitEvent, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		stack[0] = st.pend(st.waitEvent(ctx, mem, pair(stack[0], stack[1]), pair(stack[2], stack[3])))
	})
	fn(abi.FuncTake, func(_ context.Context, st *state, mem api.Memory, stack []uint64) {
		st.take(mem, pair(stack[0], stack[1]))
	})
	fn(abi.FuncLog, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		st.log(ctx, mem, api.DecodeI32(stack[0]), pair(stack[1], stack[2]))
	})
	fn(abi.FuncComplete, func(_ context.Context, st *state, mem api.Memory, stack []uint64) {
		st.complete(mem, pair(stack[0], stack[1]))
	})
	fn(abi.FuncFail, func(_ context.Context, st *state, mem api.Memory, stack []uint64) {
		st.fail(mem, pair(stack[0], stack[1]))
	})
	fn(abi.FuncHTTPRequest, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		stack[0] = st.pend(st.httpRequest(ctx, mem, pair(stack[0], stack[1])))
	})
	fn(abi.FuncSecretGet, func(ctx context.Context, st *state, mem api.Memory, stack []uint64) {
		stack[0] = st.pend(st.secretGet(ctx, mem, pair(stack[0], stack[1])))
	})
	_, err := b.Instantiate(ctx)
	return err
}

// pair decodes a native (ptr, len) data argument.
func pair(ptr, n uint64) span { return span{api.DecodeU32(ptr), api.DecodeU32(n)} }

// pend keeps a reply's data for take and packs its status and length (ABI.md §4.1).
func (st *state) pend(r Reply) uint64 {
	if len(r.Data) > 0 {
		st.pending, st.hasPend = r.Data, true
	}
	return abi.PackReply(r.Status, uint32(len(r.Data)))
}

// take copies the pending data into the guest's buffer (ABI.md §4.8).
func (st *state) take(mem api.Memory, buf span) {
	if !st.hasPend {
		st.violation("%s called with no reply data pending", abi.FuncTake)
	}
	if int(buf.n) != len(st.pending) {
		st.violation("%s: length %d, but %d bytes are pending", abi.FuncTake, buf.n, len(st.pending))
	}
	if !mem.Write(buf.ptr, st.pending) {
		st.violation("%s: buffer at %d+%d is outside the guest's memory", abi.FuncTake, buf.ptr, buf.n)
	}
	st.pending, st.hasPend = nil, false
}
