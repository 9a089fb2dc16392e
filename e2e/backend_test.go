package e2e_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // reads the embedded store's file, as the Postgres backend reads its schema

	"github.com/wfhost/wfhost/store/embedded"
)

// backend is a store the test daemons run on, and the test's own view of what it holds: every
// check reads the database straight, not through the daemon under test.
type backend interface {
	// daemonArgs are the flags that point a daemon at the store; dataDir is the daemon's
	// --data-dir (the embedded store lives there, so every daemon of a test shares it).
	daemonArgs(t *testing.T) (args []string, dataDir string)
	// shared says whether several daemons may run on the store at once.
	shared() bool
	liveRuns(t *testing.T) int
	// leasedRuns counts live runs held by an unexpired lease.
	leasedRuns(t *testing.T) int
	runResult(t *testing.T, id string) (status string, output []byte)
	// journal returns the run's steps as (seq, key, kind, status), by seq.
	journal(t *testing.T, id string) []journalRow
}

type journalRow struct {
	seq              int
	key, kind, state string
}

// eachStore runs test once per store: Postgres on a fresh schema, and the embedded store in a
// fresh data directory.
func eachStore(t *testing.T, test func(t *testing.T, b backend)) {
	t.Run("postgres", func(t *testing.T) { test(t, newPostgresBackend(t)) })
	t.Run("embedded", func(t *testing.T) { test(t, newEmbeddedBackend(t)) })
}

type postgresBackend struct {
	schema string
	conn   *pgx.Conn
}

func newPostgresBackend(t *testing.T) *postgresBackend {
	schema := freshSchema(t)
	conn, err := pgx.Connect(context.Background(), databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &postgresBackend{schema: schema, conn: conn}
}

func (b *postgresBackend) daemonArgs(t *testing.T) ([]string, string) {
	return []string{"--database-url", databaseURL(), "--schema", b.schema}, t.TempDir()
}

func (b *postgresBackend) shared() bool { return true }

func (b *postgresBackend) table(name string) string { return pgx.Identifier{b.schema, name}.Sanitize() }

func (b *postgresBackend) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	if err := b.conn.QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (b *postgresBackend) liveRuns(t *testing.T) int {
	return b.count(t, "SELECT count(*) FROM "+b.table("runs")+" WHERE status IN ('pending','running')")
}

// endedBy maps each run that ended to the hosts its lifecycle log's "ended" events name
// (one per event: a run that ended twice would show two).
func (b *postgresBackend) endedBy(t *testing.T) map[string][]string {
	t.Helper()
	rows, err := b.conn.Query(context.Background(), "SELECT run_id::text, host FROM "+b.table("run_log")+" WHERE kind = 'ended' ORDER BY run_id, seq")
	if err != nil {
		t.Fatalf("run log: %v", err)
	}
	out := map[string][]string{}
	for rows.Next() {
		var id, host string
		if err := rows.Scan(&id, &host); err != nil {
			t.Fatalf("run log: %v", err)
		}
		out[id] = append(out[id], host)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("run log: %v", err)
	}
	return out
}

func (b *postgresBackend) leasedRuns(t *testing.T) int {
	return b.count(t, "SELECT count(*) FROM "+b.table("runs")+" WHERE lease_expires_at > now() AND status IN ('pending','running')")
}

func (b *postgresBackend) runResult(t *testing.T, id string) (string, []byte) {
	t.Helper()
	var (
		status string
		output []byte
	)
	err := b.conn.QueryRow(context.Background(), "SELECT status, coalesce(output::text,'') FROM "+b.table("runs")+" WHERE id = $1", id).Scan(&status, &output)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return status, output
}

func (b *postgresBackend) journal(t *testing.T, id string) []journalRow {
	t.Helper()
	rows, err := b.conn.Query(context.Background(), "SELECT seq, key, kind, status FROM "+b.table("steps")+" WHERE run_id = $1 ORDER BY seq", id)
	if err != nil {
		t.Fatalf("steps of %s: %v", id, err)
	}
	defer rows.Close()
	return scanJournal(t, rows)
}

type embeddedBackend struct {
	dir string
	db  *sql.DB
}

func newEmbeddedBackend(t *testing.T) *embeddedBackend {
	dir := t.TempDir()
	// Query-only reads beside the daemon: WAL lets a reader in another process see every
	// commit. The daemon's directory lock is a separate file, so reading does not take it.
	v := url.Values{}
	v.Add("_pragma", "busy_timeout(10000)")
	v.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, embedded.DBFile)+"?"+v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &embeddedBackend{dir: dir, db: db}
}

func (b *embeddedBackend) daemonArgs(*testing.T) ([]string, string) { return nil, b.dir }

func (b *embeddedBackend) shared() bool { return false }

func (b *embeddedBackend) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := b.db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (b *embeddedBackend) liveRuns(t *testing.T) int {
	return b.count(t, "SELECT count(*) FROM runs WHERE status IN ('pending','running')")
}

func (b *embeddedBackend) leasedRuns(t *testing.T) int {
	// The embedded store keeps times as Unix microseconds.
	return b.count(t, "SELECT count(*) FROM runs WHERE lease_expires_at > ? AND status IN ('pending','running')", time.Now().UnixMicro())
}

func (b *embeddedBackend) runResult(t *testing.T, id string) (string, []byte) {
	t.Helper()
	var (
		status string
		output []byte
	)
	if err := b.db.QueryRow("SELECT status, coalesce(output,'') FROM runs WHERE id = ?", id).Scan(&status, &output); err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return status, output
}

func (b *embeddedBackend) journal(t *testing.T, id string) []journalRow {
	t.Helper()
	rows, err := b.db.Query("SELECT seq, key, kind, status FROM steps WHERE run_id = ? ORDER BY seq", id)
	if err != nil {
		t.Fatalf("steps of %s: %v", id, err)
	}
	defer rows.Close()
	return scanJournal(t, rows)
}

// rows is what scanJournal needs of a result set: pgx's and database/sql's both have it.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanJournal reads (seq, key, kind, status) rows into journal rows.
func scanJournal(t *testing.T, rs rows) []journalRow {
	t.Helper()
	var out []journalRow
	for rs.Next() {
		var r journalRow
		if err := rs.Scan(&r.seq, &r.key, &r.kind, &r.state); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
