package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/sqlfiles"
)

//go:embed queries/*.sql
var queryFiles embed.FS

// Config says where the store lives.
type Config struct {
	// URL is a Postgres connection string.
	URL string
	// Schema holds every table; default "wfhost". Tests use a schema each.
	Schema string
	// MaxConns caps the pool; default 20.
	MaxConns int
	// Tracer, when set, sees every query and batch (benchmarks count transactions with it).
	Tracer pgx.QueryTracer
}

// validate reports a config no store can be opened with. An empty URL is refused rather than
// left to pgx, which would fill it in from PG* environment variables.
func (c Config) validate() error {
	switch {
	case c.URL == "":
		return errors.New("no database URL")
	case !identifier.MatchString(c.Schema):
		// The schema also names the notice channels, hence the length bound.
		return fmt.Errorf("schema %q must be a lowercase identifier of at most 48 characters", c.Schema)
	case c.MaxConns < 1:
		return fmt.Errorf("max connections %d must be positive", c.MaxConns)
	}
	return nil
}

// Store is the Postgres implementation of store.Store. Safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	// indexed runs the statements whose plans must stay index-driven at any size of the
	// tables, whatever their statistics say (indexedPool).
	indexed *pgxpool.Pool
	schema  string
	queries map[string]string
	// Notice channels carry the schema's name, so stores on other schemas of the same
	// database (parallel tests) do not wake each other.
	wakeChannel   string
	cancelChannel string
	// appName is this store's connections' application_name: the payload of its wake notices.
	appName string
	// commits groups the fenced writes of concurrent activations (groupcommit.go).
	commits *groupCommitter
	// closed makes Close happen once, however often and from wherever it is called.
	closed sync.Once
}

