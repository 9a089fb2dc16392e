package host

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero/api"
)

// Parking. A pass whose host call would suspend its run can instead keep its instance, blocked
// in that call, until the run may go on (engine/parking.go): the guest resumes where it
// stopped, with no replay of its journal. The host's part is to make the wait cost the guest
// nothing it is bounded by: the wall time stops, and the tenant's core share forgets the
// pass, so a tenant whose runs are parked does not count as about (cores.go).

// ErrNotInCall is returned by Park when ctx is not that of a host call of an activation.
var ErrNotInCall = errors.New("host: park outside an activation's host call")

// parkOverheadBytes is what a parked instance is taken to cost beside its linear memory: its
// goroutine's stack, wazero's per-instance structures, globals and tables, and the pass's
// bookkeeping. Measured as the growth of the heap per parked AssemblyScript instance beyond
// its memory (engine's BenchmarkParked... see engine/RATIONALE.md, "Parked instances").
const parkOverheadBytes = 64 << 10

// Park holds the guest in the host call whose context is ctx while wait runs: wait gets what
// the instance costs to keep (its linear memory and parkOverheadBytes) and returns when the
// pass is to go on, or with the error the host call is to return. The activation's wall time
// stops meanwhile, and the tenant's core share does not count the pass.
func Park(ctx context.Context, wait func(costBytes uint64) error) error {
	st := stateFrom(ctx)
	if st == nil || st.handler == nil {
		return ErrNotInCall
	}
	cost := uint64(parkOverheadBytes)
	if st.memoryBytes != nil {
		cost += st.memoryBytes()
	}
	st.wall.pause()
	o := &st.core
	if o.tenant != nil {
		// The host call gave the core back already (enter); the tenant's entry is left so
		// that the tenant is not about while nothing of it runs, and joined again after.
		o.shares.leave(o.tenant)
	}
	err := wait(cost)
	if o.tenant != nil {
		o.tenant = o.shares.join(o.tenantName)
	}
	st.wall.resume()
	return err
}

// memorySize is the size of mod's linear memory, 0 when it has none.
func memorySize(mod api.Module) uint64 {
	if mod == nil {
		return 0
	}
	if mem := mod.Memory(); mem != nil {
		return uint64(mem.Size())
	}
	return 0
}
