package postgres_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestSecretsFromBeforeEncryptionSurviveTheMigration: a schema at the last migration before
// secrets were encrypted, holding a plaintext secret, migrates to rows that keep the value as
// a row from before (key id "", the value in plaintext) for the engine to seal.
func TestSecretsFromBeforeEncryptionSurviveTheMigration(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	files, _ := filepath.Glob("migrations/*.sql")
	sort.Strings(files)
	before := 0
	for i, f := range files {
		if strings.Contains(f, "secret_envelopes") {
			before = i
		}
	}
	quoted := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+quoted+"; SET search_path TO "+quoted+
		"; CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
		pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	for i, f := range files[:before] {
		sql, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(sql), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := conn.Exec(ctx, "INSERT INTO migrations (version, name) VALUES ($1, $2)", i+1, filepath.Base(f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, "INSERT INTO tenants (id) VALUES ('acme'); INSERT INTO secrets (tenant_id, name, value) VALUES ('acme', 'stripe', 'sk_live_from_before')",
		pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}

	s := open(t, schema)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	wantVersions(t, schema)
	v, ok, err := s.GetSecret(ctx, "acme", "stripe")
	if err != nil || !ok || v.KeyID != "" || !bytes.Equal(v.Plaintext, []byte("sk_live_from_before")) || v.Ciphertext != nil {
		t.Fatalf("the secret from before: %+v %v %v", v, ok, err)
	}
	stale, err := s.SecretsNotUnder(ctx, "acme", "k1")
	if err != nil || len(stale) != 1 || stale[0].Name != "stripe" {
		t.Fatalf("to seal: %+v %v", stale, err)
	}
}
