package engine

import (
	"context"
	"fmt"
)

// Fairness among the tenants of one host. One tenant's burst (20,000 runs started by 32
// callers, then drained) made another tenant's one-at-a-time 10-step runs take 22-25x their p99
// alone (BENCHMARKS.md, "Fairness under backlog"). A trace of those runs showed three waits,
// each FIFO behind the busy tenant:
//   - Starts. The 32 callers' start statements were 32 transactions in Postgres at once, on
//     two cores, in front of every commit of the quiet tenant. While another tenant is about,
//     one tenant has at most Config.TenantStarts starts in flight here; the rest wait their
//     turn in order, in this process, where waiting costs nothing (startGate).
//   - Slots. With every slot held by the busy tenant's claimed runs, the quiet tenant's start
//     was queued for the claimer and waited for one of those runs to end. Config.ReservedSlots
//     more slots, beyond Config.Concurrency, go only to a tenant with nothing in flight here:
//     its run starts at once, and its parked run resumes at once, whatever the busy tenant has
//     queued (takeSlot). They are extra rather than carved out of Concurrency: kept out of
//     a lone tenant's reach, four of 32 slots cost its 1-step runs a third of their throughput
//     (32 callers, and every fifth start queued for the claimer instead of running at once),
//     and lent to it, they were taken when the other tenant came. A run that must be claimed
//     (started or woken on another host) still waits for an ordinary slot; the claim's
//     tie-break gives it to the tenant with fewer runs in flight.
//   - The write path: the quiet tenant's commits queued behind the busy tenant's batches in the
//     group commit. An activation in a reserved slot writes through the store's urgent lane
//     (store.Urgent), which Postgres sends at once, alone, beside the batches.
// What is left is the machine itself: the quiet tenant's statements still share two cores with
// the busy tenant's work (engine/RATIONALE.md, "Fairness under backlog").

// startGate waits until tenant may send one more start to the store, and returns what gives
// the turn back: at once while the tenant is alone, in order behind its other starts beyond
// its share while another tenant is about.
func (x *Executor) startGate(ctx context.Context, tenant string) (func(), error) {
	t, err := x.starts.HoldFor(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("waiting for the tenant's turn to start a run: %w", err)
	}
	return func() { x.starts.Let(t) }, nil
}

// quietHere says whether tenant has nothing in flight on this host: its runs may then pass
// the others' queue and take a reserved slot (takeSlot). Two of a quiet tenant's runs starting
// at once may both see it quiet and both pass: the reserve bounds that.
func (x *Executor) quietHere(tenant string) bool { return x.starts.Joined(tenant) == 0 }

// enterLocked makes a active: cancel notices and heartbeats reach it, and its tenant is in
// flight and about here. Called with x.mu held.
func (x *Executor) enterLocked(a *activation) {
	x.active[a.runID] = a
	if a.about == nil {
		a.about = x.starts.Join(a.tenant)
	}
}

// exitLocked undoes enterLocked: the activation ended or its pass parked. Called with x.mu
// held.
func (x *Executor) exitLocked(a *activation) {
	if x.active[a.runID] == a {
		delete(x.active, a.runID)
	}
	if a.about != nil {
		x.starts.Leave(a.about)
		a.about = nil
	}
}
