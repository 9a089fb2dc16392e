package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// limitsTTL is how long a host trusts the tenant limits it read. A limit the admin changes
// reaches this host at once and every other host within this time.
const limitsTTL = 10 * time.Second

// tokenPrefix marks wfhost secrets, so that secret scanners and people can tell them apart.
const tokenPrefix = "wfh_"

// limitsCache keeps each tenant's effective limits (overrides merged with the defaults) for
// limitsTTL, so that a claim or a request does not read the tenants table every time.
type limitsCache struct {
	mu      sync.Mutex
	entries map[string]limitsEntry
}

type limitsEntry struct {
	limits  store.Limits
	fetched time.Time
}

// Limits returns the tenant's effective limits: its overrides, the operator's defaults for the
// rest.
func (e *Engine) Limits(ctx context.Context, tenantID string) (store.Limits, error) {
	e.limits.mu.Lock()
	ent, ok := e.limits.entries[tenantID]
	e.limits.mu.Unlock()
	if ok && time.Since(ent.fetched) < limitsTTL {
		return ent.limits, nil
	}
	t, err := e.cfg.Store.GetTenant(ctx, tenantID)
	if err != nil {
		return store.Limits{}, err
	}
	eff := t.Limits.Or(e.cfg.TenantDefaults)
	e.limits.mu.Lock()
	e.limits.entries[tenantID] = limitsEntry{limits: eff, fetched: time.Now()}
	e.limits.mu.Unlock()
	return eff, nil
}

func (e *Engine) forgetLimits(tenantID string) {
	e.limits.mu.Lock()
	delete(e.limits.entries, tenantID)
	e.limits.mu.Unlock()
}

// NewSecret makes a token secret and the hash the store keeps of it.
func NewSecret() (secret string, hash []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret = tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return secret, HashSecret(secret)
}

// HashSecret is how a token secret is stored and looked up. Secrets are 256 random bits, so a
// plain SHA-256 is enough: there is nothing to brute-force that a slow hash would protect.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func newTokenID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "tok_" + hex.EncodeToString(b[:])
}

// Authenticate returns the tenant a token secret belongs to, or store.ErrNotFound.
func (e *Engine) Authenticate(ctx context.Context, secret string) (string, error) {
	if secret == "" || len(secret) > 512 {
		return "", store.ErrNotFound
	}
	return e.cfg.Store.Authenticate(ctx, HashSecret(secret))
}

// CreateTenant creates a tenant and its first token, and returns the token's secret: the only
// time anyone sees it.
func (e *Engine) CreateTenant(ctx context.Context, id string, limits store.Limits) (store.Tenant, store.Token, string, error) {
	if err := validTenantID(id); err != nil {
		return store.Tenant{}, store.Token{}, "", err
	}
	if err := validLimits(limits); err != nil {
		return store.Tenant{}, store.Token{}, "", err
	}
	secret, hash := NewSecret()
	tok := store.Token{ID: newTokenID(), TenantID: id, Name: "first", Hash: hash}
	t, err := e.cfg.Store.CreateTenant(ctx, store.Tenant{ID: id, Limits: limits}, tok)
	if err != nil {
		return store.Tenant{}, store.Token{}, "", err
	}
	tok.Hash, tok.CreatedAt = nil, t.CreatedAt
	return t, tok, secret, nil
}

// GetTenant returns a tenant.
func (e *Engine) GetTenant(ctx context.Context, id string) (store.Tenant, error) {
	if err := validTenantID(id); err != nil {
		return store.Tenant{}, err
	}
	return e.cfg.Store.GetTenant(ctx, id)
}

// ListTenants returns every tenant.
func (e *Engine) ListTenants(ctx context.Context) ([]store.Tenant, error) {
	return e.cfg.Store.ListTenants(ctx)
}

// SetTenantLimits replaces a tenant's overrides. This host applies them at once, the others
// within limitsTTL.
func (e *Engine) SetTenantLimits(ctx context.Context, id string, limits store.Limits) (store.Tenant, error) {
	if err := validTenantID(id); err != nil {
		return store.Tenant{}, err
	}
	if err := validLimits(limits); err != nil {
		return store.Tenant{}, err
	}
	t, err := e.cfg.Store.SetTenantLimits(ctx, id, limits)
	if err != nil {
		return store.Tenant{}, tenantNotFound(id, err)
	}
	e.forgetLimits(id)
	return t, nil
}

