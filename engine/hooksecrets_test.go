package engine_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// hookSecretsBackend is a store with raw SQL on its hook_secrets table: to see what is at
// rest, and to write a row as a daemon from before sealing did.
type hookSecretsBackend struct {
	name string
	st   store.Store
	// raw is the tenant's stored secret, byte for byte (nil: no row).
	raw func(t *testing.T, tenant string) []byte
	// putRaw writes the tenant's row as given, as an older daemon would have.
	putRaw func(t *testing.T, tenant string, secret []byte)
}

func hookSecretsBackends(t *testing.T) []hookSecretsBackend {
	ctx := context.Background()
	raw := openRawStores(t, "wfhost_hooksec")
	pg, conn, emb, sqlite := raw.pg, raw.pgConn, raw.emb, raw.sqlite
	return []hookSecretsBackend{
		{"postgres", pg,
			func(t *testing.T, tenant string) []byte {
				var b []byte
				if err := conn.QueryRow(ctx, "SELECT secret FROM hook_secrets WHERE tenant_id = $1", tenant).Scan(&b); err != nil && !errors.Is(err, pgx.ErrNoRows) {
					t.Fatal(err)
				}
				return b
			},
			func(t *testing.T, tenant string, secret []byte) {
				if _, err := conn.Exec(ctx, "INSERT INTO hook_secrets (tenant_id, secret) VALUES ($1, $2) ON CONFLICT (tenant_id) DO UPDATE SET secret = EXCLUDED.secret", tenant, secret); err != nil {
					t.Fatal(err)
				}
			}},
		{"embedded", emb,
			func(t *testing.T, tenant string) []byte {
				var b []byte
				if err := sqlite.QueryRow("SELECT secret FROM hook_secrets WHERE tenant_id = ?", tenant).Scan(&b); err != nil && !errors.Is(err, sql.ErrNoRows) {
					t.Fatal(err)
				}
				return b
			},
			func(t *testing.T, tenant string, secret []byte) {
				if _, err := sqlite.Exec("INSERT INTO hook_secrets (tenant_id, secret, created_at) VALUES (?, ?, 1) ON CONFLICT (tenant_id) DO UPDATE SET secret = excluded.secret", tenant, secret); err != nil {
					t.Fatal(err)
				}
			}},
	}
}

// hookedTenant is a tenant with the examples deployed and a webhook hook on cancelled runs
// to rc: end() cancels a new run, so its delivery waits in the outbox.
type hookedTenant struct {
	id     string
	st     store.Store
	digest string
}

func newHookedTenant(t *testing.T, eng *engine.Engine, st store.Store, id string, rc *webhookReceiver) hookedTenant {
	t.Helper()
	ctx := context.Background()
	if err := st.EnsureTenant(ctx, id); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Deploy(ctx, id, fixture(t, "examples.wasm"), false)
	if err != nil {
		t.Fatal(err)
	}
	// Through the store, so that whether a secret is made, and by whom, is the test's choice.
	if _, _, err := st.PutHook(ctx, store.Hook{TenantID: id, ID: "w", Source: store.HookSourceTenant,
		When: []store.RunStatus{store.StatusCancelled}, URL: rc.srv.URL + "/" + id}); err != nil {
		t.Fatal(err)
	}
	return hookedTenant{id: id, st: st, digest: res.Module.Digest}
}

func (h hookedTenant) end(t *testing.T) {
	t.Helper()
	endACancelledRun(t, h.st, h.id, h.digest)
}

