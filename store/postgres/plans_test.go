package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The plan checks of issue 13: the queries the engine runs per claim and per activation must
// cost what their batch costs, not what the tables hold, whatever the planner's statistics say.
// TestPlansStaleStatistics asserts it on a schema of its own; TestPlansAt1M prints the plans of
// a database built by testdata/plans/scale1m.sh.

//go:embed testdata/plans/fill.sql
var fillSQL string

// planFixture names rows of the filled data that the queries' arguments point at.
type planFixture struct {
	tenant   string
	waiting  string   // a run waiting for "verify", with its wait at step-2
	held     string   // a run leased by plan-host with epoch 2 and four steps
	heldIDs  []string // held runs of the tenant, up to 64 (extend_leases's batch)
	journals []string // 32 runs a claim would load the journals of
}

// planCase is one statement as the engine sends it. Statements that lock a row first (lock_run
// before signal, fence_lock before the wait statements) are the before list, run in the same
// transaction first.
type planCase struct {
	name, query string
	before      []string
	args        func(f planFixture) []any
	// window marks a journal read limited to a window: its plan must stop reading steps
	// after the window, a Limit right above the ordered index range.
	window bool
}

var leaseMs = int64(60_000)

// journalWindow is the window of the windowed journal reads: the fill's long journals
// (testdata/plans/fill.sql) have more entries than it after their snapshots.
const journalWindow = 8

func planCases() []planCase {
	now := time.Now().UTC()
	later := now.Add(time.Hour)
	step := func(seq int, key, kind, status string, wake *time.Time, event string) []any {
		return []any{seq, key, kind, status, `{"ok":true}`, nil, 1, wake, event, nil, nil, now, now}
	}
	return []planCase{
		{name: "claim_runs", query: "claim_runs", args: func(planFixture) []any { return []any{32, "plan-claimer", leaseMs, 0} }},
		{name: "claim_runs (tenant cap 100)", query: "claim_runs", args: func(planFixture) []any { return []any{32, "plan-claimer", leaseMs, 100} }},
		{name: "next_wakeup", query: "next_wakeup", args: func(planFixture) []any { return nil }},
		{name: "load_journals (32 runs, half with snapshots)", query: "load_journals", args: func(f planFixture) []any { return []any{f.journals, nil} }},
		{name: "load_journals (32 runs, half with snapshots, window 8)", query: "load_journals", window: true,
			args: func(f planFixture) []any { return []any{f.journals, journalWindow + 1} }},
		{name: "load_journal_tail (a resume)", query: "load_journal_tail", args: func(f planFixture) []any { return []any{f.journals[0], 1, nil} }},
		{name: "load_journal_tail (a resume, window 8)", query: "load_journal_tail", window: true,
			args: func(f planFixture) []any { return []any{f.journals[0], 1, journalWindow + 1} }},
		{name: "journal_page", query: "journal_page", window: true, args: func(f planFixture) []any { return []any{f.held, 2, 1, journalWindow + 1} }},
		{name: "save_snapshot", query: "save_snapshot", args: func(f planFixture) []any {
			return append([]any{f.held, 2, leaseMs, 4, "step-3", "code", "data", false}, make([]any, 13)...)
		}},
		{name: "save_snapshot (with a held step)", query: "save_snapshot", args: func(f planFixture) []any {
			return append([]any{f.held, 2, leaseMs, 5, "step-4", "code", "data", true}, step(4, "step-4", "run", "completed", nil, "")...)
		}},
		{name: "commit_step", query: "commit_step", args: func(f planFixture) []any {
			return append([]any{f.held, 2, leaseMs}, step(4, "step-4", "run", "completed", nil, "")...)
		}},
		{name: "suspend_step (a sleep)", query: "suspend_step", args: func(f planFixture) []any {
			return append([]any{f.held, 2, later}, step(4, "step-4", "sleep", "sleeping", &later, "")...)
		}},
		{name: "suspend", query: "suspend", args: func(f planFixture) []any { return []any{f.held, 2, later} }},
		{name: "extend_leases", query: "extend_leases", args: func(f planFixture) []any {
			epochs := make([]int64, len(f.heldIDs))
			for i := range epochs {
				epochs[i] = 2
			}
			return []any{f.heldIDs, epochs, leaseMs}
		}},
		{name: "reach_wait (after lock_wait_event, fence_lock)", query: "reach_wait", before: []string{"lock_wait_event", "fence_lock"},
			args: func(f planFixture) []any {
				return []any{f.held, 2, leaseMs, 4, "step-4", "verify", nil, nil, now, 1}
			}},
		{name: "park_wait (after fence_lock)", query: "park_wait", before: []string{"fence_lock"}, args: func(f planFixture) []any {
			return []any{f.waiting, 2, leaseMs, nil, "step-2"}
		}},
		{name: "signal (after lock_run)", query: "signal", before: []string{"lock_run"}, args: func(f planFixture) []any {
			return []any{f.tenant, f.waiting, "verify", `{"ok":true}`, 100, "plan_wake", nil}
		}},
		{name: "signal with a signal id (after lock_run)", query: "signal", before: []string{"lock_run"}, args: func(f planFixture) []any {
			return []any{f.tenant, f.waiting, "verify", `{"ok":true}`, 100, "plan_wake", "sig-1"}
		}},
	}
}

