package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/store"
)

// EnsureTenant creates the tenant if it does not exist.
func (s *Store) EnsureTenant(ctx context.Context, tenantID string) (err error) {
	defer classify(&err)
	return s.write(ctx, "ensure tenant", func(w *wtx) error {
		_, err := w.exec("ensure_tenant", tenantID, micros(w.now))
		return err
	})
}

// CreateTenant creates a tenant and its first token in one transaction.
func (s *Store) CreateTenant(ctx context.Context, t store.Tenant, first store.Token) (_ store.Tenant, err error) {
	defer classify(&err)
	limits, err := json.Marshal(t.Limits)
	if err != nil {
		return store.Tenant{}, fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	var out store.Tenant
	err = s.write(ctx, "create tenant "+t.ID, func(w *wtx) error {
		n, err := w.affected("create_tenant", t.ID, string(limits), micros(w.now))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: it exists", store.ErrConflict)
		}
		if err := w.insertToken(first, t.ID); err != nil {
			return err
		}
		out, err = scanTenant(w.queryRow("get_tenant", t.ID))
		return err
	})
	if err != nil {
		return store.Tenant{}, fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	return out, nil
}

// insertToken stores a token of tenantID, refusing a hash already stored.
func (w *wtx) insertToken(t store.Token, tenantID string) error {
	var one int
	switch err := w.queryRow("token_hash_exists", t.Hash).Scan(&one); {
	case err == nil:
		return fmt.Errorf("%w: the token is already stored", store.ErrConflict)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	_, err := w.exec("create_token", t.ID, tenantID, t.Name, t.Hash, micros(w.now))
	return err
}

// GetTenant returns one tenant.
func (s *Store) GetTenant(ctx context.Context, tenantID string) (_ store.Tenant, err error) {
	defer classify(&err)
	t, err := scanTenant(s.rdb.QueryRowContext(ctx, s.q("get_tenant"), tenantID))
	if err != nil {
		return store.Tenant{}, fmt.Errorf("tenant %s: %w", tenantID, notFound(err))
	}
	return t, nil
}

// ListTenants returns every tenant, oldest first.
func (s *Store) ListTenants(ctx context.Context) (_ []store.Tenant, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("list_tenants"))
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out, err := collect(rows, scanTenant)
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
	var out store.Tenant
	err = s.write(ctx, "set limits of tenant "+tenantID, func(w *wtx) error {
		var err error
		out, err = scanTenant(w.queryRow("set_tenant_limits", tenantID, string(limits)))
		return notFound(err)
	})
	if err != nil {
		return store.Tenant{}, err
	}
	return out, nil
}

// CreateToken adds a token to an existing tenant.
func (s *Store) CreateToken(ctx context.Context, t store.Token) (_ store.Token, err error) {
	defer classify(&err)
	var out store.Token
	err = s.write(ctx, "create token for tenant "+t.TenantID, func(w *wtx) error {
		var one int
		if err := w.queryRow("tenant_exists", t.TenantID).Scan(&one); err != nil {
			return notFound(err)
		}
		if err := w.insertToken(t, t.TenantID); err != nil {
			return err
		}
		var err error
		out, err = scanToken(w.queryRow("get_token", t.TenantID, t.ID))
		return err
	})
	if err != nil {
		return store.Token{}, err
	}
	return out, nil
}

// ListTokens returns the tenant's tokens without their hashes.
func (s *Store) ListTokens(ctx context.Context, tenantID string) (_ []store.Token, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("list_tokens"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out, err := collect(rows, scanToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes one of the tenant's tokens; revoking again keeps the first time.
func (s *Store) RevokeToken(ctx context.Context, tenantID, tokenID string) (_ store.Token, err error) {
	defer classify(&err)
	var out store.Token
	err = s.write(ctx, "revoke token "+tokenID, func(w *wtx) error {
		var err error
		out, err = scanToken(w.queryRow("revoke_token", tenantID, tokenID, micros(w.now)))
		return notFound(err)
	})
	if err != nil {
		return store.Token{}, err
	}
	return out, nil
}

// Authenticate maps a live token's hash to the token: its id, name and tenant.
func (s *Store) Authenticate(ctx context.Context, hash []byte) (_ store.Token, err error) {
	defer classify(&err)
	var t store.Token
	if err := s.rdb.QueryRowContext(ctx, s.q("authenticate"), hash).Scan(&t.ID, &t.TenantID, &t.Name); err != nil {
		return store.Token{}, fmt.Errorf("authenticate: %w", notFound(err))
	}
	return t, nil
}

// SweepExpired deletes one batch of terminal runs past their retention; their journals, events
// and audit records go with them (foreign keys, ON DELETE CASCADE).
func (s *Store) SweepExpired(ctx context.Context, limit int) (_ int, err error) {
	defer classify(&err)
	var n int64
	err = s.write(ctx, "sweep expired runs", func(w *wtx) error {
		var err error
		n, err = w.affected("sweep_expired", micros(w.now), limit)
		return err
	})
	return int(n), err
}

// PruneBroadcasts deletes one batch of broadcast events received before before.
func (s *Store) PruneBroadcasts(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	defer classify(&err)
	var n int64
	err = s.write(ctx, "prune broadcast events", func(w *wtx) error {
		var err error
		n, err = w.affected("prune_broadcasts", micros(before), limit)
		return err
	})
	return int(n), err
}

func scanTenant(row scanner) (store.Tenant, error) {
	var (
		t       store.Tenant
		limits  string
		created int64
	)
	if err := row.Scan(&t.ID, &limits, &created); err != nil {
		return store.Tenant{}, err
	}
	if err := json.Unmarshal([]byte(limits), &t.Limits); err != nil {
		return store.Tenant{}, fmt.Errorf("decode limits of tenant %s: %w", t.ID, err)
	}
	t.CreatedAt = fromMicros(created)
	return t, nil
}

func scanToken(row scanner) (store.Token, error) {
	var (
		t       store.Token
		created int64
		revoked sql.NullInt64
	)
	if err := row.Scan(&t.ID, &t.TenantID, &t.Name, &created, &revoked); err != nil {
		return store.Token{}, err
	}
	t.CreatedAt, t.RevokedAt = fromMicros(created), timePtr(revoked)
	return t, nil
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
