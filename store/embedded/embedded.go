package embedded

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/sqlfiles"
)

//go:embed queries/*.sql
var queryFiles embed.FS

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrLocked: another process (a second daemon) holds the data directory.
var ErrLocked = errors.New("data directory in use")

// DBFile is the database's file name inside the data directory.
const DBFile = "wfhost.db"

// Config says where the store lives.
type Config struct {
	// Dir is the data directory; it is created if missing. Required.
	Dir string
	// Readers caps the connections that serve reads; default max(4, GOMAXPROCS). Writes go
	// through one connection (writer.go).
	Readers int
	// Clock is the store's time: when a run is due, when a lease runs out, every time it
	// writes; default the system's (clock.Real). One process holds the store, so its clock is
	// the only one, and a test can give a clock.Fake to move time instead of sleeping.
	Clock clock.Clock
	// Faults, when set, is asked about every write transaction (what names it, as in its
	// errors): before it is queued (committed false), where an error drops the write, and
	// after it committed (committed true), where an error is returned as if the reply had
	// been lost. It is the crash injection of the deterministic test harness (engine/wftest):
	// every write of the store goes through this one door, so a write added later is covered
	// without the harness knowing its name. Nil in production.
	Faults func(what string, committed bool) error
}

func (c Config) validate() error {
	switch {
	case c.Dir == "":
		return errors.New("no data directory")
	case c.Readers < 1:
		return fmt.Errorf("readers %d must be positive", c.Readers)
	}
	return nil
}

// Store is the SQLite implementation of store.Store. Safe for concurrent use.
type Store struct {
	dir     string
	unlock  func()
	rdb     *sql.DB // readers: query_only connections, concurrent under WAL
	wdb     *sql.DB // the writer's one connection; only the writer goroutine uses it
	queries map[string]string
	w       *writer
	hub     *hub
	clock   clock.Clock
	faults  func(what string, committed bool) error
	close   sync.Once
	// anyHooks is set once the database holds a completion hook: until then the end of a run
	// reads nothing of hooks (hooks.go).
	anyHooks atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open locks dir (a second daemon on the same directory gets ErrLocked), opens or creates the
// database in it and applies the migrations it lacks.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Readers == 0 {
		cfg.Readers = max(4, runtime.GOMAXPROCS(0))
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("open embedded store: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("open embedded store: %w", err)
	}
	unlock, err := lockDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("open embedded store: %w", err)
	}
	s := &Store{dir: cfg.Dir, unlock: unlock, hub: newHub(), clock: cfg.Clock, faults: cfg.Faults}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if err := s.open(ctx, cfg); err != nil {
		s.closeDBs()
		unlock()
		return nil, fmt.Errorf("open embedded store in %s: %w", cfg.Dir, err)
	}
	s.w = newWriter(s)
	return s, nil
}

// dsn builds the connection string. WAL lets readers run beside the writer; synchronous=FULL
// makes every commit durable on disk before it is acknowledged (RATIONALE.md); foreign keys
// carry the sweeper's deletes to journals, events and audit records; temp_store=MEMORY keeps
// each statement's journal in small in-memory chunks instead of a 64 KiB buffer that modernc's
// allocator maps and unmaps for every write statement (a third of a commit's CPU, measured).
func dsn(path string, readOnly bool) string {
	v := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)", "temp_store(MEMORY)"} {
		v.Add("_pragma", p)
	}
	if readOnly {
		v.Add("_pragma", "query_only(1)")
	}
	return "file:" + path + "?" + v.Encode()
}

func (s *Store) open(ctx context.Context, cfg Config) error {
	path := filepath.Join(cfg.Dir, DBFile)
	var err error
	if s.wdb, err = sql.Open("sqlite", dsn(path, false)); err != nil {
		return err
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if s.rdb, err = sql.Open("sqlite", dsn(path, true)); err != nil {
		return err
	}
	s.rdb.SetMaxOpenConns(cfg.Readers)
	s.rdb.SetMaxIdleConns(cfg.Readers)
	if s.queries, err = sqlfiles.Queries(queryFiles, "queries"); err != nil {
		return err
	}
	var anyHooks bool
	if err := s.wdb.QueryRowContext(ctx, s.q("any_hooks")).Scan(&anyHooks); err != nil {
		return err
	}
	s.anyHooks.Store(anyHooks)
	return nil
}

// q returns the named query's text; a missing name is a programming error caught by every test.
func (s *Store) q(name string) string {
	sql, ok := s.queries[name]
	if !ok {
		panic("embedded store: no query " + name)
	}
	return sql
}

// migrate applies every migration not yet applied, each in its own transaction with its
// record. It runs at Open, under the directory lock, so no other migrator can be running.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := sqlfiles.Migrations(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := s.wdb.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var applied int
	if err := s.wdb.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("migrate: read applied version: %w", err)
	}
	if applied > len(ms) {
		return fmt.Errorf("migrate: the database is at version %d, newer than this binary's %d; use a newer wfhost", applied, len(ms))
	}
	for _, m := range ms[applied:] {
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, micros(s.now())); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate: record %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
	}
	return nil
}

// Migrate exists for symmetry with store/postgres: Open has already applied every migration.
func (s *Store) Migrate(context.Context) error { return nil }

// MigrationsCurrent reports whether every migration this binary knows is applied; always so
// once Open succeeded, since Open applies them under the directory lock.
func (s *Store) MigrationsCurrent(ctx context.Context) (_ bool, err error) {
	defer classify(&err)
	ms, err := sqlfiles.Migrations(migrationFiles, "migrations")
	if err != nil {
		return false, err
	}
	var applied int
	if err := s.rdb.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM migrations`).Scan(&applied); err != nil {
		return false, fmt.Errorf("migrations current: %w", err)
	}
	return applied >= len(ms), nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.PingContext(ctx) }

// Dir is the data directory the store lives in.
func (s *Store) Dir() string { return s.dir }

// Close stops the writer (queued writes fail), ends every Listen, closes the database and
// releases the directory lock. Closing twice is harmless.
func (s *Store) Close() {
	s.close.Do(func() {
		s.w.close()
		s.hub.close()
		s.closeDBs()
		s.unlock()
	})
}

func (s *Store) closeDBs() {
	if s.rdb != nil {
		_ = s.rdb.Close()
	}
	if s.wdb != nil {
		_ = s.wdb.Close()
	}
}
