package host

import (
	"context"
	"math"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// The Extism transport of the workflow verbs (verbs.go): host functions in Extism's user
// namespace whose data arguments are offsets of blocks in Extism's kernel memory (the PDKs'
// Memory type) and whose replies come back as one such block, so no take is needed: the kernel
// is a module of its own, and allocating in it from a host function does not re-enter the
// guest (the reason the native ABI leaves replies pending).

// extismImports are the functions an Extism module may import from ExtismUserModule: the
// native verbs with each (ptr, len) pair replaced by an i64 block offset.
var extismImports = map[string]signature{
	abi.FuncStepRun:     {[]api.ValueType{i64, i64}, []api.ValueType{i64}},
	abi.FuncStepDone:    {[]api.ValueType{i32, i64}, []api.ValueType{i64}},
	abi.FuncSleep:       {[]api.ValueType{i64, i64}, []api.ValueType{i64}},
	abi.FuncSleepUntil:  {[]api.ValueType{i64, i64}, []api.ValueType{i64}},
	abi.FuncWaitEvent:   {[]api.ValueType{i64, i64}, []api.ValueType{i64}},
	abi.FuncLog:         {[]api.ValueType{i32, i64}, nil},
	abi.FuncComplete:    {[]api.ValueType{i64}, nil},
	abi.FuncFail:        {[]api.ValueType{i64}, nil},
	abi.FuncHTTPRequest: {[]api.ValueType{i64}, []api.ValueType{i64}},
	abi.FuncSecretGet:   {[]api.ValueType{i64}, []api.ValueType{i64}},
}

// extismCall is one Extism host call: the activation, the plugin whose kernel holds the
// blocks, and the kernel's memory.
type extismCall struct {
	ctx context.Context
	st  *state
	cp  *extism.CurrentPlugin
	mem api.Memory
	fn  string
}

// extismHostFunctions are the Extism host functions of every Extism plugin. Like the native
// module they find their activation through the call's context.
func extismHostFunctions() []extism.HostFunction {
	var fns []extism.HostFunction
	fn := func(name string, f func(c *extismCall, stack []uint64)) {
		sig := extismImports[name]
		h := extism.NewHostFunctionWithStack(name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
			f(&extismCall{ctx: ctx, st: enter(ctx, name), cp: cp, mem: cp.Memory(), fn: name}, stack)
		}, sig.params, sig.results)
		h.SetNamespace(ExtismUserModule)
		fns = append(fns, h)
	}
	fn(abi.FuncStepRun, func(c *extismCall, stack []uint64) {
		stack[0] = c.reply(c.st.stepRun(c.ctx, c.mem, c.block(stack[0]), c.block(stack[1])))
	})
	fn(abi.FuncStepDone, func(c *extismCall, stack []uint64) {
		stack[0] = c.reply(c.st.stepDone(c.ctx, c.mem, abi.Outcome(api.DecodeI32(stack[0])), c.block(stack[1])))
	})
	fn(abi.FuncSleep, func(c *extismCall, stack []uint64) {
		stack[0] = c.reply(c.st.sleep(c.ctx, c.mem, c.block(stack[0]), int64(stack[1])))
	})
	fn(abi.FuncSleepUntil, func(c *extismCall, stack []uint64) {
		stack[0] = c.reply(c.st.sleepUntil(c.ctx, c.mem, c.block(stack[0]), int64(stack[1])))
	})
	fn(abi.FuncWaitEvent, func(c *extismCall, stack []uint64) {
		stack[0] = c.reply(c.st.waitEvent(c.ctx, c.mem, c.block(stack[0]), c.block(stack[1])))
	})
	fn(abi.FuncLog, func(c *extismCall, stack []uint64) {
		c.st.log(c.ctx, c.mem, api.DecodeI32(stack[0]), c.block(stack[1]))
	})
	fn(abi.FuncComplete, func(c *extismCall, stack []uint64) {
		c.st.complete(c.mem, c.block(stack[0]))
	})
	fn(abi.FuncFail, func(c *extismCall, stack []uint64) {
		c.st.fail(c.mem, c.block(stack[0]))
	})
	fn(abi.FuncHTTPRequest, func(c *extismCall, stack []uint64) {
		stack[0] = c.reply(c.st.httpRequest(c.ctx, c.mem, c.block(stack[0])))
	})
	fn(abi.FuncSecretGet, func(c *extismCall, stack []uint64) {
		stack[0] = c.reply(c.st.secretGet(c.ctx, c.mem, c.block(stack[0])))
	})
	return append(fns, extismHTTPFunctions()...)
}

// block decodes a data argument: the kernel block at offset, 0 meaning none. The kernel says
// how long a block is, and 0 for an offset that is not the start of a live block, so such an
// offset reads as empty data.
func (c *extismCall) block(offset uint64) span {
	if offset == 0 {
		return span{}
	}
	if offset > math.MaxUint32 {
		c.st.violation("%s: block offset %d is outside Extism's memory", c.fn, offset)
	}
	n, err := c.cp.LengthWithContext(c.ctx, offset)
	if err != nil {
		// The kernel failed (the activation's deadline, a cancel): not the guest's fault as
		// far as we know, so the error goes to classification as it is.
		panic(err)
	}
	return span{uint32(offset), uint32(min(n, math.MaxUint32))}
}

// reply hands a Reply to the guest: its data in a new kernel block, which the guest owns
// and may free, and the status (ABI.md, Extism modules).
func (c *extismCall) reply(r Reply) uint64 {
	return packExtismReply(r.Status, uint32(c.newBlock(r.Data)))
}

// newBlock copies data into a new kernel block, which the guest owns and may free, and
// returns its offset; 0 when there is no data.
func (c *extismCall) newBlock(data []byte) uint64 {
	if len(data) == 0 {
		return 0
	}
	offset, err := c.cp.AllocWithContext(c.ctx, uint64(len(data)))
	if err != nil {
		panic(err)
	}
	if offset == 0 || offset > math.MaxUint32 || !c.mem.Write(uint32(offset), data) {
		c.st.fault = guestError(abi.CodeTrap, "%s: Extism's kernel has no room for the %d-byte reply (memory limit)", c.fn, len(data))
		panic(c.st.fault)
	}
	return offset
}

// packExtismReply packs an Extism host function's i64 result: the status in the low 32 bits,
// the offset of the reply's data block (0: no data) in the high 32 bits.
func packExtismReply(s abi.Status, offset uint32) uint64 {
	return uint64(offset)<<32 | uint64(uint32(s))
}
