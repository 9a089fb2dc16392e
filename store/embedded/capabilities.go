package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// PutSecret creates or replaces a secret of an existing tenant.
func (s *Store) PutSecret(ctx context.Context, tenantID, name string, value []byte) (_ store.Secret, err error) {
	defer classify(&err)
	var sec store.Secret
	err = s.write(ctx, "put secret "+name, func(w *wtx) error {
		var created, updated int64
		err := w.queryRow("put_secret", tenantID, name, value, micros(w.now)).Scan(&sec.TenantID, &sec.Name, &created, &updated)
		sec.CreatedAt, sec.UpdatedAt = fromMicros(created), fromMicros(updated)
		return notFound(err)
	})
	if err != nil {
		return store.Secret{}, err
	}
	return sec, nil
}

// GetSecret returns a secret's value.
func (s *Store) GetSecret(ctx context.Context, tenantID, name string) (_ []byte, _ bool, err error) {
	defer classify(&err)
	var value []byte
	err = s.rdb.QueryRowContext(ctx, s.q("get_secret"), tenantID, name).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
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
	rows, err := s.rdb.QueryContext(ctx, s.q("list_secrets"), tenantID)
	if err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	out, err := collect(rows, func(r scanner) (store.Secret, error) {
		var (
			sec              store.Secret
			created, updated int64
		)
		err := r.Scan(&sec.TenantID, &sec.Name, &created, &updated)
		sec.CreatedAt, sec.UpdatedAt = fromMicros(created), fromMicros(updated)
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
	return s.write(ctx, "delete secret "+name, func(w *wtx) error {
		n, err := w.affected("delete_secret", tenantID, name)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return err
	})
}

// RecordOutbound appends to a run's audit trail; a record naming a run that is not the
// tenant's is not written.
func (s *Store) RecordOutbound(ctx context.Context, r store.OutboundRecord) (err error) {
	defer classify(&err)
	return s.write(ctx, "record outbound request", func(w *wtx) error {
		_, err := w.exec("record_outbound", r.TenantID, r.RunID, r.Step, r.Method, r.Host, r.Path, r.Status, r.Error,
			r.BytesOut, r.BytesIn, r.DurationMs, micros(r.At))
		return err
	})
}

// ListOutbound returns a run's audit trail in the order it was recorded.
func (s *Store) ListOutbound(ctx context.Context, tenantID, runID string) (_ []store.OutboundRecord, err error) {
	defer classify(&err)
	if _, err := s.GetRun(ctx, tenantID, runID); err != nil {
		return nil, err
	}
	rows, err := s.rdb.QueryContext(ctx, s.q("list_outbound"), tenantID, runID)
	if err != nil {
		return nil, fmt.Errorf("list outbound requests: %w", err)
	}
	out, err := collect(rows, func(r scanner) (store.OutboundRecord, error) {
		var (
			o  store.OutboundRecord
			at int64
		)
		err := r.Scan(&o.ID, &o.TenantID, &o.RunID, &o.Step, &o.Method, &o.Host, &o.Path, &o.Status, &o.Error,
			&o.BytesOut, &o.BytesIn, &o.DurationMs, &at)
		o.At = fromMicros(at)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("list outbound requests: %w", err)
	}
	return out, nil
}
