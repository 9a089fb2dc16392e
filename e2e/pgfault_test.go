package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// Postgres faults under load, on clusters of the test's own (pgcluster_test.go): Postgres
// restarted, and a streaming replica promoted after the primary crashed, while hundreds of runs
// are in flight on a daemon with the default 30 s lease. Every run must complete with each
// boundary journaled once; requests that need the database must be answered 503 with
// Retry-After while it is away, never 500, and /readyz must say it is away; the runs the daemon
// had in flight must go on as soon as the database is back, not a lease later.

const (
	faultSteps   = 4   // steps per run
	faultSleepMs = 300 // a durable sleep between them, so runs stay in flight
	faultLease   = 30 * time.Second
	faultFinish  = 4 * time.Minute // every run completes within this: a failure deadline
	// resumeBound is how soon after the database is back each run the daemon had to put down
	// must have written again: well under the lease, which is what they used to wait for.
	resumeBound = faultLease / 3
)

// faultDaemon starts a daemon on b with the default lease and the Rust example modules (the
// smallest guest, so that the load is the store's, not the sandbox's).
func faultDaemon(t *testing.T, b backend) *daemon {
	d := newDaemon(t, "survivor", b, "--deploy", "../testdata/examples_rust.wasm", "--lease", faultLease.String(),
		"--log-level", "info")
	d.start()
	return d
}

// startLoad starts n runs of `steps` from 8 clients at once; every start must succeed.
func startLoad(t *testing.T, d *daemon, n int) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				code, out, err := d.do("POST", "/v1/workflows/steps/runs", map[string]any{
					"input": map[string]any{"n": faultSteps, "sleepMs": faultSleepMs, "tag": i}})
				if err != nil || code != http.StatusCreated {
					t.Errorf("start run %d: %d %v %s", i, code, err, out)
					return
				}
				var r wire.Run
				_ = json.Unmarshal(out, &r)
				ids[i] = r.ID
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return ids
}

// answer is one request the prober made and how the daemon answered it.
type answer struct {
	what       string // "readyz" or "start"
	sent, done time.Time
	status     int // 0: no answer (the request itself failed)
	retryAfter string
	runID      string
	err        string
}

// prober asks /readyz and starts a one-step run, each every 50 ms, until stopped, keeping
// every answer.
type prober struct {
	d       *daemon
	mu      sync.Mutex
	answers []answer
	stopCh  chan struct{}
	wg      sync.WaitGroup
}

func startProber(d *daemon) *prober {
	p := &prober{d: d, stopCh: make(chan struct{})}
	client := &http.Client{Timeout: 30 * time.Second}
	ask := func(what, method, path, body string) {
		a := answer{what: what, sent: time.Now()}
		req, _ := http.NewRequest(method, d.url(path), strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e2eToken)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			a.err = err.Error()
		} else {
			out, _ := io.ReadAll(res.Body)
			res.Body.Close()
			a.status, a.retryAfter = res.StatusCode, res.Header.Get("Retry-After")
			if a.status == http.StatusCreated {
				var r wire.Run
				_ = json.Unmarshal(out, &r)
				a.runID = r.ID
			} else if a.status != http.StatusOK {
				a.err = string(out)
			}
		}
		a.done = time.Now()
		p.mu.Lock()
		p.answers = append(p.answers, a)
		p.mu.Unlock()
	}
	loop := func(fn func()) {
		defer p.wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stopCh:
				return
			case <-t.C:
				fn()
			}
		}
	}
	p.wg.Add(2)
	go loop(func() { ask("readyz", "GET", "/readyz", "") })
	go loop(func() {
		ask("start", "POST", "/v1/workflows/steps/runs", `{"input":{"n":1,"sleepMs":0}}`)
	})
	return p
}

// stop ends the probing and checks the answers: never a 500 or a failed request; every 503 to
// a start carries Retry-After; every request made wholly while the database was away (from
// down to up) is a 503, /readyz included. It returns the runs the prober started.
func (p *prober) stop(t *testing.T, down, up time.Time) []string {
	t.Helper()
	close(p.stopCh)
	p.wg.Wait()
	var (
		ids                          []string
		unavailable, readyDown, okIn int
	)
	for _, a := range p.answers {
		switch {
		case a.status == 0:
			t.Errorf("%s at %s: no answer from the daemon: %s", a.what, a.sent.Format("15:04:05.000"), a.err)
		case a.status == http.StatusServiceUnavailable:
			unavailable++
			if a.what == "readyz" {
				readyDown++
			} else if a.retryAfter == "" {
				t.Errorf("start at %s: 503 without Retry-After", a.sent.Format("15:04:05.000"))
			}
		case a.status >= 500 || (a.status != http.StatusOK && a.status != http.StatusCreated):
			t.Errorf("%s at %s: %d %s", a.what, a.sent.Format("15:04:05.000"), a.status, a.err)
		}
		if a.runID != "" {
			ids = append(ids, a.runID)
		}
		if a.sent.After(down) && a.done.Before(up) && a.status != http.StatusServiceUnavailable {
			okIn++
			t.Errorf("%s at %s, while the database was away: %d, want 503", a.what, a.sent.Format("15:04:05.000"), a.status)
		}
	}
	if readyDown == 0 {
		t.Errorf("/readyz never reported the outage")
	}
	t.Logf("prober: %d requests, %d answered 503 (%d of them /readyz), %d runs started", len(p.answers), unavailable, readyDown, len(ids))
	return ids
}

