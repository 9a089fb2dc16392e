package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// moduleCache maps (tenant, digest) to compiled modules, loading a module's bytes from the store
// the first time a run of it is activated on this host (after a restart, or when another host
// took the upload). Compiled code itself is shared by digest inside host.Runtime.
type moduleCache struct {
	store   store.Store
	runtime *host.Runtime

	mu   sync.Mutex
	byID map[moduleKey]*host.Module
}

type moduleKey struct{ tenant, digest string }

func newModuleCache(s store.Store, r *host.Runtime) *moduleCache {
	return &moduleCache{store: s, runtime: r, byID: make(map[moduleKey]*host.Module)}
}

func (c *moduleCache) put(tenant string, m *host.Module) {
	c.mu.Lock()
	c.byID[moduleKey{tenant, m.Digest}] = m
	c.mu.Unlock()
}

func (c *moduleCache) get(ctx context.Context, tenant, digest string) (*host.Module, error) {
	k := moduleKey{tenant, digest}
	c.mu.Lock()
	m := c.byID[k]
	c.mu.Unlock()
	if m != nil {
		return m, nil
	}
	stored, err := c.store.GetModule(ctx, tenant, digest)
	if err != nil {
		return nil, fmt.Errorf("load module %s: %w", digest, err)
	}
	m, err = c.runtime.LoadAs(ctx, tenant, stored.Bytes)
	if err != nil {
		return nil, fmt.Errorf("compile module %s: %w", digest, err)
	}
	c.put(tenant, m)
	return m, nil
}
