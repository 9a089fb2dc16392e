package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// PutSecret creates or replaces a secret of an existing tenant with a sealed value.
func (s *Store) PutSecret(ctx context.Context, tenantID, name string, v store.SecretValue) (_ store.Secret, err error) {
	defer classify(&err)
	var sec store.Secret
	err = s.write(ctx, "put secret "+name, func(w *wtx) error {
		var created, updated int64
		err := w.queryRow("put_secret", tenantID, name, v.KeyID, orNull(v.DataKey), orNull(v.Ciphertext), micros(w.now)).Scan(&sec.TenantID, &sec.Name, &created, &updated)
		sec.CreatedAt, sec.UpdatedAt = fromMicros(created), fromMicros(updated)
		return notFound(err)
	})
	if err != nil {
		return store.Secret{}, err
	}
	return sec, nil
}

// GetSecret returns a secret's stored value.
func (s *Store) GetSecret(ctx context.Context, tenantID, name string) (_ store.SecretValue, _ bool, err error) {
	defer classify(&err)
	var v store.SecretValue
	err = s.rdb.QueryRowContext(ctx, s.q("get_secret"), tenantID, name).Scan(&v.KeyID, &v.DataKey, &v.Ciphertext, &v.Plaintext)
	if errors.Is(err, sql.ErrNoRows) {
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
	rows, err := s.rdb.QueryContext(ctx, s.q("secrets_not_under"), tenantID, keyID)
	if err != nil {
		return nil, fmt.Errorf("secrets not under key %s: %w", keyID, err)
	}
	out, err := collect(rows, func(r scanner) (store.NamedSecretValue, error) {
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
	var n int64
	err = s.write(ctx, "replace the value of secret "+name, func(w *wtx) error {
		var err error
		n, err = w.affected("replace_secret_value", tenantID, name, prev.KeyID, orNull(prev.DataKey), orNull(prev.Ciphertext), orNull(prev.Plaintext),
			next.KeyID, orNull(next.DataKey), orNull(next.Ciphertext))
		return err
	})
	return n == 1, err
}

// orNull binds a nil slice as NULL, as the columns that are absent in a row of the other kind
// hold it.
func orNull(b []byte) any {
	if b == nil {
		return nil
	}
	return b
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
			r.BytesOut, r.BytesIn, r.DurationMs, micros(r.At), r.RequestID, r.Hop, r.Scheme, r.Port)
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
			&o.BytesOut, &o.BytesIn, &o.DurationMs, &at, &o.RequestID, &o.Hop, &o.Scheme, &o.Port)
		o.At = fromMicros(at)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("list outbound requests: %w", err)
	}
	return out, nil
}