// endACancelledRun creates a run of the tenant's steps workflow (module digest) and cancels
// it before any host runs it: a run's end, for the hooks on cancelled runs to take, with no
// guest in the way.
func endACancelledRun(t *testing.T, st store.Store, tenant, digest string) {
	t.Helper()
	ctx := context.Background()
	r, _, err := st.CreateRun(ctx, store.NewRun{TenantID: tenant, Workflow: "steps", Version: "1",
		Digest: digest, Input: json.RawMessage(`{}`), RetentionDays: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CancelRun(ctx, tenant, r.ID); err != nil {
		t.Fatal(err)
	}
}

// newHookEngine is an engine on st that may reach rc, with keys (nil: none).
func newHookEngine(t *testing.T, st store.Store, rc *webhookReceiver, keys *envelope.Keyring, log *slog.Logger) *engine.Engine {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A failed attempt is tried again only after an hour: each check sees its own attempt.
	eng, err := engine.New(engine.Config{Store: st, Runtime: testenv.Runtime(t), AllowPrivateHosts: true, HookPoll: time.Hour, HookBackoff: time.Hour,
		TenantDefaults: store.Limits{AllowedHosts: []string{rc.srv.URL}}, SecretKeys: keys, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// lastDelivery dispatches what is due and returns the tenant's newest request at rc, failing
// unless exactly want more requests arrived.
func lastDelivery(t *testing.T, eng *engine.Engine, rc *webhookReceiver, want int) received {
	t.Helper()
	before := len(rc.received())
	eng.DispatchHooks(context.Background())
	got := rc.received()
	if len(got)-before != want {
		t.Fatalf("%d requests reached the receiver, want %d", len(got)-before, want)
	}
	if want == 0 {
		return received{}
	}
	return got[len(got)-1]
}

// noPlaintext fails if the stored row shows the secret, or its random part, anywhere.
func noPlaintext(t *testing.T, what string, stored, secret []byte) {
	t.Helper()
	random := bytes.TrimPrefix(secret, []byte("whsec_"))
	if len(stored) == 0 || bytes.Contains(stored, secret) || bytes.Contains(stored, random) || bytes.Contains(stored, random[:16]) {
		t.Fatalf("%s: the stored row %q shows the secret %q", what, stored, secret)
	}
	if !bytes.HasPrefix(stored, []byte("\x00wfhost-hook-secret/v1\x00")) {
		t.Fatalf("%s: the stored row %q is not in the sealed format", what, stored)
	}
}

// TestHookSecretsSealedAtRest: in both stores, a signing secret the API makes (a tenant's
// first webhook, a rotation) is sealed at rest and still signs what the API showed; a secret
// from before sealing is sealed at start (or at its first use, when an older daemon wrote it
// after the start) and signs exactly as before, so receivers keep verifying across the
// upgrade; a new primary key rewraps it. Before, hook_secrets held the secret itself.
func TestHookSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, b := range hookSecretsBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			rc := newReceiver(t)
			k1 := newEntry(t, "k1")
			keys := newKeyring(t, k1)
			eng := newHookEngine(t, b.st, rc, keys, nil)

			// A tenant from before sealing: its secret is as the old daemon stored it.
			legacy := newHookedTenant(t, eng, b.st, "legacy", rc)
			oldSecret := engine.NewHookSecret()
			b.putRaw(t, legacy.id, oldSecret)
			legacy.end(t)
			rep, err := engine.SealSecrets(ctx, b.st, keys, nil)
			if err != nil || rep.HookSecretsSealed != 1 || rep.HookSecretsRewrapped != 0 || len(rep.Failed) != 0 {
				t.Fatalf("seal at start: %+v %v", rep, err)
			}
			noPlaintext(t, "a secret from before, after the start", b.raw(t, legacy.id), oldSecret)
			got := lastDelivery(t, eng, rc, 1)
			verifySignature(t, oldSecret, got.header.Get(engine.HeaderSignature), got.body)
			if again, err := engine.SealSecrets(ctx, b.st, keys, nil); err != nil || again.HookSecretsSealed+again.HookSecretsRewrapped+len(again.Failed) != 0 {
				t.Fatalf("a second seal did more: %+v %v", again, err)
			}

			// A tenant's first webhook through the API: the secret is shown once, sealed at rest.
			fresh := newHookedTenant(t, eng, b.st, "fresh", rc)
			_, _, shown, err := eng.PutHook(ctx, fresh.id, engine.HookRequest{ID: "api",
				Hook: abi.Hook{When: []string{"completed"}, Webhook: rc.srv.URL + "/api"}})
			if err != nil || !bytes.HasPrefix(shown, []byte("whsec_")) {
				t.Fatalf("first webhook: secret %q, %v", shown, err)
			}
			noPlaintext(t, "a new secret", b.raw(t, fresh.id), shown)
			fresh.end(t)
			got = lastDelivery(t, eng, rc, 1)
			verifySignature(t, shown, got.header.Get(engine.HeaderSignature), got.body)

			// A rotation: shown once, sealed, and signs from then on.
			rotated, err := eng.RotateHookSecret(ctx, fresh.id)
			if err != nil || bytes.Equal(rotated, shown) {
				t.Fatalf("rotate: %q %v", rotated, err)
			}
			noPlaintext(t, "a rotated secret", b.raw(t, fresh.id), rotated)
			fresh.end(t)
			got = lastDelivery(t, eng, rc, 1)
			verifySignature(t, rotated, got.header.Get(engine.HeaderSignature), got.body)

			// A secret an older daemon wrote after this one started is sealed at its first use.
			late := engine.NewHookSecret()
			b.putRaw(t, legacy.id, late)
			legacy.end(t)
			got = lastDelivery(t, eng, rc, 1)
			verifySignature(t, late, got.header.Get(engine.HeaderSignature), got.body)
			noPlaintext(t, "a secret from before, after its first use", b.raw(t, legacy.id), late)

			// A tenant with no secret (a module's onEnd webhook) gets one made, sealed, at its
			// first delivery; the tenant sees it by rotating.
			module := newHookedTenant(t, eng, b.st, "module", rc)
			module.end(t)
			lastDelivery(t, eng, rc, 1)
			if raw := b.raw(t, module.id); !bytes.HasPrefix(raw, []byte("\x00wfhost-hook-secret/v1\x00")) || bytes.Contains(raw, []byte("whsec_")) {
				t.Fatalf("a secret made at a delivery is stored %q", raw)
			}

			// Key rotation: k2 the primary rewraps every secret; then k2 alone signs the same.
			k2 := newEntry(t, "k2")
			rep, err = engine.SealSecrets(ctx, b.st, newKeyring(t, k2, k1), nil)
			if err != nil || rep.HookSecretsRewrapped != 3 || rep.HookSecretsSealed != 0 || len(rep.Failed) != 0 {
				t.Fatalf("rewrap: %+v %v", rep, err)
			}
			onlyK2 := newHookEngine(t, b.st, rc, newKeyring(t, k2), nil)
			legacy.end(t)
			got = lastDelivery(t, onlyK2, rc, 1)
			verifySignature(t, late, got.header.Get(engine.HeaderSignature), got.body)
			fresh.end(t)
			got = lastDelivery(t, onlyK2, rc, 1)
			verifySignature(t, rotated, got.header.Get(engine.HeaderSignature), got.body)
		})
	}
}

// sealedFrame is a stored signing secret in the sealed format with the given fields, for
// hostile rows.
func sealedFrame(keyID, dataKey, ciphertext []byte) []byte {
	b := []byte("\x00wfhost-hook-secret/v1\x00")
	b = binary.LittleEndian.AppendUint32(b, uint32(len(keyID)))
	b = append(b, keyID...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(dataKey)))
	b = append(b, dataKey...)
	return append(b, ciphertext...)
}