var _ store.Store = (*Store)(nil)

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,47}$`)

// Open connects to Postgres. Every connection resolves unqualified names in cfg.Schema, which
// Migrate creates.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	return open(ctx, cfg, nil)
}

// open is Open with a hook that adjusts the pool's settings; tests count round trips with it.
func open(ctx context.Context, cfg Config, adjust func(*pgxpool.Config)) (*Store, error) {
	cfg.Schema = cmp.Or(cfg.Schema, "wfhost")
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 20
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	pcfg.MaxConns = int32(cfg.MaxConns)
	if cfg.Tracer != nil {
		pcfg.ConnConfig.Tracer = cfg.Tracer
	}
	pcfg.ConnConfig.RuntimeParams["search_path"] = cfg.Schema
	// Every query here is a short, indexed OLTP statement; JIT compiling one whose estimate
	// crosses jit_above_cost (a plan branch that never runs is enough) costs 100+ ms.
	pcfg.ConnConfig.RuntimeParams["jit"] = "off"
	// The statements whose rows a claim, a resume, a heartbeat or a signal reads run on a
	// second pool, planned with sequential scans priced out (see indexedPool).
	// Wake notices carry the sender's application_name, so a host can tell the notices its own
	// writes caused (it has already woken itself) from other hosts'.
	var origin [6]byte
	_, _ = rand.Read(origin[:])
	appName := "wfhost/" + hex.EncodeToString(origin[:])
	pcfg.ConnConfig.RuntimeParams["application_name"] = appName
	if adjust != nil {
		adjust(pcfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	indexed, err := indexedPool(ctx, pcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	queries, err := sqlfiles.Queries(queryFiles, "queries")
	if err != nil {
		pool.Close()
		indexed.Close()
		return nil, err
	}
	s := &Store{
		pool:          pool,
		indexed:       indexed,
		schema:        cfg.Schema,
		queries:       queries,
		wakeChannel:   cfg.Schema + "_wake",
		cancelChannel: cfg.Schema + "_cancel",
		appName:       appName,
	}
	s.commits = newGroupCommitter(s)
	return s, nil
}

// q returns the named query; a missing name is a programming error caught by every test.
func (s *Store) q(name string) string {
	sql, ok := s.queries[name]
	if !ok {
		panic("postgres store: no query " + name)
	}
	return sql
}

// indexedPool is a second pool on pcfg's settings whose sessions price sequential scans and
// bitmap scans out (enable_seqscan, enable_bitmapscan = off). It runs the claim and the journal loads, the next wake-up, the lease
// heartbeat, the resume and the signal: statements that find their rows by an index. pgx
// prepares each statement, and a connection keeps the generic plan Postgres made for it while
// the tables were small (a few pages, where reading them whole is cheapest) until an ANALYZE
// or a vacuum invalidates it, which may never come: the journal load and the claim kept
// sequential scans of steps and runs that way (issue 13; plans_test.go checks them). It is not
// the setting of every statement: with it on the group commit's and the broadcast's
// statements too, their plans took run rows in another order, and the lease heartbeat
// deadlocked with them (TestNoDeadlocksUnderLoad failed one run in three; the heartbeat on
// this pool and they on the other, eight of eight passed). Bitmap scans are priced out for the
// journal reads with a window or a page (ClaimParams.JournalWindow, JournalPage): a bitmap
// scan reads every entry of the range, then sorts them and keeps the first few, so a page of a
// run's journal would read all of the rest of it. The planner chose one for JournalPage of a
// run of four entries (its estimate, from statistics of runs of four entries, is what every
// run gets, whatever its length); an index scan in order stops after the page. The only other
// bitmap scan this pool's statements had, of runs_held for a tenant's held runs in the claim
// and the next wake-up, is an index scan of the same entries without it.
func indexedPool(ctx context.Context, pcfg *pgxpool.Config) (*pgxpool.Pool, error) {
	cfg := pcfg.Copy()
	cfg.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
	cfg.ConnConfig.RuntimeParams["enable_bitmapscan"] = "off"
	cfg.MaxConns = max(4, pcfg.MaxConns/2)
	return pgxpool.NewWithConfig(ctx, cfg)
}

// indexedStatements are the statements run on the indexed pool, by query file (a batch by its
// main statement, with the rest of it: lock_run with signal, load_journal_tail with
// resume_run). on reads it at every call site, and plans_test.go plans each statement on the
// pool it runs on, so this is the one list.
var indexedStatements = map[string]bool{
	"claim_runs": true, "load_journals": true, "next_wakeup": true, "extend_leases": true,
	"resume_run": true, "load_journal_tail": true, "lock_run": true, "signal": true,
	"journal_page": true,
}

// on is the pool the statement query (a query file's name) runs on.
func (s *Store) on(query string) *pgxpool.Pool {
	if indexedStatements[query] {
		return s.indexed
	}
	return s.pool
}

// Close stops the group committers, then closes the pools. Closing again, or from several
// goroutines at once, is safe: later calls return once the first has closed the store.
func (s *Store) Close() {
	s.closed.Do(func() {
		s.commits.close()
		s.pool.Close()
		s.indexed.Close()
	})
}

// Ping checks that Postgres answers and takes writes. A standby answers reads and refuses every
// write; a connection string without target_session_attrs=read-write lands on one after a
// failover, and a daemon there must not call itself ready.
func (s *Store) Ping(ctx context.Context) (err error) {
	defer classify(&err)
	var standby bool
	if err := s.pool.QueryRow(ctx, s.q("in_recovery")).Scan(&standby); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	if standby {
		return fmt.Errorf("ping: %w: the database is a read-only standby", store.ErrUnavailable)
	}
	return nil
}

// Schema is the schema the store's tables live in.
func (s *Store) Schema() string { return s.schema }

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// notFound maps "no row" and malformed ids to store.ErrNotFound: a run id that is not a UUID
// names no run, and saying so is not a server error.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "22P02" { // invalid_text_representation
		return store.ErrNotFound
	}
	return err
}

// validUUID avoids a round trip (and a confusing error) for ids that cannot exist.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func validUUID(id string) bool { return uuidPattern.MatchString(id) }
