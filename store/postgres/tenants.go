package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wfhost/wfhost/store"
)

// CreateTenant creates a tenant and its first token: one statement.
func (s *Store) CreateTenant(ctx context.Context, t store.Tenant, first store.Token) (_ store.Tenant, err error) {
	defer classify(&err)
	limits, err := json.Marshal(t.Limits)
	if err != nil {
		return store.Tenant{}, fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	out, err := scanTenant(s.pool.QueryRow(ctx, s.q("create_tenant"), t.ID, limits, first.ID, first.Name, first.Hash))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.Tenant{}, fmt.Errorf("create tenant %s: %w: it exists", t.ID, store.ErrConflict)
	case isUniqueViolation(err):
		return store.Tenant{}, fmt.Errorf("create tenant %s: %w: the token is already stored", t.ID, store.ErrConflict)
	case err != nil:
		return store.Tenant{}, fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	return out, nil
}

// GetTenant returns one tenant.
func (s *Store) GetTenant(ctx context.Context, tenantID string) (_ store.Tenant, err error) {
	defer classify(&err)
	t, err := scanTenant(s.pool.QueryRow(ctx, s.q("get_tenant"), tenantID))
	if err != nil {
		return store.Tenant{}, fmt.Errorf("tenant %s: %w", tenantID, notFound(err))
	}
	return t, nil
}

// ListTenants returns every tenant, oldest first.
func (s *Store) ListTenants(ctx context.Context) (_ []store.Tenant, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("list_tenants"))
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Tenant, error) { return scanTenant(r) })
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	return out, nil
}

// SetTenantLimits replaces the tenant's limit overrides.
func (s *Store) SetTenantLimits(ctx context.Context, tenantID string, l store.Limits) (_ store.Tenant, err error) {
	defer classify(&err)
	limits, err := json.Marshal(l)
	if err != nil {
		return store.Tenant{}, fmt.Errorf("set limits of tenant %s: %w", tenantID, err)
	}
	t, err := scanTenant(s.pool.QueryRow(ctx, s.q("set_tenant_limits"), tenantID, limits))
	if err != nil {
		return store.Tenant{}, fmt.Errorf("set limits of tenant %s: %w", tenantID, notFound(err))
	}
	return t, nil
}

// CreateToken adds a token to an existing tenant.
func (s *Store) CreateToken(ctx context.Context, t store.Token) (_ store.Token, err error) {
	defer classify(&err)
	out, err := scanToken(s.pool.QueryRow(ctx, s.q("create_token"), t.ID, t.TenantID, t.Name, t.Hash))
	switch {
	case isUniqueViolation(err):
		return store.Token{}, fmt.Errorf("create token for tenant %s: %w: the token is already stored", t.TenantID, store.ErrConflict)
	case err != nil:
		return store.Token{}, fmt.Errorf("create token for tenant %s: %w", t.TenantID, notFound(err))
	}
	return out, nil
}

// ListTokens returns the tenant's tokens without their hashes.
func (s *Store) ListTokens(ctx context.Context, tenantID string) (_ []store.Token, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("list_tokens"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Token, error) { return scanToken(r) })
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes one of the tenant's tokens.
func (s *Store) RevokeToken(ctx context.Context, tenantID, tokenID string) (_ store.Token, err error) {
	defer classify(&err)
	t, err := scanToken(s.pool.QueryRow(ctx, s.q("revoke_token"), tenantID, tokenID))
	if err != nil {
		return store.Token{}, fmt.Errorf("revoke token %s: %w", tokenID, notFound(err))
	}
	return t, nil
}

// Authenticate maps a live token's hash to the token: its id, name and tenant.
func (s *Store) Authenticate(ctx context.Context, hash []byte) (_ store.Token, err error) {
	defer classify(&err)
	var t store.Token
	if err := s.pool.QueryRow(ctx, s.q("authenticate"), hash).Scan(&t.ID, &t.TenantID, &t.Name); err != nil {
		return store.Token{}, fmt.Errorf("authenticate: %w", notFound(err))
	}
	return t, nil
}

// SweepExpired deletes one batch of runs past their retention.
func (s *Store) SweepExpired(ctx context.Context, limit int) (_ int, err error) {
	defer classify(&err)
	tag, err := s.pool.Exec(ctx, s.q("sweep_expired"), limit)
	if err != nil {
		return 0, fmt.Errorf("sweep expired runs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// PruneBroadcasts deletes one batch of broadcast events received before before.
func (s *Store) PruneBroadcasts(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	defer classify(&err)
	tag, err := s.pool.Exec(ctx, s.q("prune_broadcasts"), before, limit)
	if err != nil {
		return 0, fmt.Errorf("prune broadcast events: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

func scanTenant(row pgx.Row) (store.Tenant, error) {
	var (
		t      store.Tenant
		limits []byte
	)
	if err := row.Scan(&t.ID, &limits, &t.CreatedAt); err != nil {
		return store.Tenant{}, err
	}
	if err := json.Unmarshal(limits, &t.Limits); err != nil {
		return store.Tenant{}, fmt.Errorf("decode limits of tenant %s: %w", t.ID, err)
	}
	return t, nil
}

func scanToken(row pgx.Row) (store.Token, error) {
	var t store.Token
	err := row.Scan(&t.ID, &t.TenantID, &t.Name, &t.CreatedAt, &t.RevokedAt)
	return t, err
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
