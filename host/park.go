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

// What a parked instance is taken to cost: its linear memory and half as much again, plus
// parkOverheadBytes. Measured (engine's BenchmarkParkedPassMemory: the heap's growth per
// parked pass, which holds the instance, its goroutine and the pass) at 1.15x the linear
// memory for AssemblyScript (150 KB for 64 KiB), 1.2x for Rust (860 KB for 640 KiB) and 1.45x
// for standard Go (5.9 MB for 3.9 MiB): wazero's per-instance structures and the call stack
// grow with the module. Counting 1.5x and 64 KiB keeps the budget an upper bound.
const parkOverheadBytes = 64 << 10

// Park holds the guest in the host call whose context is ctx while wait runs: wait gets what
// the instance costs to keep (see parkOverheadBytes) and returns when the pass is to go on, or
// with the error the host call is to return. The activation's wall time
// stops meanwhile, and the tenant's core share does not count the pass.
func Park(ctx context.Context, wait func(costBytes uint64) error) error {
	st := stateFrom(ctx)
	if st == nil || st.handler == nil {
		return ErrNotInCall
	}
	cost := uint64(parkOverheadBytes)
	if st.memoryBytes != nil {
		mem := st.memoryBytes()
		cost += mem + mem/2
	}
	st.wall.pause()
	o := &st.core
	if o.tenant != nil {
		// The host call gave the core back already (enter); the tenant's entry is left so
		// that the tenant is not about while nothing of it runs, and joined again after.
		o.shares.Leave(o.tenant)
	}
	err := wait(cost)
	if o.tenant != nil {
		o.tenant = o.shares.Join(o.tenantName)
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
