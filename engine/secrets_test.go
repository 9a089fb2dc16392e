package engine_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// secretsBackend is a store with a way around it: raw SQL on its secrets table, to see what is
// at rest and to write a row as a version before encryption did.
type secretsBackend struct {
	name string
	st   store.Store
	// dump is every byte of the secrets table, as text.
	dump func(t *testing.T) string
	// putPlain writes a row as it was before values were encrypted.
	putPlain func(t *testing.T, tenant, name, value string)
}

// rawStores are both stores on fresh storage, each with a way around it: a connection to the
// Postgres schema (bytea shown in escape format, printable bytes as text) and the embedded
// store's SQLite file.
type rawStores struct {
	pg     *postgres.Store
	pgConn *pgx.Conn
	emb    *embedded.Store
	sqlite *sql.DB
}

func openRawStores(t *testing.T, schemaPrefix string) rawStores {
	t.Helper()
	ctx := context.Background()
	schema := testenv.Schema(t, schemaPrefix)
	pg, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: schema, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	if err := pg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, "SET bytea_output = 'escape'; SET search_path TO "+pgx.Identifier{schema}.Sanitize(), pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	emb, err := embedded.Open(ctx, embedded.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	sqlite, err := sql.Open("sqlite", "file:"+filepath.Join(dir, embedded.DBFile)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlite.Close() })
	return rawStores{pg: pg, pgConn: conn, emb: emb, sqlite: sqlite}
}

func secretsBackends(t *testing.T) []secretsBackend {
	ctx := context.Background()
	raw := openRawStores(t, "wfhost_secrets")
	pg, emb, sqlite := raw.pg, raw.emb, raw.sqlite
	pgExec := func(t *testing.T, query string, args ...any) pgx.Rows {
		rows, err := raw.pgConn.Query(ctx, query, args...)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	return []secretsBackend{
		{"postgres", pg,
			func(t *testing.T) string {
				rows := pgExec(t, "SELECT s::text FROM secrets s ORDER BY tenant_id, name")
				var b strings.Builder
				for rows.Next() {
					var row string
					if err := rows.Scan(&row); err != nil {
						t.Fatal(err)
					}
					b.WriteString(row + "\n")
				}
				return b.String()
			},
			func(t *testing.T, tenant, name, value string) {
				pgExec(t, "INSERT INTO secrets (tenant_id, name, plaintext) VALUES ($1, $2, $3)", tenant, name, []byte(value)).Close()
			}},
		{"embedded", emb,
			func(t *testing.T) string {
				rows, err := sqlite.Query(`SELECT tenant_id, name, key_id, data_key, ciphertext, plaintext FROM secrets ORDER BY tenant_id, name`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var b strings.Builder
				for rows.Next() {
					var cols [6][]byte
					if err := rows.Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5]); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&b, "%s\n", bytes.Join(cols[:], []byte(" | ")))
				}
				return b.String()
			},
			func(t *testing.T, tenant, name, value string) {
				if _, err := sqlite.Exec(`INSERT INTO secrets (tenant_id, name, plaintext, created_at, updated_at) VALUES (?, ?, ?, 1, 1)`, tenant, name, []byte(value)); err != nil {
					t.Fatal(err)
				}
			}},
	}
}

