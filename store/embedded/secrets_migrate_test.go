package embedded_test

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/store/embedded"
)

// TestSecretsFromBeforeEncryptionSurviveTheMigration: a database at the last migration before
// secrets were encrypted, holding a plaintext secret, migrates to rows that keep the value as
// a row from before (key id "", the value in plaintext) for the engine to seal.
func TestSecretsFromBeforeEncryptionSurviveTheMigration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, embedded.DBFile)+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("migrations/*.sql")
	sort.Strings(files)
	if _, err := db.Exec(`CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if strings.Contains(f, "secret_envelopes") {
			break
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(text)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := db.Exec(`INSERT INTO migrations VALUES (?, ?, 0)`, i+1, filepath.Base(f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO tenants (id, created_at) VALUES ('acme', 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO secrets (tenant_id, name, value, created_at, updated_at) VALUES ('acme', 'stripe', 'sk_live_from_before', 1, 2)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := open(t, dir)
	v, ok, err := s.GetSecret(t.Context(), "acme", "stripe")
	if err != nil || !ok || v.KeyID != "" || !bytes.Equal(v.Plaintext, []byte("sk_live_from_before")) || v.Ciphertext != nil {
		t.Fatalf("the secret from before: %+v %v %v", v, ok, err)
	}
	list, err := s.ListSecrets(t.Context(), "acme")
	if err != nil || len(list) != 1 || list[0].UpdatedAt.UnixMicro() != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
}
