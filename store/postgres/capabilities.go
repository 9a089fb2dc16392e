package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// PutSecret creates or replaces a secret.
func (s *Store) PutSecret(ctx context.Context, tenantID, name string, value []byte) (_ store.Secret, err error) {
	defer classify(&err)
	var sec store.Secret
	err = s.pool.QueryRow(ctx, s.q("put_secret"), tenantID, name, value).Scan(&sec.TenantID, &sec.Name, &sec.CreatedAt, &sec.UpdatedAt)
	if err != nil {
		return store.Secret{}, fmt.Errorf("put secret %s: %w", name, notFound(err))
	}
	return sec, nil
}

// GetSecret returns a secret's value.
func (s *Store) GetSecret(ctx context.Context, tenantID, name string) (_ []byte, _ bool, err error) {
	defer classify(&err)
	var value []byte
	err = s.pool.QueryRow(ctx, s.q("get_secret"), tenantID, name).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		// The message names the secret, never its value.
		return nil, false, fmt.Errorf("get secret %s: %w", name, err)
	}
	return value, true, nil
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
		r.BytesOut, r.BytesIn, r.DurationMs, r.At)
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
			&o.BytesOut, &o.BytesIn, &o.DurationMs, &o.At)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("list outbound requests: %w", err)
	}
	return out, nil
}
