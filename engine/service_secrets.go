package engine

import (
	"context"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// PutSecret creates or replaces a tenant's secret.
func (s *Service) PutSecret(ctx context.Context, tenantID, name string, value []byte) (store.Secret, error) {
	if err := validSecretName(name); err != nil {
		return store.Secret{}, err
	}
	if err := checkSecretValue(name, value); err != nil {
		return store.Secret{}, err
	}
	if s.cfg.SecretKeys == nil {
		return store.Secret{}, ErrSecretsDisabled
	}
	sealed, err := s.cfg.SecretKeys.Seal(value, secretContext(tenantID, name))
	if err != nil {
		return store.Secret{}, fmt.Errorf("put secret %s: %w", name, err)
	}
	return s.cfg.Store.PutSecret(ctx, tenantID, name, sealedValue(sealed))
}

// DeleteSecret removes a tenant's secret.
func (s *Service) DeleteSecret(ctx context.Context, tenantID, name string) error {
	if err := validSecretName(name); err != nil {
		return err
	}
	return s.cfg.Store.DeleteSecret(ctx, tenantID, name)
}
