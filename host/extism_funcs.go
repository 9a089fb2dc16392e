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
// guest (the reason the native ABI leaves replies pending). Its functions and their signatures
// are abi.HostFuncs'; nothing here names one.

// extismCall is one Extism host call: the activation, the plugin whose kernel holds the
// blocks, and the kernel's memory.
type extismCall struct {
	ctx context.Context
	st  *state
	cp  *extism.CurrentPlugin
	mem api.Memory
	fn  string
}

// extismHostFunctions are the Extism host functions of every Extism plugin: one per row of
// abi.HostFuncs offered to Extism modules, with the row's Extism signature (each data span one
// block offset), calling the row's verb. Like the native module they find their activation
// through the call's context. A row without a verb is a bug that TestEveryHostFuncHasAVerb
// catches; it would panic here.
func extismHostFunctions() []extism.HostFunction {
	var fns []extism.HostFunction
	for _, f := range abi.HostFuncs {
		if f.NativeOnly {
			continue
		}
		v, ok := verbs[f.Name]
		if !ok {
			panic("host function " + f.Name + " has no verb")
		}
		sig := wasmSignature(f.Extism())
		h := extism.NewHostFunctionWithStack(f.Name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
			c := &extismCall{ctx: ctx, st: enter(ctx, f.Name), cp: cp, mem: cp.Memory(), fn: f.Name}
			var a args
			for i, p := range f.Params {
				if p.Kind == abi.Data {
					a[i].span = c.block(stack[i])
				} else {
					a[i].scalar = stack[i]
				}
			}
			r := v(ctx, c.st, c.mem, a)
			if f.Reply {
				stack[0] = c.reply(r)
			}
			c.st.backOnCore(ctx)
		}, sig.params, sig.results)
		h.SetNamespace(ExtismUserModule)
		fns = append(fns, h)
	}
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
