package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// tokenPrefix marks wfhost secrets, so that secret scanners and people can tell them apart.
const tokenPrefix = "wfh_"

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

// Authenticate returns the token a secret is (its id, name and tenant), or store.ErrNotFound.
// A token this host found in the store is trusted for tokenTTL (tokens.go); one revoked through
// this host is refused at once.
func (s *Service) Authenticate(ctx context.Context, secret string) (store.Token, error) {
	if secret == "" || len(secret) > 512 {
		return store.Token{}, store.ErrNotFound
	}
	return s.tokens.authenticate(ctx, sha256.Sum256([]byte(secret)), s.cfg.Store.Authenticate)
}

// CreateTenant creates a tenant and its first token, and returns the token's secret: the only
// time anyone sees it.
func (s *Service) CreateTenant(ctx context.Context, id string, limits store.Limits) (store.Tenant, store.Token, string, error) {
	if err := validTenantID(id); err != nil {
		return store.Tenant{}, store.Token{}, "", err
	}
	if err := validLimits(limits); err != nil {
		return store.Tenant{}, store.Token{}, "", err
	}
	secret, hash := NewSecret()
	tok := store.Token{ID: newTokenID(), TenantID: id, Name: "first", Hash: hash}
	t, err := s.cfg.Store.CreateTenant(ctx, store.Tenant{ID: id, Limits: limits}, tok)
	if err != nil {
		return store.Tenant{}, store.Token{}, "", err
	}
	tok.Hash, tok.CreatedAt = nil, t.CreatedAt
	return t, tok, secret, nil
}

// GetTenant returns a tenant.
func (s *Service) GetTenant(ctx context.Context, id string) (store.Tenant, error) {
	if err := validTenantID(id); err != nil {
		return store.Tenant{}, err
	}
	return s.cfg.Store.GetTenant(ctx, id)
}

// SetTenantLimits replaces a tenant's overrides. This host applies them at once, the others
// within limitsTTL.
func (s *Service) SetTenantLimits(ctx context.Context, id string, limits store.Limits) (store.Tenant, error) {
	if err := validTenantID(id); err != nil {
		return store.Tenant{}, err
	}
	if err := validLimits(limits); err != nil {
		return store.Tenant{}, err
	}
	t, err := s.cfg.Store.SetTenantLimits(ctx, id, limits)
	if err != nil {
		return store.Tenant{}, tenantNotFound(id, err)
	}
	s.limits.forget(id)
	s.tokens.forgetTenant(id)
	return t, nil
}

// CreateToken adds a token to a tenant and returns its secret.
func (s *Service) CreateToken(ctx context.Context, tenantID, name string) (store.Token, string, error) {
	if err := validTenantID(tenantID); err != nil {
		return store.Token{}, "", err
	}
	if err := checkText("token name", name, maxTokenNameBytes); err != nil {
		return store.Token{}, "", err
	}
	secret, hash := NewSecret()
	tok, err := s.cfg.Store.CreateToken(ctx, store.Token{ID: newTokenID(), TenantID: tenantID, Name: name, Hash: hash})
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
func (s *Service) EnsureToken(ctx context.Context, tenantID, secret, name string) error {
	if err := s.cfg.Store.EnsureTenant(ctx, tenantID); err != nil {
		return err
	}
	s.tokens.forgetHash(sha256.Sum256([]byte(secret)))
	owner, err := s.cfg.Store.Authenticate(ctx, HashSecret(secret))
	switch {
	case err == nil && owner.TenantID == tenantID:
		return nil
	case err == nil:
		return fmt.Errorf("the token belongs to tenant %s: %w", owner.TenantID, store.ErrConflict)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	_, err = s.cfg.Store.CreateToken(ctx, store.Token{ID: newTokenID(), TenantID: tenantID, Name: name, Hash: HashSecret(secret)})
	return err
}

// ListTokens returns a tenant's tokens, without secrets.
func (s *Service) ListTokens(ctx context.Context, tenantID string) ([]store.Token, error) {
	if err := validTenantID(tenantID); err != nil {
		return nil, err
	}
	return s.cfg.Store.ListTokens(ctx, tenantID)
}

// RevokeToken revokes one of a tenant's tokens; requests with it fail from then on. An id no
// store could hold names no token: store.ErrNotFound.
func (s *Service) RevokeToken(ctx context.Context, tenantID, tokenID string) (store.Token, error) {
	if err := validTenantID(tenantID); err != nil {
		return store.Token{}, err
	}
	if abi.CheckText("token id", tokenID, maxTokenIDBytes) != nil {
		return store.Token{}, fmt.Errorf("token %q: %w", tokenID, store.ErrNotFound)
	}
	tok, err := s.cfg.Store.RevokeToken(ctx, tenantID, tokenID)
	// Forgotten whatever the store answered: a revocation that failed half-way costs only a
	// store read per token of the tenant.
	s.tokens.forgetTenant(tenantID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Token{}, fmt.Errorf("token %q: %w", tokenID, store.ErrNotFound)
	}
	return tok, err
}
