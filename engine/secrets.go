package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/store"
)

// Secrets at rest: the engine seals a value before the store sees it and opens it when a step
// callback reads it (envelope encryption, internal/envelope), so both stores keep ciphertext
// only. RATIONALE.md says why here, and what happens without a key.

// ErrSecretsDisabled: the engine has no key to seal secrets with.
var ErrSecretsDisabled = errors.New("secrets are disabled: the daemon has no key to encrypt them with; start it with --secrets-key-file (or WFHOST_SECRETS_KEY)")

// secretContext binds a sealed value to its row: a value copied to another tenant's or name's
// row does not open. Lengths prefix both parts, so no two rows give the same bytes.
func secretContext(tenantID, name string) []byte {
	return []byte(strconv.Itoa(len(tenantID)) + ":" + tenantID + "/" + name)
}

func sealedValue(s envelope.Sealed) store.SecretValue {
	return store.SecretValue{KeyID: s.KeyID, DataKey: s.DataKey, Ciphertext: s.Ciphertext}
}

func envelopeOf(v store.SecretValue) envelope.Sealed {
	return envelope.Sealed{KeyID: v.KeyID, DataKey: v.DataKey, Ciphertext: v.Ciphertext}
}

// checkSecretValue applies ABI.md §4.12's bounds to a new value.
func checkSecretValue(name string, value []byte) error {
	switch {
	case len(value) == 0:
		return fmt.Errorf("%w: secret %s has an empty value", ErrInvalid, name)
	case len(value) < abi.MinSecretBytes:
		return fmt.Errorf("%w: secret %s: the value is %d bytes, the minimum is %d (a shorter one could not be told apart from ordinary text when it is redacted)", ErrInvalid, name, len(value), abi.MinSecretBytes)
	case len(value) > abi.MaxSecretBytes:
		return fmt.Errorf("secret %s: %w: the value is %d bytes, the limit is %d", name, ErrTooLarge, len(value), abi.MaxSecretBytes)
	case strings.Contains(`"`+abi.Redacted+`"`, string(value)):
		return fmt.Errorf("%w: secret %s: the value is part of the redaction marker %q, so it could never be told apart from it", ErrInvalid, name, abi.Redacted)
	}
	return nil
}

// openSecret is a stored value in plaintext: opened with the keyring, or as it is in a row from
// before encryption.
func openSecret(keys *envelope.Keyring, tenantID, name string, v store.SecretValue) ([]byte, error) {
	if v.KeyID == "" {
		return v.Plaintext, nil
	}
	if keys == nil {
		return nil, fmt.Errorf("secret %s is encrypted under key %q: %w", name, v.KeyID, ErrSecretsDisabled)
	}
	plain, err := keys.Open(envelopeOf(v), secretContext(tenantID, name))
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return plain, nil
}

// SealReport is what SealSecrets did.
type SealReport struct {
	Sealed    int // rows from before encryption, now encrypted
	Rewrapped int // values moved to the primary key
	// HookSecretsSealed and HookSecretsRewrapped count the same for the tenants' webhook
	// signing secrets (hooksecrets.go).
	HookSecretsSealed    int
	HookSecretsRewrapped int
	// Failed names the secrets left as they were (tenant/name: why), for the operator: a value
	// under a key the keyring lacks stays unreadable until that key is added back.
	Failed []string
}

// SealSecrets brings every stored secret under the keyring's primary key: it encrypts the rows
// written before secrets were encrypted and rewraps the data keys of values sealed under older
// keys (their ciphertext is unchanged). A secret written meanwhile is left to its writer. It
// runs at the daemon's start and as `wfhost secrets rewrap`; running it twice does nothing
// more. It reads one tenant at a time, as every store query does. The tenants' webhook signing
// secrets are brought under the primary the same way, and one already under it is opened, so
// a wrong key is reported in Failed rather than met by the first delivery.
func SealSecrets(ctx context.Context, st store.Store, keys *envelope.Keyring, log *slog.Logger) (SealReport, error) {
	var rep SealReport
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tenants, err := st.ListTenants(ctx)
	if err != nil {
		return rep, fmt.Errorf("seal secrets: %w", err)
	}
	for _, t := range tenants {
		stale, err := st.SecretsNotUnder(ctx, t.ID, keys.Primary())
		if err != nil {
			return rep, fmt.Errorf("seal secrets of tenant %s: %w", t.ID, err)
		}
		for _, s := range stale {
			var next envelope.Sealed
			rowContext := secretContext(t.ID, s.Name)
			if s.Value.KeyID == "" {
				next, err = keys.Seal(s.Value.Plaintext, rowContext)
			} else {
				next, err = keys.Rewrap(envelopeOf(s.Value), rowContext)
			}
			if err != nil {
				rep.Failed = append(rep.Failed, t.ID+"/"+s.Name+": "+err.Error())
				continue
			}
			replaced, err := st.ReplaceSecretValue(ctx, t.ID, s.Name, s.Value, sealedValue(next))
			if err != nil {
				return rep, fmt.Errorf("seal secret %s of tenant %s: %w", s.Name, t.ID, err)
			}
			switch {
			case !replaced:
				// Written or deleted since it was read: the writer sealed it under the primary.
			case s.Value.KeyID == "":
				rep.Sealed++
			default:
				rep.Rewrapped++
			}
		}
		if err := sealHookSecrets(ctx, st, keys, t.ID, &rep); err != nil {
			return rep, err
		}
	}
	if len(rep.Failed) > 0 {
		log.Error("some secrets could not be brought under the primary key; add their keys to the keyring as older keys",
			"primary", keys.Primary(), "failed", strings.Join(rep.Failed, "; "))
	}
	return rep, nil
}
