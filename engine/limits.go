package engine

import (
	"context"
	"sync"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// limitsTTL is how long a host trusts the tenant limits it read. A limit the admin changes
// reaches this host at once and every other host within this time.
const limitsTTL = 10 * time.Second

// limitsCache keeps each tenant's effective limits (overrides merged with the defaults) for
// limitsTTL, so that a claim or a request does not read the tenants table every time.
// Safe for concurrent use.
type limitsCache struct {
	store    store.Store
	defaults store.Limits // the operator's: Config.TenantDefaults
	clock    clock.Clock

	mu      sync.Mutex
	entries map[string]limitsEntry
}

func newLimitsCache(st store.Store, defaults store.Limits, clk clock.Clock) *limitsCache {
	return &limitsCache{store: st, defaults: defaults, clock: clk, entries: make(map[string]limitsEntry)}
}

type limitsEntry struct {
	limits  store.Limits
	fetched time.Time
}

// get returns the tenant's effective limits: its overrides, the operator's defaults for the
// rest.
func (c *limitsCache) get(ctx context.Context, tenantID string) (store.Limits, error) {
	c.mu.Lock()
	ent, ok := c.entries[tenantID]
	c.mu.Unlock()
	if ok && clock.Since(c.clock, ent.fetched) < limitsTTL {
		return ent.limits, nil
	}
	t, err := c.store.GetTenant(ctx, tenantID)
	if err != nil {
		return store.Limits{}, err
	}
	eff := t.Limits.Or(c.defaults)
	c.mu.Lock()
	c.entries[tenantID] = limitsEntry{limits: eff, fetched: c.clock.Now()}
	c.mu.Unlock()
	return eff, nil
}

// forget drops what the cache knows of the tenant: this host applies a change at once.
func (c *limitsCache) forget(tenantID string) {
	c.mu.Lock()
	delete(c.entries, tenantID)
	c.mu.Unlock()
}