// beforeArgs are the arguments of a locking statement run before a case's query.
func beforeArgs(name string, f planFixture, c planCase, schema string) []any {
	a := c.args(f)
	switch name {
	case "lock_run":
		return []any{a[0], a[1]}
	case "lock_wait_event":
		return []any{a[0], a[5], schema}
	case "fence_lock":
		return []any{a[0], a[1]}
	}
	panic("no arguments for " + name)
}

// literal writes v as a SQL literal for EXECUTE; untyped where it can be, so the prepared
// statement's inferred parameter type decides.
func literal(v any) string {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return quote(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		return quote(v.Format(time.RFC3339Nano))
	case *time.Time:
		if v == nil {
			return "NULL"
		}
		return literal(*v)
	case []string:
		return quote("{" + strings.Join(v, ",") + "}")
	case []int64:
		s := make([]string, len(v))
		for i, n := range v {
			s[i] = strconv.FormatInt(n, 10)
		}
		return quote("{" + strings.Join(s, ",") + "}")
	}
	panic(fmt.Sprintf("no literal for %T", v))
}

// explain prepares the case's query (parameter types inferred) under plan_cache_mode mode and
// returns EXPLAIN's output for an execution with f's arguments.
func explain(ctx context.Context, conn *pgxpool.Conn, s *Store, f planFixture, c planCase, mode, options string) (string, error) {
	if _, err := conn.Exec(ctx, "PREPARE plan_q AS "+s.q(c.query), pgx.QueryExecModeSimpleProtocol); err != nil {
		return "", fmt.Errorf("prepare %s: %w", c.query, err)
	}
	// A prepared statement outlives the transaction.
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "DEALLOCATE plan_q", pgx.QueryExecModeSimpleProtocol)
	}()
	return execute(ctx, conn, s, f, c, "plan_q", mode, "EXPLAIN ("+options+") ")
}

// execute runs the prepared statement name with the case's arguments from f, after its locking
// statements, under plan_cache_mode mode (empty: the session's), prefixed by explain, in a
// transaction that is rolled back: claims and commits write, and with ANALYZE they run.
func execute(ctx context.Context, conn *pgxpool.Conn, s *Store, f planFixture, c planCase, name, mode, explain string) (string, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if mode != "" {
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode); err != nil {
			return "", err
		}
	}
	for _, b := range c.before {
		if _, err := tx.Exec(ctx, s.q(b), beforeArgs(b, f, c, s.schema)...); err != nil {
			return "", fmt.Errorf("%s: %w", b, err)
		}
	}
	lits := []string{}
	for _, a := range c.args(f) {
		lits = append(lits, literal(a))
	}
	exec := "EXECUTE " + name
	if len(lits) > 0 {
		exec += "(" + strings.Join(lits, ", ") + ")"
	}
	rows, err := tx.Query(ctx, explain+exec, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", err
	}
	var out []string
	for rows.Next() {
		if explain == "" {
			continue
		}
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		out = append(out, line)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", c.query, err)
	}
	return strings.Join(out, "\n"), nil
}

