package host

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// The native transport of the workflow verbs (verbs.go): the wfhost import module of
// ABI.md §4, whose data arguments are (ptr, len) pairs in the guest's own memory and whose
// replies leave their data pending for take. Its functions and their signatures are
// abi.HostFuncs'; nothing here names one.

// instantiateHostModule registers the wfhost import module in rt: one function per row of
// abi.HostFuncs, with the row's native signature, calling the row's verb. The functions find
// their activation through the context of the guest call, so one registration serves every
// instance.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(abi.ImportModule)
	for _, f := range abi.HostFuncs {
		v, ok := verbs[f.Name]
		if !ok {
			return fmt.Errorf("host function %s has no verb", f.Name)
		}
		sig := wasmSignature(f.Native())
		unwinds := snapshotImports[f.Name] // decided here, not at every call
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			st := enter(ctx, f.Name)
			if unwinds && st.snap != nil && st.unwindsFor(ctx, f.Name) {
				// The guest unwinds for a checkpoint: the call is answered after its rewind.
				if f.Reply {
					stack[0] = 0
				}
				st.backOnCore(ctx)
				return
			}
			var a args
			next := 0
			for i, p := range f.Params {
				if p.Kind == abi.Data {
					a[i].span = pair(stack[next], stack[next+1])
					next += 2
				} else {
					a[i].scalar = stack[next]
					next++
				}
			}
			r := v(ctx, st, mod.Memory(), a)
			if f.Reply {
				stack[0] = st.pend(r)
			}
			st.backOnCore(ctx)
		}), sig.params, sig.results).Export(f.Name)
	}
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
