package shares

import (
	"context"
	"sync"
	"time"
)

// Pool hands out one resource's tokens to tenants. Safe for concurrent use.
//
// A tenant is about while it holds a token, while something of it has joined (Join) and not
// left, and for the pool's presence window after it last took a token: a tenant whose work
// comes one piece after another is about between the pieces too, so another tenant cannot
// take everything in the gaps.
type Pool struct {
	// share is what a tenant holds at most while another is about. A tenant alone holds as
	// much as it asks for: a bound there only slows the one tenant using the host.
	share  int
	window time.Duration

	mu      sync.Mutex
	tenants map[string]*Tenant
}

// Tenant is one tenant's entry in a Pool, kept while anything of it has joined; an entry
// nobody has joined is dropped once its tenant is no longer about.
type Tenant struct {
	held    int
	users   int
	seen    time.Time       // when it last took a token
	waiters []chan struct{} // FIFO; a waiter is sent to once it has been given a token
}

// PresenceWindow is how long a tenant counts as about after it last took a token, in every
// pool of the daemon (the host's cores, the engine's starts): a tenant whose work comes one
// piece after another is about between the pieces too, so another tenant cannot take
// everything in the gaps.
const PresenceWindow = 10 * time.Second

// New returns a pool whose tenants hold at most share tokens each (at least 1) while another
// is about, and count as about for window after they last took one.
func New(share int, window time.Duration) *Pool {
	return &Pool{share: max(share, 1), window: window, tenants: map[string]*Tenant{}}
}

// Join returns the tenant's entry, kept (and the tenant about) until Leave.
func (p *Pool) Join(tenant string) *Tenant {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.entryLocked(tenant)
	t.users++
	return t
}

func (p *Pool) entryLocked(tenant string) *Tenant {
	t := p.tenants[tenant]
	if t == nil {
		t = &Tenant{}
		p.tenants[tenant] = t
	}
	return t
}

// Leave undoes a Join.
func (p *Pool) Leave(t *Tenant) {
	p.mu.Lock()
	t.users--
	p.mu.Unlock()
}

// Joined is how many Joins of the tenant have not left yet.
func (p *Pool) Joined(tenant string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tenants[tenant]; t != nil {
		return t.users
	}
	return 0
}

// Held is how many tokens the tenant holds now.
func (p *Pool) Held(tenant string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tenants[tenant]; t != nil {
		return t.held
	}
	return 0
}

// Waiting is how many of the tenant's Holds wait for a token now.
func (p *Pool) Waiting(tenant string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.tenants[tenant]; t != nil {
		return len(t.waiters)
	}
	return 0
}

// TryHold takes a token for t if it may have one now.
func (p *Pool) TryHold(t *Tenant) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeLocked(t)
}

// Hold waits for a token for t, or for ctx to end (its cause is returned).
func (p *Pool) Hold(ctx context.Context, t *Tenant) error {
	p.mu.Lock()
	return p.holdLocked(ctx, t)
}

// HoldFor is Hold for the tenant named, for a caller that has not joined: the tenant's entry is
// kept while it holds a token (which makes it about) or waits for one (which it does only while
// it holds its share), and returned for Let.
func (p *Pool) HoldFor(ctx context.Context, tenant string) (*Tenant, error) {
	p.mu.Lock()
	t := p.entryLocked(tenant)
	return t, p.holdLocked(ctx, t)
}

// holdLocked is Hold, called with mu held; it unlocks mu.
func (p *Pool) holdLocked(ctx context.Context, t *Tenant) error {
	if p.takeLocked(t) {
		p.mu.Unlock()
		return nil
	}
	w := make(chan struct{}, 1)
	t.waiters = append(t.waiters, w)
	p.mu.Unlock()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range t.waiters {
		if x == w {
			t.waiters = append(t.waiters[:i], t.waiters[i+1:]...)
			return context.Cause(ctx)
		}
	}
	// Given a token just as ctx ended: pass it on.
	p.letLocked(t)
	return context.Cause(ctx)
}

// Let gives a token back, to the tenant's first waiter if it may have it.
func (p *Pool) Let(t *Tenant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.letLocked(t)
}

// takeLocked takes a token for t if it may have one now and nobody of t waits for one
// before it.
func (p *Pool) takeLocked(t *Tenant) bool {
	now := time.Now()
	if len(t.waiters) > 0 || !p.mayTake(t, now) {
		return false
	}
	t.held++
	t.seen = now
	return true
}

func (p *Pool) letLocked(t *Tenant) {
	t.held--
	if len(t.waiters) > 0 && p.mayTake(t, time.Now()) {
		w := t.waiters[0]
		t.waiters = t.waiters[1:]
		t.held++
		t.seen = time.Now()
		w <- struct{}{}
	}
}

// mayTake says whether t may take one more token now: within its share, or beyond it while no
// other tenant is about. Called with mu held.
func (p *Pool) mayTake(t *Tenant, now time.Time) bool {
	return t.held < p.share || !p.othersLocked(t, now)
}

// othersLocked says whether a tenant other than t (nil: any) is about, dropping the entries of
// tenants gone meanwhile. Called with mu held.
func (p *Pool) othersLocked(t *Tenant, now time.Time) bool {
	for name, u := range p.tenants {
		if u == t {
			continue
		}
		if p.aboutLocked(u, now) {
			return true
		}
		delete(p.tenants, name) // nobody holds it and its tenant is gone
	}
	return false
}

func (p *Pool) aboutLocked(t *Tenant, now time.Time) bool {
	return t.held > 0 || t.users > 0 || now.Sub(t.seen) < p.window
}