// badScans returns what plan (EXPLAIN's JSON) reads in a way whose cost grows with the tables
// rather than with the statement's batch: a sequential scan of runs or steps, a bitmap scan of
// runs_ready (every due entry, dead ones included, not the first few in order), or the
// tenant-wide steps_waiting in a statement about one run.
func badScans(plan string) ([]string, error) {
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &doc); err != nil {
		return nil, err
	}
	var out []string
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		rel, index := n["Relation Name"], n["Index Name"]
		switch {
		case n["Node Type"] == "Seq Scan" && (rel == "runs" || rel == "steps" || rel == "snapshots"):
			out = append(out, fmt.Sprintf("sequential scan of %s", rel))
		case n["Node Type"] == "Bitmap Index Scan" && index == "runs_ready":
			out = append(out, "bitmap scan of runs_ready")
		case index == "steps_waiting":
			out = append(out, "scan of steps_waiting")
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	for _, d := range doc {
		walk(d.Plan)
	}
	return out, nil
}

// journalRange reports whether plan (EXPLAIN's JSON) reads steps through the (run_id, seq)
// index with a lower bound on seq: a claim's journal load with snapshots reads each run's
// journal from its snapshot on, not the whole of it. windowed reports whether such a range is
// an index scan right under a Limit, which reads the entries in order and stops after the
// window: a bitmap scan, or a sort between the two, would read the whole rest of the journal.
func journalRange(plan string) (ranged, windowed bool, err error) {
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &doc); err != nil {
		return false, false, err
	}
	isRange := func(n map[string]any) bool {
		cond, _ := n["Index Cond"].(string)
		// An index scan, or the bitmap index scan under a bitmap heap scan (which has no
		// relation name of its own).
		return n["Index Name"] == "steps_run_id_seq_key" && strings.Contains(cond, "seq >=")
	}
	var walk func(n map[string]any, underLimit bool)
	walk = func(n map[string]any, underLimit bool) {
		if isRange(n) {
			ranged = true
			if underLimit && n["Node Type"] == "Index Scan" {
				windowed = true
			}
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m, n["Node Type"] == "Limit")
			}
		}
	}
	for _, d := range doc {
		walk(d.Plan, false)
	}
	return ranged, windowed, nil
}