// cutOff are the runs whose activation the outage cut off, as the daemon logged them: a pass
// that failed on the store, a run's end the store did not take, or a parked pass whose resume
// the store did not take (with the runs' sleeps, most passes are parked at any instant, and an
// outage may land on nothing but those).
func cutOff(d *daemon) []string {
	seen := map[string]bool{}
	var ids []string
	for _, prefix := range []string{"activation failed", "record run result", "record the run's result", "resume a parked run; leaving it to a claim"} {
		for _, rec := range d.logRecords(prefix) {
			if id, _ := rec["run"].(string); id != "" && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// stepsDone counts journal rows: how far the load has got.
func (b *clusterBackend) stepsDone(t *testing.T) int {
	return b.count(t, "SELECT count(*) FROM "+b.table("steps"))
}

// resumedAfter returns, for each run of ids, how long after up it first wrote anything once
// the database went away at down: its first journal time or end after down, less up.
func (b *clusterBackend) resumedAfter(t *testing.T, ids []string, down, up time.Time) map[string]time.Duration {
	t.Helper()
	out := make(map[string]time.Duration)
	b.query(t, "resumption times", func(ctx context.Context) error {
		rows, err := b.pool.Query(ctx, `
			SELECT r.id::text, least(
				(SELECT min(v.at) FROM `+b.table("steps")+` s, LATERAL (VALUES (s.started_at), (s.completed_at)) v(at)
				 WHERE s.run_id = r.id AND v.at > $2),
				CASE WHEN r.completed_at > $2 THEN r.completed_at END)
			FROM `+b.table("runs")+` r WHERE r.id = ANY($1::uuid[])`, ids, down)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id string
				at *time.Time
			)
			if err := rows.Scan(&id, &at); err != nil {
				return err
			}
			if at == nil {
				continue // it ended just before the outage: nothing was put down
			}
			out[id] = max(at.Sub(up), 0)
		}
		return rows.Err()
	})
	return out
}

// checkFaultJournals: every run completed with the sum of its steps, and its journal holds
// each boundary once, in order: s, pause, s#1, pause#1, ... (a run of the prober has one step).
func checkFaultJournals(t *testing.T, b backend, ids []string, steps int) (rows int) {
	t.Helper()
	var want []string
	for i := range steps {
		want = append(want, "run "+suffixed("s", i))
		if i < steps-1 {
			want = append(want, "sleep "+suffixed("pause", i))
		}
	}
	sum := steps * (steps - 1) / 2
	for _, id := range ids {
		status, output := b.runResult(t, id)
		var out struct{ Sum int }
		if status != "completed" || json.Unmarshal(output, &out) != nil || out.Sum != sum {
			t.Fatalf("run %s is %s with output %s, want completed with sum %d", id, status, output, sum)
		}
		var got []string
		for seq, r := range b.journal(t, id) {
			if r.seq != seq || r.state != "completed" {
				t.Fatalf("run %s: journal entry %d is seq %d %s %s %s", id, seq, r.seq, r.kind, r.key, r.state)
			}
			got = append(got, r.kind+" "+r.key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("run %s: journal %v, want %v", id, got, want)
		}
		rows += len(got)
	}
	return rows
}

func suffixed(name string, i int) string {
	if i == 0 {
		return name
	}
	return fmt.Sprintf("%s#%d", name, i)
}

// checkResumed requires every run whose activation the outage cut off to have written again
// within resumeBound of the database coming back, and logs how soon they did.
func checkResumed(t *testing.T, b *clusterBackend, d *daemon, down, up time.Time) {
	t.Helper()
	cut := cutOff(d)
	if len(cut) == 0 {
		t.Fatal("the outage cut off no activation; it landed outside the load")
	}
	after := b.resumedAfter(t, cut, down, up)
	var delays []time.Duration
	for id, d := range after {
		delays = append(delays, d)
		if d > resumeBound {
			t.Errorf("run %s wrote again %v after the database was back, want within %v (the lease is %v)", id, d, resumeBound, faultLease)
		}
	}
	slices.Sort(delays)
	t.Logf("the %d runs the outage cut off wrote again after the database was back: median %v, max %v",
		len(delays), delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)-1].Round(time.Millisecond))
}

