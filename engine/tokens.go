package engine

import (
	"context"
	"sync"
	"time"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// tokenTTL is how long a host trusts a token it found in the store. A token revoked through
// this host is refused at once; through another host, within this time (api/RATIONALE.md).
const tokenTTL = 5 * time.Second

// maxCachedTokens bounds the cache. Only tokens the store knows are kept, so a client cannot
// fill it with made-up ones; the bound is against a tenant that mints tokens in a loop.
const maxCachedTokens = 10_000

// tokenCache keeps each token this host authenticated (its id, name and tenant), for tokenTTL, so a
// request does not read the tokens table every time (it was a third of the transactions of a
// run started over the API: BENCHMARKS.md, Through the API). It is keyed by the token's
// SHA-256, the hash the store keeps, never by the secret itself, so the daemon's memory holds
// no more of a token than its database does. Unknown tokens are not kept: a token created a
// moment ago must work at once, and a flood of bad tokens must not grow the cache.
// Safe for concurrent use.
type tokenCache struct {
	clock clock.Clock

	mu      sync.Mutex
	entries map[[32]byte]tokenEntry
	// gen moves on every forget, so an answer read from the store before a revocation is not
	// kept after it (the read and the revocation may overlap).
	gen uint64
}

type tokenEntry struct {
	token   store.Token // without its hash
	fetched time.Time
}

func newTokenCache(clk clock.Clock) *tokenCache {
	return &tokenCache{clock: clk, entries: make(map[[32]byte]tokenEntry)}
}

// authenticate returns the token whose hash is given, from the cache while it is fresh, else
// from lookup (the store), whose answer it keeps when the token is known.
func (c *tokenCache) authenticate(ctx context.Context, hash [32]byte, lookup func(context.Context, []byte) (store.Token, error)) (store.Token, error) {
	c.mu.Lock()
	ent, ok := c.entries[hash]
	gen := c.gen
	c.mu.Unlock()
	if ok && clock.Since(c.clock, ent.fetched) < tokenTTL {
		return ent.token, nil
	}
	tok, err := lookup(ctx, hash[:])
	if err != nil {
		if ok {
			c.drop(hash)
		}
		return store.Token{}, err
	}
	tok.Hash = nil
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return tok, nil // a revocation overlapped the read: answer it, keep nothing
	}
	if len(c.entries) >= maxCachedTokens {
		c.sweep()
	}
	if len(c.entries) < maxCachedTokens {
		c.entries[hash] = tokenEntry{token: tok, fetched: c.clock.Now()}
	}
	return tok, nil
}

// sweep drops the stale entries, and every entry if none was stale. Called with mu held.
func (c *tokenCache) sweep() {
	now := c.clock.Now()
	for h, ent := range c.entries {
		if now.Sub(ent.fetched) >= tokenTTL {
			delete(c.entries, h)
		}
	}
	if len(c.entries) >= maxCachedTokens {
		clear(c.entries)
	}
}

func (c *tokenCache) drop(hash [32]byte) {
	c.mu.Lock()
	delete(c.entries, hash)
	c.mu.Unlock()
}

// forgetTenant drops every token of the tenant: a revocation names a token by its id, which
// the cache does not know, and dropping the tenant's few tokens costs one store read each.
func (c *tokenCache) forgetTenant(tenantID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, ent := range c.entries {
		if ent.token.TenantID == tenantID {
			delete(c.entries, h)
		}
	}
}

// forgetHash drops one token, whichever tenant it was cached for.
func (c *tokenCache) forgetHash(hash [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.entries, hash)
}
