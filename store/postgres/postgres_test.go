package postgres_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
	"github.com/wfhost/wfhost/store/storetest"
)

func databaseURL() string {
	return cmp.Or(os.Getenv("TEST_DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/test")
}

// testMaxConns caps each test store's pool: enough for the suite's concurrent claimers, small
// enough that parallel tests stay far below Postgres's max_connections.
const testMaxConns = 8

// newSchema returns a fresh schema name and drops the schema when the test ends.
func newSchema(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "wfhost_test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		conn, err := pgx.Connect(ctx, databaseURL())
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return schema
}

// open opens a store on schema, closed when the test ends (before the schema is dropped).
func open(t testing.TB, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), postgres.Config{URL: databaseURL(), Schema: schema, MaxConns: testMaxConns})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// setup gives the test a migrated store on a schema of its own.
func setup(t *testing.T) *postgres.Store {
	t.Helper()
	s := open(t, newSchema(t))
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, func(t *testing.T) store.Store { return setup(t) })
}

// Two stores on one schema are two hosts: their starts and claims of one concurrency key
// never run more of its runs at once than its limit.
func TestFlowKeyAcrossHosts(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	a := open(t, schema)
	if err := a.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	storetest.FlowSharedKey(t, a, open(t, schema))
}
