package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// PutSecret creates or replaces a secret with a sealed value.
func (s *Store) PutSecret(ctx context.Context, tenantID, name string, v store.SecretValue) (_ store.Secret, err error) {
	defer classify(&err)
	var sec store.Secret
	err = s.pool.QueryRow(ctx, s.q("put_secret"), tenantID, name, v.KeyID, v.DataKey, v.Ciphertext).Scan(&sec.TenantID, &sec.Name, &sec.CreatedAt, &sec.UpdatedAt)
	if err != nil {
		return store.Secret{}, fmt.Errorf("put secret %s: %w", name, notFound(err))
	}
	return sec, nil
}

// GetSecret returns a secret's stored value.
func (s *Store) GetSecret(ctx context.Context, tenantID, name string) (_ store.SecretValue, _ bool, err error) {
	defer classify(&err)
	var v store.SecretValue
	err = s.pool.QueryRow(ctx, s.q("get_secret"), tenantID, name).Scan(&v.KeyID, &v.DataKey, &v.Ciphertext, &v.Plaintext)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.SecretValue{}, false, nil
	}
	if err != nil {
		// The message names the secret, never its value.
		return store.SecretValue{}, false, fmt.Errorf("get secret %s: %w", name, err)
	}
	return v, true, nil
}

// SecretsNotUnder returns the tenant's secrets not sealed by keyID, with their values.
func (s *Store) SecretsNotUnder(ctx context.Context, tenantID, keyID string) (_ []store.NamedSecretValue, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("secrets_not_under"), tenantID, keyID)
	if err != nil {
		return nil, fmt.Errorf("secrets not under key %s: %w", keyID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.NamedSecretValue, error) {
		var n store.NamedSecretValue
		err := r.Scan(&n.Name, &n.Value.KeyID, &n.Value.DataKey, &n.Value.Ciphertext, &n.Value.Plaintext)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("secrets not under key %s: %w", keyID, err)
	}
	return out, nil
}

// ReplaceSecretValue sets a secret's value to next if it is still prev.
func (s *Store) ReplaceSecretValue(ctx context.Context, tenantID, name string, prev, next store.SecretValue) (_ bool, err error) {
	defer classify(&err)
	tag, err := s.pool.Exec(ctx, s.q("replace_secret_value"), tenantID, name, prev.KeyID, prev.DataKey, prev.Ciphertext, prev.Plaintext,
		next.KeyID, next.DataKey, next.Ciphertext)
	if err != nil {
		return false, fmt.Errorf("replace the value of secret %s: %w", name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ListSecrets returns the tenant's secrets without values.
func (s *Store) ListSecrets(ctx context.Context, tenantID string) (_ []store.Secret, err error) {
	defer classify(&err)
	rows, err := s.pool.Query(ctx, s.q("list_secrets"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Secret, error) {
		var sec store.Secret
		err := r.Scan(&sec.TenantID, &sec.Name, &sec.CreatedAt, &sec.UpdatedAt)
		return sec, err
	})
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	return out, nil
}

// DeleteSecret removes a secret.
func (s *Store) DeleteSecret(ctx context.Context, tenantID, name string) (err error) {
	defer classify(&err)
	tag, err := s.pool.Exec(ctx, s.q("delete_secret"), tenantID, name)
	if err != nil {
		return fmt.Errorf("delete secret %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete secret %s: %w", name, store.ErrNotFound)
	}
	return nil
}

// RecordOutbound appends to a run's audit trail.
func (s *Store) RecordOutbound(ctx context.Context, r store.OutboundRecord) (err error) {
	defer classify(&err)
	if !validUUID(r.RunID) {
		return fmt.Errorf("record outbound request of run %q: %w", r.RunID, store.ErrNotFound)
	}
	_, err = s.pool.Exec(ctx, s.q("record_outbound"), r.TenantID, r.RunID, r.Step, r.Method, r.Host, r.Path, r.Status, r.Error,
		r.BytesOut, r.BytesIn, r.DurationMs, r.At, r.RequestID, r.Hop, r.Scheme, r.Port)
	if err != nil {
		return fmt.Errorf("record outbound request: %w", err)
	}
	return nil
}

// ListOutbound returns a run's audit trail.
func (s *Store) ListOutbound(ctx context.Context, tenantID, runID string) (_ []store.OutboundRecord, err error) {
	defer classify(&err)
	if _, err := s.GetRun(ctx, tenantID, runID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q("list_outbound"), tenantID, runID)
	if err != nil {
		return nil, fmt.Errorf("list outbound requests: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.OutboundRecord, error) {
		var o store.OutboundRecord
		err := r.Scan(&o.ID, &o.TenantID, &o.RunID, &o.Step, &o.Method, &o.Host, &o.Path, &o.Status, &o.Error,
			&o.BytesOut, &o.BytesIn, &o.DurationMs, &o.At, &o.RequestID, &o.Hop, &o.Scheme, &o.Port)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("list outbound requests: %w", err)
	}
	return out, nil
}
