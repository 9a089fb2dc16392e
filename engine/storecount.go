package engine

import (
	"context"
	"sync"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// storeCountTimeout bounds one count over the store: a scrape waits for it at most this long
// and then serves the last counts it has.
const storeCountTimeout = 5 * time.Second

// storeCount is a gauge's count over the whole store, not this host, by tenant (wfhost_runs,
// the hook outbox). A count reads the store, so it is made at most once per interval, whoever
// scrapes and however often: a scrape in between serves the last counts, and concurrent
// scrapes wait for one count rather than make one each. A failed count keeps the last (and is
// tried again at the next scrape after the interval). Safe for concurrent use.
type storeCount[V any] struct {
	clock    clock.Clock
	interval time.Duration
	// count reads the store: each tenant's value, the tenants with nothing to count left out.
	count func(context.Context) (map[string]V, error)

	mu   sync.Mutex // held across a count, so concurrent scrapes share it
	at   time.Time  // when last was counted (zero: never)
	last map[string]V
}

// current is the counts, made again when the last are older than the interval. The default
// tenant is always there, and a tenant counted before stays, at V's zero, so a dashboard shows
// zeroes from the first scrape and a series ends at 0 rather than stops. The map is not
// changed after it is returned.
func (c *storeCount[V]) current() map[string]V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.clock.Now(); c.at.IsZero() || now.Sub(c.at) >= c.interval {
		c.at = now
		ctx, cancel := context.WithTimeout(context.Background(), storeCountTimeout)
		counted, err := c.count(ctx)
		cancel()
		if err == nil {
			var zero V
			next := map[string]V{store.DefaultTenant: zero}
			for tenant := range c.last {
				next[tenant] = zero
			}
			for tenant, v := range counted {
				next[tenant] = v
			}
			c.last = next
		}
	}
	if c.last == nil {
		var zero V
		return map[string]V{store.DefaultTenant: zero}
	}
	return c.last
}
