package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/store"
)

// Webhook signing secrets at rest: sealed with the keyring that seals tenant secrets
// (secrets.go), and kept in hook_secrets.secret as opaque bytes with a version prefix, so the
// stores need no new column and no migration. A row from before sealing holds the secret
// itself ("whsec_" and hex); the daemon seals it at start (SealSecrets) or when it first signs
// with it, keeping the same secret, so a receiver's verification goes on working across the
// upgrade. RATIONALE.md ("Webhook signing secrets are sealed") says why it is built this way.

// sealedHookSecretV1 prefixes a sealed signing secret. Its first byte is NUL, which no secret
// from before sealing has (NewHookSecret makes printable ones), so the two kinds of row are
// told apart by their first byte; a later format takes another name after the NUL.
const sealedHookSecretV1 = "\x00wfhost-hook-secret/v1\x00"

// errHookSecretFormat: a stored signing secret that is neither sealed nor from before sealing.
var errHookSecretFormat = errors.New("the stored signing secret is in no format this daemon reads")

// hookSecretContext binds a sealed signing secret to its tenant: one copied to another
// tenant's row does not open. It cannot equal a tenant secret's context (secretContext starts
// with a digit) nor a snapshot's.
func hookSecretContext(tenantID string) []byte {
	return []byte("wfhost-hook-secret/" + tenantID)
}

// encodeHookSecret is the stored form of a sealed signing secret: the prefix, the key id and
// the wrapped data key as length-prefixed fields, then the ciphertext.
func encodeHookSecret(s envelope.Sealed) []byte {
	out := append([]byte(nil), sealedHookSecretV1...)
	out = appendField(out, []byte(s.KeyID))
	out = appendField(out, s.DataKey)
	return append(out, s.Ciphertext...)
}

// decodeHookSecret reads a stored signing secret: sealed, or (legacy) the secret itself.
func decodeHookSecret(stored []byte) (sealed envelope.Sealed, legacy []byte, err error) {
	switch {
	case len(stored) == 0:
		return envelope.Sealed{}, nil, fmt.Errorf("%w: it is empty", errHookSecretFormat)
	case stored[0] != 0:
		return envelope.Sealed{}, stored, nil
	case !bytes.HasPrefix(stored, []byte(sealedHookSecretV1)):
		return envelope.Sealed{}, nil, fmt.Errorf("%w: an unknown version (written by a newer daemon?)", errHookSecretFormat)
	}
	keyID, rest, ok := cutField(stored[len(sealedHookSecretV1):])
	dataKey, ciphertext, ok2 := cutField(rest)
	if !ok || !ok2 || len(keyID) == 0 || len(ciphertext) == 0 {
		return envelope.Sealed{}, nil, fmt.Errorf("%w: the sealed value is truncated", errHookSecretFormat)
	}
	return envelope.Sealed{KeyID: string(keyID), DataKey: dataKey, Ciphertext: ciphertext}, nil, nil
}

// sealHookSecret seals a new signing secret for the tenant; without a keyring there is no
// way to keep one at rest, so none is made (ErrSecretsDisabled, as for a tenant secret).
func sealHookSecret(keys *envelope.Keyring, tenantID string, secret []byte) ([]byte, error) {
	if keys == nil {
		return nil, fmt.Errorf("no webhook signing secret can be made: %w", ErrSecretsDisabled)
	}
	s, err := keys.Seal(secret, hookSecretContext(tenantID))
	if err != nil {
		return nil, fmt.Errorf("seal the webhook signing secret: %w", err)
	}
	return encodeHookSecret(s), nil
}

// openHookSecret is the tenant's signing secret from its stored form; legacy says the row is
// from before sealing. A sealed row that does not open (no keyring, a key the keyring lacks,
// a wrong key under the right id, damaged bytes) is an error naming why, never a secret: a
// delivery signed with anything else would be one no receiver can verify.
func openHookSecret(keys *envelope.Keyring, tenantID string, stored []byte) (secret []byte, legacy bool, err error) {
	sealed, plain, err := decodeHookSecret(stored)
	switch {
	case err != nil:
		return nil, false, err
	case plain != nil:
		return plain, true, nil
	case keys == nil:
		return nil, false, fmt.Errorf("the webhook signing secret is sealed under key %q: %w", sealed.KeyID, ErrSecretsDisabled)
	}
	secret, err = keys.Open(sealed, hookSecretContext(tenantID))
	if err != nil {
		return nil, false, fmt.Errorf("open the webhook signing secret with the keyring: %w", err)
	}
	return secret, false, nil
}

// hookSigningSecret is the tenant's signing secret for a delivery: read (or, when the tenant
// has none, as for a module's onEnd webhook, made and sealed) and opened. A row from before
// sealing is sealed here when the daemon has a keyring, so a row an older daemon wrote during
// a rolling upgrade does not stay in plaintext until the next start.
func hookSigningSecret(ctx context.Context, st store.Store, keys *envelope.Keyring, tenantID string, log *slog.Logger) ([]byte, error) {
	stored, _, err := st.HookSecret(ctx, tenantID, nil)
	if errors.Is(err, store.ErrNotFound) {
		sealed, serr := sealHookSecret(keys, tenantID, NewHookSecret())
		if serr != nil {
			return nil, serr
		}
		stored, _, err = st.HookSecret(ctx, tenantID, sealed)
	}
	if err != nil {
		return nil, err
	}
	secret, legacy, err := openHookSecret(keys, tenantID, stored)
	if err != nil {
		return nil, err
	}
	if legacy && keys != nil {
		if sealed, err := sealHookSecret(keys, tenantID, secret); err == nil {
			// A lost compare-and-set is a rotation in between, sealed by its writer.
			if _, err := st.ReplaceHookSecret(ctx, tenantID, stored, sealed); err != nil {
				log.Warn("seal a webhook signing secret from before sealing", "tenant", tenantID, "err", err)
			}
		}
	}
	return secret, nil
}

// sealHookSecrets is SealSecrets's pass over the tenant's signing secret: a row from before
// sealing is sealed (the same secret), one under an older key rewrapped, and one under the
// primary opened, so a keyring whose primary has the right id but the wrong bytes is found at
// start rather than at the first delivery.
func sealHookSecrets(ctx context.Context, st store.Store, keys *envelope.Keyring, tenantID string, rep *SealReport) error {
	stored, _, err := st.HookSecret(ctx, tenantID, nil)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the webhook signing secret of tenant %s: %w", tenantID, err)
	}
	fail := func(err error) { rep.Failed = append(rep.Failed, tenantID+" webhook signing secret: "+err.Error()) }
	sealed, plain, err := decodeHookSecret(stored)
	if err != nil {
		fail(err)
		return nil
	}
	var next envelope.Sealed
	switch {
	case plain != nil:
		next, err = keys.Seal(plain, hookSecretContext(tenantID))
	case sealed.KeyID == keys.Primary():
		_, err = keys.Open(sealed, hookSecretContext(tenantID))
		if err == nil {
			return nil
		}
	default:
		next, err = keys.Rewrap(sealed, hookSecretContext(tenantID))
	}
	if err != nil {
		fail(err)
		return nil
	}
	replaced, err := st.ReplaceHookSecret(ctx, tenantID, stored, encodeHookSecret(next))
	switch {
	case err != nil:
		return fmt.Errorf("seal the webhook signing secret of tenant %s: %w", tenantID, err)
	case !replaced:
		// Rotated since it was read: the rotation sealed it under the primary.
	case plain != nil:
		rep.HookSecretsSealed++
	default:
		rep.HookSecretsRewrapped++
	}
	return nil
}