// loadFixture picks the rows the cases point at from data filled by fill.sql, or by
// waiting.sql (tenant plan_w: no held or due runs, so those cases name runs that do not exist
// and the journal load takes 32 waiting runs; the plans are the same).
func loadFixture(ctx context.Context, conn *pgxpool.Conn) (planFixture, error) {
	f := planFixture{tenant: "plan_t3"}
	var filled bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE id = 'plan_t3')`).Scan(&filled); err != nil {
		return f, err
	}
	if !filled {
		f.tenant = "plan_w"
	}
	q := func(sql string, dest ...any) error { return conn.QueryRow(ctx, sql, f.tenant).Scan(dest...) }
	if err := q(`SELECT r.id::text FROM runs r JOIN steps s ON s.run_id = r.id AND s.status = 'waiting'
		WHERE r.tenant_id = $1 AND r.status = 'running' ORDER BY r.id LIMIT 1`, &f.waiting); err != nil {
		return f, fmt.Errorf("a waiting run: %w", err)
	}
	// A host renews its leases in one statement: 64 of them, a busy host's share.
	if err := q(`SELECT coalesce(array_agg(id::text), '{}') FROM (SELECT id FROM runs WHERE tenant_id = $1
		AND lease_owner = 'plan-host' ORDER BY id LIMIT 64) h`, &f.heldIDs); err != nil {
		return f, fmt.Errorf("held runs: %w", err)
	}
	if len(f.heldIDs) == 0 && filled {
		return f, fmt.Errorf("no held runs")
	}
	if len(f.heldIDs) == 0 {
		f.heldIDs = []string{newUUID()}
	}
	f.held = f.heldIDs[0]
	due := `SELECT coalesce(array_agg(id::text), '{}') FROM (SELECT id FROM runs WHERE tenant_id = $1 AND status = 'running'
		AND lease_owner IS NULL AND available_at <= now() ORDER BY available_at LIMIT 32) d`
	if !filled {
		due = `SELECT array_agg(id::text) FROM (SELECT id FROM runs WHERE tenant_id = $1 LIMIT 32) d`
	}
	if err := q(due, &f.journals); err != nil {
		return f, fmt.Errorf("due runs: %w", err)
	}
	return f, nil
}

// fillRuns fills the store's schema by fill.sql with n runs.
func fillRuns(ctx context.Context, conn *pgxpool.Conn, n int) error {
	if _, err := conn.Exec(ctx, "SET wfhost.fill_runs = "+strconv.Itoa(n)); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, fillSQL, pgx.QueryExecModeSimpleProtocol)
	return err
}

// TestPlansStaleStatistics fills a schema with 60,000 runs (about 240,000 journal entries)
// after the statistics were taken on 240, or never taken, as a deployment whose autovacuum is
// off or never caught up has them, and asserts that no per-claim or per-activation statement reads runs or steps by
// sequential scan: in custom plans, in generic plans (pgx prepares every statement, and
// Postgres switches a prepared statement to its generic plan after five runs), and in generic
// plans made while the tables held 240 runs and cached since (a connection keeps its plans
// until something invalidates them, such as an ANALYZE, which may never come).
func TestPlansStaleStatistics(t *testing.T) {
	t.Parallel()
	t.Run("analysed at 240 runs", func(t *testing.T) { t.Parallel(); checkPlans(t, true) })
	t.Run("never analysed", func(t *testing.T) { t.Parallel(); checkPlans(t, false) })
}

// checkPlans is TestPlansStaleStatistics on a schema of its own, analysed at 240 runs or never.
func checkPlans(t *testing.T, analyse bool) {
	ctx := t.Context()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "wfhost_test_" + hex.EncodeToString(b[:])
	url := cmp.Or(os.Getenv("TEST_DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/test")
	s, err := Open(ctx, Config{URL: url, Schema: schema, MaxConns: 2})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		if _, err := s.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		s.Close()
	})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	// Each statement is planned on the pool the store runs it on (indexedStatements): a
	// connection to explain it on, and one that keeps the plan made on the small tables.
	type conns struct{ conn, cached *pgxpool.Conn }
	acquire := func(pool *pgxpool.Pool) conns {
		var c conns
		var err error
		if c.conn, err = pool.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.conn.Release)
		if c.cached, err = pool.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.cached.Release)
		if _, err := c.cached.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
			t.Fatal(err)
		}
		return c
	}
	plain, indexed := acquire(s.pool), acquire(s.indexed)
	on := func(c planCase) conns {
		if s.on(c.query) == s.indexed {
			return indexed
		}
		return plain
	}
	conn := plain.conn
	if err := fillRuns(ctx, conn, 240); err != nil {
		t.Fatalf("fill 240: %v", err)
	}
	for _, table := range []string{"runs", "steps", "events", "tenants"} {
		if !analyse {
			break
		}
		if _, err := conn.Exec(ctx, "ANALYZE "+table); err != nil {
			t.Fatal(err)
		}
	}
	// Plan every statement now, on the small tables, and keep the plans.
	cases := planCases()
	small := planFixture{tenant: "plan_t3", waiting: newUUID(), held: newUUID(), heldIDs: []string{newUUID()}, journals: []string{newUUID()}}
	for i, c := range cases {
		name := "plan_cached_" + strconv.Itoa(i)
		if _, err := on(c).cached.Exec(ctx, "PREPARE "+name+" AS "+s.q(c.query), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("prepare %s: %v", c.name, err)
		}
		if _, err := execute(ctx, on(c).cached, s, small, c, name, "", ""); err != nil {
			t.Fatalf("%s on 240 runs: %v", c.name, err)
		}
	}
	if err := fillRuns(ctx, conn, 60_000); err != nil {
		t.Fatalf("fill 60,000: %v", err)
	}
	f, err := loadFixture(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	// The journal load's plan is checked on runs with snapshots and runs without.
	var snapped int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE run_id = ANY($1::uuid[])`, f.journals).Scan(&snapped); err != nil {
		t.Fatal(err)
	}
	if snapped == 0 || snapped == len(f.journals) {
		t.Fatalf("%d of the %d runs whose journals are loaded have snapshots, want some", snapped, len(f.journals))
	}
	// And the windowed load on runs whose journal goes on past the window, from their
	// snapshot on or from the top, and runs whose journal does not.
	var long, longSnapped int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(sn.run_id) FROM unnest($1::uuid[]) AS c(id)
		LEFT JOIN snapshots sn ON sn.run_id = c.id
		WHERE (SELECT count(*) FROM steps s WHERE s.run_id = c.id AND s.seq >= coalesce(sn.seq, 0)) > $2`,
		f.journals, journalWindow).Scan(&long, &longSnapped); err != nil {
		t.Fatal(err)
	}
	if long == 0 || long == len(f.journals) || longSnapped == 0 || longSnapped == long {
		t.Fatalf("%d of the %d runs whose journals are loaded are longer than the window, %d of them after a snapshot; want some of each",
			long, len(f.journals), longSnapped)
	}
	check := func(c planCase, mode, plan string, text func() string) {
		t.Helper()
		scans, err := badScans(plan)
		if err != nil {
			t.Fatalf("%s, %s: %v", c.name, mode, err)
		}
		for _, bad := range scans {
			t.Errorf("%s, %s: %s:\n%s", c.name, mode, bad, text())
		}
		switch c.query {
		case "load_journals", "load_journal_tail", "journal_page":
			ranged, windowed, err := journalRange(plan)
			if err != nil {
				t.Fatalf("%s, %s: %v", c.name, mode, err)
			}
			if !ranged {
				t.Errorf("%s, %s: steps are not read by an index range from the first entry asked for:\n%s", c.name, mode, text())
			}
			if c.window && !windowed {
				t.Errorf("%s, %s: steps are not read by an index scan that stops after the window:\n%s", c.name, mode, text())
			}
		}
	}
	for i, c := range cases {
		cs := on(c)
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			plan, err := explain(ctx, cs.conn, s, f, c, mode, "FORMAT JSON")
			if err != nil {
				t.Fatalf("%s, %s: %v", c.name, mode, err)
			}
			check(c, mode, plan, func() string { text, _ := explain(ctx, cs.conn, s, f, c, mode, "FORMAT TEXT"); return text })
		}
		name := "plan_cached_" + strconv.Itoa(i)
		plan, err := execute(ctx, cs.cached, s, f, c, name, "", "EXPLAIN (FORMAT JSON) ")
		if err != nil {
			t.Fatalf("%s, generic plan cached at 240 runs: %v", c.name, err)
		}
		check(c, "generic plan cached at 240 runs", plan, func() string {
			text, _ := execute(ctx, cs.cached, s, f, c, name, "", "EXPLAIN ")
			return text
		})
	}
}

// newUUID returns a random UUID: a run that does not exist.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TestPlansAt1M prints, for every case, EXPLAIN (ANALYZE, BUFFERS) in custom and generic
// plans, each on the pool the store runs it on, on the database WFHOST_PLANS_URL (schema wfhost) built by testdata/plans/scale1m.sh
// (either shape). Skipped without it. Each execution is rolled back; each is run twice and the
// second shown, so that pages read from disk and dead index entries met for the first time do
// not hide the steady cost.
//
//	WFHOST_PLANS_URL=postgres://postgres@127.0.0.1:5432/scale1m GOWORK=off go test -run TestPlansAt1M -v ./store/postgres/
func TestPlansAt1M(t *testing.T) {
	url := os.Getenv("WFHOST_PLANS_URL")
	if url == "" {
		t.Skip("WFHOST_PLANS_URL is not set")
	}
	ctx := t.Context()
	s, err := Open(ctx, Config{URL: url, MaxConns: 2})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	f, err := loadFixture(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	// Each statement on the pool the store runs it on (indexedStatements), with its settings.
	indexed, err := s.indexed.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer indexed.Release()
	for _, c := range planCases() {
		if only := os.Getenv("WFHOST_PLANS_ONLY"); only != "" && !strings.Contains(c.name, only) {
			continue
		}
		on := conn
		if s.on(c.query) == s.indexed {
			on = indexed
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			// Twice: the first run reads the pages into shared buffers; the second shows what a
			// warm database costs.
			var plan string
			for range 2 {
				plan, err = explain(ctx, on, s, f, c, mode, "ANALYZE, BUFFERS, TIMING OFF")
				if err != nil {
					t.Fatalf("%s, %s: %v", c.name, mode, err)
				}
			}
			fmt.Printf("=== %s, %s\n%s\n\n", c.name, mode, plan)
		}
	}
}