// TestHookSecretUnreadable: a daemon whose keyring cannot open the tenant's signing secret
// (the right key id with the wrong key, a keyring without the key, no keyring at all) or
// that finds a damaged row signs nothing: the start's seal reports the tenant, so the daemon
// refuses to start, and a delivery attempt sends nothing and fails with
// signing_secret_unavailable, the cause in the log and neither in the log nor in the
// delivery any secret. The right keyring then delivers it, signed with the secret shown.
func TestHookSecretUnreadable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, b := range hookSecretsBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			rc := newReceiver(t)
			keys := testenv.SecretKeys(t)
			eng := newHookEngine(t, b.st, rc, keys, nil)
			acme := newHookedTenant(t, eng, b.st, "acme", rc)
			_, _, shown, err := eng.PutHook(ctx, acme.id, engine.HookRequest{ID: "api",
				Hook: abi.Hook{When: []string{"completed"}, Webhook: rc.srv.URL + "/api"}})
			if err != nil || shown == nil {
				t.Fatalf("first webhook: %q %v", shown, err)
			}
			stored := b.raw(t, acme.id)

			unsigned := func(t *testing.T, what string, x *engine.Engine, logs *logBuffer) {
				t.Helper()
				acme.end(t)
				lastDelivery(t, x, rc, 0)
				ds, err := b.st.ListDeliveries(ctx, acme.id, store.DeliveryFilter{Limit: 1})
				if err != nil || len(ds) != 1 || len(ds[0].AttemptLog) != 1 || !strings.HasPrefix(ds[0].LastError, "signing_secret_unavailable") ||
					ds[0].Status != store.DeliveryPending {
					t.Fatalf("%s: the delivery %+v %v, want one pending after a signing_secret_unavailable attempt", what, ds, err)
				}
				if logs != nil {
					text := logs.String()
					if !strings.Contains(text, "signing secret cannot be read") || strings.Contains(text, string(shown)) ||
						strings.Contains(text, string(bytes.TrimPrefix(shown, []byte("whsec_")))) {
						t.Fatalf("%s: the log %s", what, text)
					}
				}
			}

			// The right id, the wrong key.
			wrong := newKeyring(t, strings.Replace(newEntry(t, "x"), "x:", keys.Primary()+":", 1))
			rep, err := engine.SealSecrets(ctx, b.st, wrong, nil)
			if err != nil || len(rep.Failed) != 1 || !strings.Contains(rep.Failed[0], "acme webhook signing secret") ||
				!strings.Contains(rep.Failed[0], envelope.ErrOpen.Error()) {
				t.Fatalf("seal with the wrong key: %+v %v", rep, err)
			}
			if !bytes.Equal(b.raw(t, acme.id), stored) {
				t.Fatal("a failed seal changed the row")
			}
			logs := &logBuffer{}
			unsigned(t, "the wrong key", newHookEngine(t, b.st, rc, wrong, slog.New(slog.NewTextHandler(logs, nil))), logs)

			// A keyring without the key.
			rep, err = engine.SealSecrets(ctx, b.st, newKeyring(t, newEntry(t, "k9")), nil)
			if err != nil || len(rep.Failed) != 1 || !strings.Contains(rep.Failed[0], `key "`+keys.Primary()+`"`) {
				t.Fatalf("seal without the key: %+v %v", rep, err)
			}
			unsigned(t, "a keyring without the key", newHookEngine(t, b.st, rc, newKeyring(t, newEntry(t, "k9")), nil), nil)

			// No keyring: nothing sealed opens, and no new secret is made (503 at the API); a
			// tenant that has a secret still sets webhooks.
			keyless := newHookEngine(t, b.st, rc, nil, nil)
			unsigned(t, "no keyring", keyless, nil)
			if err := b.st.EnsureTenant(ctx, "nokey"); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := keyless.PutHook(ctx, "nokey", engine.HookRequest{ID: "w",
				Hook: abi.Hook{When: []string{"failed"}, Webhook: rc.srv.URL}}); !errors.Is(err, engine.ErrSecretsDisabled) {
				t.Fatalf("a first webhook without a keyring: %v", err)
			}
			if b.raw(t, "nokey") != nil {
				t.Fatal("a secret was stored without a keyring")
			}
			if _, err := keyless.RotateHookSecret(ctx, acme.id); !errors.Is(err, engine.ErrSecretsDisabled) {
				t.Fatalf("a rotation without a keyring: %v", err)
			}
			if _, _, again, err := keyless.PutHook(ctx, acme.id, engine.HookRequest{ID: "api2",
				Hook: abi.Hook{When: []string{"failed"}, Webhook: rc.srv.URL}}); err != nil || again != nil {
				t.Fatalf("a webhook of a tenant with a secret, without a keyring: %q %v", again, err)
			}

			// Damaged or foreign rows: each reported at the seal, signing nothing, no panic.
			if err := b.st.EnsureTenant(ctx, "other"); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.RotateHookSecret(ctx, "other"); err != nil {
				t.Fatal(err)
			}
			prefix := []byte("\x00wfhost-hook-secret/v1\x00")
			for _, c := range []struct {
				name string
				raw  []byte
			}{
				{"empty", []byte{}},
				{"only a NUL", []byte{0}},
				{"a newer version", []byte("\x00wfhost-hook-secret/v2\x00whatever")},
				{"the prefix alone", prefix},
				{"a short length", append(bytes.Clone(prefix), 1, 0)},
				{"a length past the end", binary.LittleEndian.AppendUint32(bytes.Clone(prefix), 0xffffffff)},
				{"no ciphertext", sealedFrame([]byte(keys.Primary()), bytes.Repeat([]byte{1}, 60), nil)},
				{"no key id", sealedFrame(nil, []byte("k"), []byte("c"))},
				{"garbage sealed", sealedFrame([]byte(keys.Primary()), bytes.Repeat([]byte{7}, 60), bytes.Repeat([]byte{9}, 200))},
				{"oversized garbage", sealedFrame([]byte(keys.Primary()), bytes.Repeat([]byte{7}, 60), bytes.Repeat([]byte{9}, 1<<20))},
				{"another tenant's", b.raw(t, "other")},
			} {
				t.Run(c.name, func(t *testing.T) {
					b.putRaw(t, acme.id, c.raw)
					defer b.putRaw(t, acme.id, stored)
					rep, err := engine.SealSecrets(ctx, b.st, keys, nil)
					if err != nil || len(rep.Failed) != 1 || !strings.HasPrefix(rep.Failed[0], "acme webhook signing secret") {
						t.Fatalf("seal: %+v %v", rep, err)
					}
					if !bytes.Equal(b.raw(t, acme.id), c.raw) {
						t.Fatal("a failed seal changed the row")
					}
					unsigned(t, c.name, eng, nil)
				})
			}

			acme.end(t)
			got := lastDelivery(t, eng, rc, 1)
			verifySignature(t, shown, got.header.Get(engine.HeaderSignature), got.body)
		})
	}
}