// awaitLoad waits until the load is under way: about one journal row per run.
func awaitLoad(t *testing.T, b *clusterBackend, runs int) {
	t.Helper()
	testenv.Await(t, faultFinish, func() error {
		if n := b.stepsDone(t); n < runs {
			return fmt.Errorf("the load has not got going: %d journal rows for %d runs", n, runs)
		}
		return nil
	})
}

// TestPostgresRestartUnderLoad restarts Postgres (a fast shutdown, a second down, a start)
// while 500 runs are in flight on one daemon.
func TestPostgresRestartUnderLoad(t *testing.T) {
	version := needClusters(t)
	pg := newPGCluster(t, version)
	pg.exec("postgres", "CREATE DATABASE test")
	b := newClusterBackend(t, pg.url())
	d := faultDaemon(t, b)

	const runs = 500
	began := time.Now()
	ids := startLoad(t, d, runs)
	p := startProber(d)
	awaitLoad(t, b, runs)

	live := b.liveRuns(t)
	pg.stop("fast")
	down := time.Now()
	t.Logf("Postgres stopped %v into the load, with %d runs live", down.Sub(began).Round(time.Millisecond), live)
	time.Sleep(time.Second)
	restart := time.Now()
	up := pg.startMeasured()
	t.Logf("Postgres stopped for %v, accepting connections again %v after it stopped", restart.Sub(down).Round(time.Millisecond), up.Sub(down).Round(time.Millisecond))

	time.Sleep(3 * time.Second) // the prober sees the daemon recover
	started := p.stop(t, down, restart)
	awaitAllTerminal(t, b, faultFinish, d)
	t.Logf("every run completed %v after the database was back", time.Since(up).Round(time.Millisecond))
	logSummary(t, d)
	rows := checkFaultJournals(t, b, ids, faultSteps)
	rows += checkFaultJournals(t, b, started, 1)
	checkResumed(t, b, d, down, up)
	t.Logf("%d runs completed (%d started by the prober), %d journal rows each written once", len(ids)+len(started), len(started), rows)
}