func newKeyring(t *testing.T, entries ...string) *envelope.Keyring {
	t.Helper()
	k, err := envelope.Parse(strings.Join(entries, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newEntry(t *testing.T, id string) string {
	t.Helper()
	e, err := envelope.NewEntry(id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSecretsAreEncryptedAtRest: what the API writes is ciphertext in both stores; rows from
// before encryption are sealed at start; a new primary key rewraps every data key, after which
// the old key can go; a value under a key the keyring lacks is reported, not lost. Before,
// values were stored as they came.
func TestSecretsAreEncryptedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, b := range secretsBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			k1 := newEntry(t, "k1")
			keys := newKeyring(t, k1)
			eng, err := engine.New(engine.Config{Store: b.st, Runtime: testenv.Runtime(t), SecretKeys: keys})
			if err != nil {
				t.Fatal(err)
			}
			for _, tenant := range []string{"acme", "globex"} {
				if err := b.st.EnsureTenant(ctx, tenant); err != nil {
					t.Fatal(err)
				}
			}
			const fresh, old = "sk_live_written_through_the_api", "sk_live_written_before_encryption"
			if _, err := eng.PutSecret(ctx, "acme", "stripe", []byte(fresh)); err != nil {
				t.Fatal(err)
			}
			b.putPlain(t, "globex", "legacy", old)
			if dump := b.dump(t); strings.Contains(dump, fresh) || !strings.Contains(dump, old) {
				t.Fatalf("before the seal: %s", dump)
			}

			rep, err := engine.SealSecrets(ctx, b.st, keys, nil)
			if err != nil || rep.Sealed != 1 || rep.Rewrapped != 0 || len(rep.Failed) != 0 {
				t.Fatalf("seal: %+v %v", rep, err)
			}
			if dump := b.dump(t); strings.Contains(dump, fresh) || strings.Contains(dump, old) {
				t.Fatalf("plaintext at rest after the seal: %s", dump)
			}
			again, err := engine.SealSecrets(ctx, b.st, keys, nil)
			if err != nil || again.Sealed+again.Rewrapped != 0 {
				t.Fatalf("a second seal did more: %+v %v", again, err)
			}
			before, _, _ := b.st.GetSecret(ctx, "globex", "legacy")

			// Rotation: k2 becomes the primary, k1 stays as an older key until the rewrap.
			k2 := newEntry(t, "k2")
			rotated := newKeyring(t, k2, k1)
			rep, err = engine.SealSecrets(ctx, b.st, rotated, nil)
			if err != nil || rep.Sealed != 0 || rep.Rewrapped != 2 || len(rep.Failed) != 0 {
				t.Fatalf("rewrap: %+v %v", rep, err)
			}
			after, _, _ := b.st.GetSecret(ctx, "globex", "legacy")
			if after.KeyID != "k2" || !bytes.Equal(after.Ciphertext, before.Ciphertext) {
				t.Fatalf("a rewrap re-encrypted the value or left its key: %+v, was %+v", after, before)
			}
			// The old key can go: k2 alone opens every value; k1 alone no longer does.
			onlyK2 := newKeyring(t, k2)
			for _, c := range []struct{ tenant, name, want string }{{"acme", "stripe", fresh}, {"globex", "legacy", old}} {
				v, _, _ := b.st.GetSecret(ctx, c.tenant, c.name)
				if got, err := engine.OpenSecret(onlyK2, c.tenant, c.name, v); err != nil || string(got) != c.want {
					t.Fatalf("%s/%s with the new key alone: %q %v", c.tenant, c.name, got, err)
				}
				if _, err := engine.OpenSecret(newKeyring(t, k1), c.tenant, c.name, v); !errors.Is(err, envelope.ErrUnknownKey) {
					t.Fatalf("%s/%s with the old key alone: %v", c.tenant, c.name, err)
				}
				// Bound to its row: the value does not open as another tenant's.
				if _, err := engine.OpenSecret(onlyK2, "other", c.name, v); !errors.Is(err, envelope.ErrOpen) {
					t.Fatalf("%s/%s opened as another tenant's: %v", c.tenant, c.name, err)
				}
			}
			// A keyring without the values' key reports them and changes nothing.
			stray := newKeyring(t, newEntry(t, "k3"))
			rep, err = engine.SealSecrets(ctx, b.st, stray, nil)
			if err != nil || len(rep.Failed) != 2 || !strings.Contains(strings.Join(rep.Failed, ";"), `key "k2"`) {
				t.Fatalf("a keyring without the key: %+v %v", rep, err)
			}
			if still, _, _ := b.st.GetSecret(ctx, "globex", "legacy"); still.KeyID != "k2" {
				t.Fatalf("a failed rewrap changed the value: %+v", still)
			}
		})
	}
}

// TestSecretValueBounds: values shorter than abi.MinSecretBytes, or part of the redaction
// marker, are refused; without a key every value is.
func TestSecretValueBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := setup(t, harnessOptions{noStart: true})
	keyless := h.engine
	withKeys, err := engine.New(engine.Config{Store: h.store, Runtime: testenv.Runtime(t), SecretKeys: testenv.SecretKeys(t)})
	if err != nil {
		t.Fatal(err)
	}
	for value, want := range map[string]error{
		"a":                        engine.ErrInvalid,
		"1234567":                  engine.ErrInvalid,
		"[redacted]":               engine.ErrInvalid,
		"redacted":                 engine.ErrInvalid,
		`"[redacted]"`:             engine.ErrInvalid,
		strings.Repeat("v", 65537): engine.ErrTooLarge,
		"12345678":                 nil,
	} {
		_, err := withKeys.PutSecret(ctx, store.DefaultTenant, "s", []byte(value))
		if !errors.Is(err, want) || (want == engine.ErrInvalid && !strings.Contains(err.Error(), "secret s")) {
			t.Errorf("a value of %d bytes: %v, want %v", len(value), err, want)
		}
	}
	if _, err := keyless.PutSecret(ctx, store.DefaultTenant, "s", []byte("a long enough value")); !errors.Is(err, engine.ErrSecretsDisabled) ||
		!strings.Contains(err.Error(), "--secrets-key-file") {
		t.Fatalf("without a key: %v", err)
	}
}

// TestShortSecretsFromBeforeReadAsMissing: a value stored before the minimum existed is not
// handed to a step (it could not be redacted): secret_get answers secret_not_found, and the
// daemon's log says why. A longer one from before is read as it is, without a key.
func TestShortSecretsFromBeforeReadAsMissing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := setup(t, harnessOptions{})
	h.deploy("probe.wasm", false)
	conn, err := pgx.Connect(ctx, testenv.DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{h.schema}.Sanitize()+
		"; INSERT INTO secrets (tenant_id, name, plaintext) VALUES ('default', 'short', 'abc'), ('default', 'long', 'sk_live_from_before')",
		pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	short := h.await(h.start("probe", map[string]any{"secret": "short", "where": "step-output", "enc": "u"}).ID, 30*time.Second)
	if short.Status != store.StatusFailed || short.Error == nil || !strings.Contains(short.Error.Message, "secret_not_found") {
		t.Fatalf("a short secret from before: %s %+v", short.Status, short.Error)
	}
	if !strings.Contains(h.logs.String(), "shorter than the minimum") {
		t.Fatalf("the log does not say why:\n%s", h.logs.tail(3000))
	}
	long := h.await(h.start("probe", map[string]any{"secret": "long", "where": "step-output", "enc": "u"}).ID, 30*time.Second)
	if long.Status != store.StatusCompleted {
		t.Fatalf("a secret from before, read without a key: %s %+v", long.Status, long.Error)
	}
	if steps := h.journalString(long.ID); strings.Contains(steps, "sk_live_from_before") || !strings.Contains(steps, "[redacted]") {
		t.Fatalf("journal: %s", steps)
	}
}