// CreateToken adds a token to a tenant and returns its secret.
func (e *Engine) CreateToken(ctx context.Context, tenantID, name string) (store.Token, string, error) {
	if err := validTenantID(tenantID); err != nil {
		return store.Token{}, "", err
	}
	if err := checkText("token name", name, maxTokenNameBytes); err != nil {
		return store.Token{}, "", err
	}
	secret, hash := NewSecret()
	tok, err := e.cfg.Store.CreateToken(ctx, store.Token{ID: newTokenID(), TenantID: tenantID, Name: name, Hash: hash})
	if err != nil {
		return store.Token{}, "", tenantNotFound(tenantID, err)
	}
	return tok, secret, nil
}

// tenantNotFound names the tenant in a store's not-found, which the stores word differently.
func tenantNotFound(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("tenant %s: %w", id, store.ErrNotFound)
	}
	return err
}

// EnsureToken makes secret a token of the tenant, creating the tenant if needed: how
// `wfhost run --token` keeps a fixed secret working across restarts. A secret that already
// belongs to another tenant is store.ErrConflict.
func (e *Engine) EnsureToken(ctx context.Context, tenantID, secret, name string) error {
	if err := e.cfg.Store.EnsureTenant(ctx, tenantID); err != nil {
		return err
	}
	owner, err := e.cfg.Store.Authenticate(ctx, HashSecret(secret))
	switch {
	case err == nil && owner == tenantID:
		return nil
	case err == nil:
		return fmt.Errorf("the token belongs to tenant %s: %w", owner, store.ErrConflict)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	_, err = e.cfg.Store.CreateToken(ctx, store.Token{ID: newTokenID(), TenantID: tenantID, Name: name, Hash: HashSecret(secret)})
	return err
}

// ListTokens returns a tenant's tokens, without secrets.
func (e *Engine) ListTokens(ctx context.Context, tenantID string) ([]store.Token, error) {
	if err := validTenantID(tenantID); err != nil {
		return nil, err
	}
	return e.cfg.Store.ListTokens(ctx, tenantID)
}

// RevokeToken revokes one of a tenant's tokens; requests with it fail from then on. An id no
// store could hold names no token: store.ErrNotFound.
func (e *Engine) RevokeToken(ctx context.Context, tenantID, tokenID string) (store.Token, error) {
	if err := validTenantID(tenantID); err != nil {
		return store.Token{}, err
	}
	if abi.CheckText("token id", tokenID, maxTokenIDBytes) != nil {
		return store.Token{}, fmt.Errorf("token %q: %w", tokenID, store.ErrNotFound)
	}
	tok, err := e.cfg.Store.RevokeToken(ctx, tenantID, tokenID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Token{}, fmt.Errorf("token %q: %w", tokenID, store.ErrNotFound)
	}
	return tok, err
}

// sweepLoop deletes terminal runs past their retention and broadcast events past their window
// every SweepInterval, a batch at a time until a batch comes back short.
func (e *Engine) sweepLoop(ctx context.Context) {
	t := time.NewTicker(e.cfg.SweepInterval)
	defer t.Stop()
	for {
		e.Sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-e.drain:
			return
		case <-t.C:
		}
	}
}

// Sweep runs one sweep now (expired runs, then broadcast events past their window) and
// returns how many runs it deleted.
func (e *Engine) Sweep(ctx context.Context) int {
	runs := e.inBatches(ctx, "retention sweep", e.metrics.retentionSwept, func(ctx context.Context) (int, error) {
		return e.cfg.Store.SweepExpired(ctx, sweepBatch)
	})
	before := time.Now().Add(-e.cfg.BroadcastWindow)
	e.inBatches(ctx, "broadcast pruning", e.metrics.broadcastsPruned, func(ctx context.Context) (int, error) {
		return e.cfg.Store.PruneBroadcasts(ctx, before, sweepBatch)
	})
	return runs
}

// inBatches calls deleteBatch until a batch comes back short, counting what it deleted, and
// returns the total; a failure ends it and is logged (the next sweep tries again).
func (e *Engine) inBatches(ctx context.Context, what string, deleted prometheus.Counter, deleteBatch func(context.Context) (int, error)) int {
	total := 0
	for ctx.Err() == nil {
		n, err := deleteBatch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				e.cfg.Logger.Error(what+" failed", "err", err)
			}
			break
		}
		total += n
		deleted.Add(float64(n))
		if n < sweepBatch {
			break
		}
	}
	if total > 0 {
		e.cfg.Logger.Info(what, "deleted", total)
	}
	return total
}

const sweepBatch = 1000