// TestPostgresFailoverUnderLoad crashes the primary while 1,000 runs are in flight and
// promotes its synchronous streaming replica; the daemon finds the new primary by itself
// through a multi-host connection string (target_session_attrs=read-write). Then the old
// primary is started again, alone, and diffed against the promoted one: a synchronous replica
// must have every commit the daemon was told of.
func TestPostgresFailoverUnderLoad(t *testing.T) {
	version := needClusters(t)
	t0 := time.Now()
	phase := func(what string) { t.Logf("%v: %s", time.Since(t0).Round(time.Millisecond), what) }
	defer phase("cleanup begins")
	primary := newPGCluster(t, version)
	phase("primary up")
	primary.exec("postgres", "CREATE DATABASE test")
	replica := newStandby(t, primary)
	phase("replica up")
	// Synchronous only now that the replica streams: a commit waits for the replica to have it
	// on disk before it is acknowledged.
	primary.writeConf("synchronous_standby_names = '*'", "synchronous_commit = on")
	primary.reload()
	var syncState string
	err := testenv.Poll(t, 30*time.Second, func() error {
		if err := primary.queryRow("postgres", "SELECT sync_state FROM pg_stat_replication", &syncState); err != nil || syncState != "sync" {
			return fmt.Errorf("the replica's sync_state is %q (%v)", syncState, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the replica is not synchronous: %v", err)
	}
	url := fmt.Sprintf("postgres://postgres@%s,%s/test?target_session_attrs=read-write&sslmode=disable&connect_timeout=5",
		primary.hostPort(), replica.hostPort())
	b := newClusterBackend(t, url)
	d := faultDaemon(t, b)
	phase("daemon up")
	checkStandbyNotReady(t, replica)

	const runs = 1000
	began := time.Now()
	ids := startLoad(t, d, runs)
	p := startProber(d)
	awaitLoad(t, b, runs)

	live := b.liveRuns(t)
	primary.stop("immediate") // a crash: nothing is flushed or sent that was not already
	down := time.Now()
	t.Logf("primary crashed %v into the load, with %d runs live", down.Sub(began).Round(time.Millisecond), live)
	time.Sleep(time.Second) // the failover's detection
	promote := time.Now()
	replica.promote()
	up := time.Now() // within 20 ms of the promoted replica taking writes
	t.Logf("replica promoted %v after the primary crashed", up.Sub(down).Round(time.Millisecond))

	time.Sleep(3 * time.Second)
	started := p.stop(t, down, promote)
	awaitAllTerminal(t, b, faultFinish, d)
	t.Logf("every run completed %v after the database was back", time.Since(up).Round(time.Millisecond))
	logSummary(t, d)
	rows := checkFaultJournals(t, b, ids, faultSteps)
	rows += checkFaultJournals(t, b, started, 1)
	checkResumed(t, b, d, down, up)
	t.Logf("%d runs completed (%d started by the prober), %d journal rows each written once", len(ids)+len(started), len(started), rows)

	// The daemon goes before the old primary comes back: with both up, its connection string
	// could pick either.
	phase("checked")
	d.kill()
	primary.start()
	phase("old primary up")
	diffFailover(t, primary, replica, append(ids, started...))
}

// diffFailover compares the crashed primary, restarted alone, with the promoted replica. The
// daemon writes a run's journal in order and waits for each commit before the next, so every
// journal row of the old primary but a run's last one was acknowledged: each must be on the
// replica as it was. The last rows may be commits that were in flight at the crash (written
// locally, never acknowledged); every run the old primary holds that the replica lacks must
// be one whose start nobody was told of.
func diffFailover(t *testing.T, oldPrimary, promoted *pgCluster, acked []string) {
	t.Helper()
	read := func(c *pgCluster) (map[string]bool, map[string][]string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pgx.Connect(ctx, c.url())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		idRows, err := conn.Query(ctx, "SELECT id::text FROM wfhost.runs")
		if err != nil {
			t.Fatal(err)
		}
		runIDs, err := pgx.CollectRows(idRows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		runs := make(map[string]bool, len(runIDs))
		for _, id := range runIDs {
			runs[id] = true
		}
		rows, err := conn.Query(ctx, "SELECT run_id::text, format('%s %s %s %s %s', seq, key, kind, status, coalesce(output::text, '')) FROM wfhost.steps ORDER BY run_id, seq")
		if err != nil {
			t.Fatal(err)
		}
		journals := make(map[string][]string)
		for rows.Next() {
			var id, row string
			if err := rows.Scan(&id, &row); err != nil {
				t.Fatal(err)
			}
			journals[id] = append(journals[id], row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return runs, journals
	}
	oldRuns, oldJournals := read(oldPrimary)
	newRuns, newJournals := read(promoted)
	ackedSet := make(map[string]bool, len(acked))
	for _, id := range acked {
		ackedSet[id] = true
	}
	var compared, tails int
	for id := range oldRuns {
		if !newRuns[id] {
			if ackedSet[id] {
				t.Errorf("run %s: its start was acknowledged and the old primary has it, but the promoted replica does not", id)
			}
			continue
		}
		old, cur := oldJournals[id], newJournals[id]
		for i, row := range old {
			if i == len(old)-1 {
				if i >= len(cur) || cur[i] != row {
					tails++ // in flight at the crash, or moved on since: not acknowledged
				}
				continue
			}
			compared++
			if i >= len(cur) || cur[i] != row {
				t.Errorf("run %s: journal row %q was acknowledged on the old primary; the promoted replica has %q", id, row, at(cur, i))
			}
		}
	}
	if compared == 0 {
		t.Fatal("the old primary holds no acknowledged journal row: nothing was compared")
	}
	t.Logf("failover diff: %d runs on the old primary, %d acknowledged journal rows found on the promoted replica, %d last rows differing (in flight or moved on)",
		len(oldRuns), compared, tails)
}

func at(rows []string, i int) string {
	if i < len(rows) {
		return rows[i]
	}
	return "nothing"
}

// logSummary logs how often the daemon logged each message at warn level or above.
func logSummary(t *testing.T, d *daemon) {
	counts := map[string]int{}
	for _, line := range strings.Split(d.logText(), "\n") {
		var rec struct{ Level, Msg string }
		if json.Unmarshal([]byte(line), &rec) == nil && (rec.Level == "WARN" || rec.Level == "ERROR") {
			counts[rec.Level+" "+rec.Msg]++
		}
	}
	for msg, n := range counts {
		t.Logf("daemon log: %d x %s", n, msg)
	}
}

// checkStandbyNotReady: a store on the standby (where a connection string without
// target_session_attrs=read-write may land after a failover) answers reads but must not call
// itself ready, and its writes are unavailable (503 and a retry), not internal errors.
func checkStandbyNotReady(t *testing.T, standby *pgCluster) {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, postgres.Config{URL: standby.url(), Schema: "wfhost", MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The daemon's schema reaches the standby a moment after the daemon migrated it.
	testenv.Await(t, 30*time.Second, func() error {
		if _, err := st.GetTenant(ctx, "default"); err != nil {
			return fmt.Errorf("the standby does not have the daemon's schema: %w", err)
		}
		return nil
	})
	if err := api.StoreReady(st)(ctx); err == nil {
		t.Error("a store on a read-only standby calls itself ready")
	}
	if err := st.EnsureTenant(ctx, "standby-write"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a write on the standby: got %v, want store.ErrUnavailable", err)
	}
}
