package host

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/wfhost/wfhost/internal/shares"
)

// While other tenants are about, one tenant's guest code occupies at most Config.TenantCores
// cores at once (default: every core but one); a tenant alone is not bounded. The Go
// scheduler shares the cores among runnable goroutines in 10 ms slices, and a guest that
// computes without calling the host stays runnable for its whole wall time: two spinning
// guests on a two-core machine made every other tenant's goroutines queue for a core at each
// wake-up, and a control tenant's 10-step run went from 10 ms to 250-300 ms at p99
// (RATIONALE.md, "A core for the other tenants"). The bound is on guest code only: a guest
// holds a core while its code runs and lets go of it for every host call and sleep, so
// activations waiting on the store or the network take nothing from their own tenant.

// newCoreShares hands out the cores to the tenants' guests: share each while another tenant is
// about. A tenant alone holds as many as it has guests running: a bound of GOMAXPROCS there
// cost a lone tenant's 1-step runs a fifth of their throughput (guests queued for a token held
// by a goroutine the scheduler had put aside, where the scheduler alone would have run
// another).
func newCoreShares(share int) *shares.Pool { return shares.New(share, shares.PresenceWindow) }

// defaultTenantCores leaves one core to the other tenants, when there is more than one.
func defaultTenantCores() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// onCore is how a state holds a core while the guest's code runs: tenant is nil for a state
// that does not count (none of the Runtime's), held whether it holds one now.
type onCore struct {
	shares     *shares.Pool
	tenant     *shares.Tenant
	tenantName string // to join again after a park (park.go)
	held       bool
}

// take waits for a core for the guest's code.
func (o *onCore) take(ctx context.Context) error {
	if o.tenant == nil || o.held {
		return nil
	}
	if err := o.shares.Hold(ctx, o.tenant); err != nil {
		return err
	}
	o.held = true
	return nil
}

// give lets go of the core: the guest called the host, or its call returned.
func (o *onCore) give() {
	if o.held {
		o.held = false
		o.shares.Let(o.tenant)
	}
}

// backOnCore is the end of a host call that returns to the guest: its code runs again once it
// has a core. The wall time stops while it waits: the time the tenant's other guests held
// its cores is not this pass's (a pass must not fail deadline_exceeded because a sibling
// spins). A pass cancelled while it waits is unwound (the panic), and classify reads why.
func (st *state) backOnCore(ctx context.Context) {
	o := &st.core
	if o.tenant == nil || o.held {
		return
	}
	if o.shares.TryHold(o.tenant) {
		o.held = true
		return
	}
	st.wall.pause()
	err := o.take(ctx)
	st.wall.resume()
	if err != nil {
		panic(err)
	}
}

// wallClock is a pass's (or a describe's) deadline, stopped while its guest waits for a core.
// Only the goroutine calling into the guest pauses and resumes it.
type wallClock struct {
	timer   *time.Timer
	cancel  context.CancelCauseFunc
	left    time.Duration // what remains of the limit at the last pause
	resumed time.Time
	paused  bool
}

// startWallClock returns a context cancelled with cause once limit has run out, not counting
// the pauses.
func startWallClock(ctx context.Context, limit time.Duration, cause error) (context.Context, *wallClock) {
	gctx, cancel := context.WithCancelCause(ctx)
	w := &wallClock{cancel: cancel, left: limit, resumed: time.Now()}
	w.timer = time.AfterFunc(limit, func() { cancel(cause) })
	return gctx, w
}

// pause stops the clock, unless it has run out already (or there is none: a nil clock).
func (w *wallClock) pause() {
	if w == nil || !w.timer.Stop() {
		return
	}
	w.left -= time.Since(w.resumed)
	w.paused = true
}

func (w *wallClock) resume() {
	if w == nil || !w.paused {
		return
	}
	w.paused = false
	w.resumed = time.Now()
	w.timer.Reset(max(w.left, 0))
}

// stop releases the clock and its context.
func (w *wallClock) stop() {
	w.timer.Stop()
	w.cancel(context.Canceled)
}

// onCoreWithin readies st for calls into a guest of tenant: it waits, under ctx, for one of
// the tenant's cores, then starts limit, the pass's wall time or the describe's deadline. The
// wait comes before limit starts, and limit stops while the guest waits for a core again
// (backOnCore): a guest must not be blamed for the time its tenant's other guests held the
// cores. It returns the context of the calls into the guest, which carries st, and what ends
// it all.
func (r *Runtime) onCoreWithin(ctx context.Context, st *state, tenant string, limit time.Duration, cause error) (context.Context, func(), error) {
	st.core = onCore{shares: r.cores, tenant: r.cores.Join(tenant), tenantName: tenant}
	if err := st.core.take(ctx); err != nil {
		r.cores.Leave(st.core.tenant)
		return nil, nil, fmt.Errorf("stopped while waiting for one of the tenant's cores: %w", err)
	}
	gctx, wall := startWallClock(ctx, limit, cause)
	st.wall = wall
	gctx = withState(gctx, st)
	st.done, st.guest = gctx.Done(), gctx
	return gctx, func() {
		wall.stop()
		st.core.give()
		r.cores.Leave(st.core.tenant)
	}, nil
}

// describeOnCore runs a describe's calls into a module (both transports'): on one of the
// uploading tenant's cores, like its activations, within DescribeTimeout.
func (r *Runtime) describeOnCore(ctx context.Context, tenant string, calls func(context.Context, *state) error) error {
	st := newDescribeState()
	ctx, end, err := r.onCoreWithin(ctx, st, tenant, r.cfg.DescribeTimeout, errDescribeDeadline)
	if err != nil {
		return fmt.Errorf("load %w", err)
	}
	defer end()
	return notTheModules(ctx, calls(ctx, st))
}
