package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
)

// Tenant hooks (the API's /v1/hooks). What a hook may say is abi.Hook's rule, the one a
// module's onEnd obeys; here are the id, the tenant's bound on hooks and its outbound policy.

const (
	maxHookIDBytes = 100
	// MaxTenantHooks bounds the hooks a tenant sets through the API.
	MaxTenantHooks = 64
)

// hookIDPattern keeps a hook id fit for a URL path and an idempotency key, and apart from
// module hooks' ids (store.ModuleHookID), which hold a ':'.
var hookIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckHookID applies the rule of a tenant hook's id: 1 to 100 letters, digits, '.', '_' or
// '-', starting with a letter or digit.
func CheckHookID(id string) error {
	if len(id) > maxHookIDBytes || !hookIDPattern.MatchString(id) {
		return invalid("hook id", "%q must be 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit", truncate(id, 40), maxHookIDBytes)
	}
	return nil
}

// HookRequest sets a tenant hook: for the runs of Workflow ("" every workflow of the tenant),
// what Hook says.
type HookRequest struct {
	ID       string
	Workflow string
	Hook     abi.Hook
}

// PutHook creates or replaces a tenant hook. A webhook must be one the tenant's outbound
// allowlist lets through; the tenant's first webhook creates its signing secret, returned
// here (nil otherwise) and never again: rotate it to see a new one. The secret is stored
// sealed with the daemon's keyring (hooksecrets.go); without one, a webhook that needs a new
// secret is ErrSecretsDisabled, and one whose tenant has a secret from before sealing is set.
func (s *Service) PutHook(ctx context.Context, tenantID string, req HookRequest) (_ store.Hook, created bool, secret []byte, err error) {
	if err := CheckHookID(req.ID); err != nil {
		return store.Hook{}, false, nil, err
	}
	if req.Workflow != "" {
		if err := abi.CheckName("workflow", req.Workflow); err != nil {
			return store.Hook{}, false, nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	if err := req.Hook.Validate(); err != nil {
		return store.Hook{}, false, nil, fmt.Errorf("%w: hook: %v", ErrInvalid, err)
	}
	if req.Hook.Webhook != "" {
		limits, err := s.limits.get(ctx, tenantID)
		if err != nil {
			return store.Hook{}, false, nil, err
		}
		if err := host.WebhookAllowed(limits.AllowedHosts, req.Hook.Webhook); err != nil {
			return store.Hook{}, false, nil, fmt.Errorf("%w: webhook: %v", ErrInvalid, err)
		}
	}
	hooks, err := s.cfg.Store.ListHooks(ctx, tenantID)
	if err != nil {
		return store.Hook{}, false, nil, err
	}
	n, exists := 0, false
	for _, h := range hooks {
		if h.Source == store.HookSourceTenant {
			n++
			exists = exists || h.ID == req.ID
		}
	}
	if !exists && n >= MaxTenantHooks {
		return store.Hook{}, false, nil, fmt.Errorf("%w: the tenant has %d hooks, the most it may set", store.ErrLimit, n)
	}
	h := store.ModuleHooks(store.Workflow{TenantID: tenantID, Name: req.Workflow, OnEnd: []abi.Hook{req.Hook}})[0]
	h.ID, h.Source = req.ID, store.HookSourceTenant
	if req.Hook.Webhook != "" {
		if secret, err = s.firstHookSecret(ctx, tenantID); err != nil {
			return store.Hook{}, false, nil, err
		}
	}
	out, created, err := s.cfg.Store.PutHook(ctx, h)
	if err != nil {
		return store.Hook{}, false, nil, err
	}
	return out, created, secret, nil
}

// DeleteHook removes a tenant hook.
func (s *Service) DeleteHook(ctx context.Context, tenantID, id string) error {
	if err := CheckHookID(id); err != nil {
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	return s.cfg.Store.DeleteHook(ctx, tenantID, id)
}

// firstHookSecret makes the tenant's signing secret when it has none and returns it, the one
// time it is shown; nil when the tenant has one. It reads before it seals, so a tenant with a
// secret costs no seal, and a daemon without a keyring still sets webhooks for a tenant whose
// secret is from before sealing.
func (s *Service) firstHookSecret(ctx context.Context, tenantID string) ([]byte, error) {
	_, _, err := s.cfg.Store.HookSecret(ctx, tenantID, nil)
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	secret := NewHookSecret()
	sealed, err := sealHookSecret(s.cfg.SecretKeys, tenantID, secret)
	if err != nil {
		return nil, err
	}
	_, made, err := s.cfg.Store.HookSecret(ctx, tenantID, sealed)
	if err != nil || !made {
		// Made meanwhile by another call, which showed it.
		return nil, err
	}
	return secret, nil
}

// RotateHookSecret gives the tenant a new signing secret, returned once; deliveries signed
// from then on use it. It is stored sealed: without a keyring, ErrSecretsDisabled.
func (s *Service) RotateHookSecret(ctx context.Context, tenantID string) ([]byte, error) {
	secret := NewHookSecret()
	sealed, err := sealHookSecret(s.cfg.SecretKeys, tenantID, secret)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Store.RotateHookSecret(ctx, tenantID, sealed); err != nil {
		return nil, err
	}
	return secret, nil
}

// CheckDeliveryFilter checks a client's filter of hook deliveries.
func CheckDeliveryFilter(f store.DeliveryFilter) error {
	switch f.Status {
	case "", store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed:
	default:
		return invalid("status", "%q must be pending, delivered or failed", truncate(f.Status, 40))
	}
	if f.Limit < 0 || f.Limit > 500 {
		return invalid("limit", "%d is not within 0..500", f.Limit)
	}
	return nil
}
