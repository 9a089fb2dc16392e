package e2e_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wfhost/wfhost/internal/testenv"
)

// Postgres clusters of a test's own, for the tests that restart Postgres or fail it over: the
// shared test Postgres (5432) is never stopped or reconfigured. They are made with Debian's
// postgresql-common (pg_createcluster, pg_ctlcluster, pg_dropcluster) on free ports, which
// needs root (CI runs as root), and dropped when the test ends.

// pgCluster is one Postgres cluster of the test's own.
type pgCluster struct {
	t       *testing.T
	version string
	name    string
	port    int
}

// needClusters skips the test where clusters cannot be made.
func needClusters(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end Postgres fault test")
	}
	if os.Geteuid() != 0 {
		t.Skip("making Postgres clusters needs root (pg_createcluster); CI runs as root")
	}
	if _, err := exec.LookPath("pg_createcluster"); err != nil {
		t.Skip("pg_createcluster (postgresql-common) is not installed")
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(versions) == 0 {
		t.Skip("no PostgreSQL server under /usr/lib/postgresql")
	}
	slices.SortFunc(versions, func(a, b string) int { return pgMajor(a) - pgMajor(b) })
	return filepath.Base(filepath.Dir(filepath.Dir(versions[len(versions)-1])))
}

func pgMajor(binPath string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(binPath))))
	return v
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newPGCluster makes and starts a cluster with trust authentication on a free port, with conf
// (postgresql.conf lines) added. It is stopped and dropped when the test ends.
func newPGCluster(t *testing.T, version string, conf ...string) *pgCluster {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	c := &pgCluster{t: t, version: version, name: "wfhost_e2e_" + hex.EncodeToString(b[:]), port: freeTCPPort(t)}
	run(t, "pg_createcluster", version, c.name, "--port", strconv.Itoa(c.port), "--", "--auth=trust")
	t.Cleanup(func() {
		if out, err := exec.Command("pg_dropcluster", "--stop", c.version, c.name).CombinedOutput(); err != nil {
			t.Errorf("drop cluster %s: %v\n%s", c.name, err, out)
		}
		// pg_dropcluster leaves the configuration files it did not write (ours, in conf.d).
		if err := os.RemoveAll(c.confDir()); err != nil {
			t.Errorf("remove %s: %v", c.confDir(), err)
		}
	})
	// Small and fast to start: these clusters hold one test's runs. fsync stays on: a crash
	// must lose what a real one would.
	c.writeConf(append([]string{"shared_buffers = 32MB", "max_connections = 100", "listen_addresses = '127.0.0.1'"}, conf...)...)
	c.start()
	return c
}

// writeConf adds lines to the cluster's configuration; a running cluster reads them on reload.
func (c *pgCluster) writeConf(lines ...string) {
	c.t.Helper()
	path := filepath.Join(c.confDir(), "conf.d", "wfhost-e2e.conf")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		c.t.Fatal(err)
	}
}

// reload makes the running cluster read its configuration again.
func (c *pgCluster) reload() {
	c.t.Helper()
	run(c.t, "pg_ctlcluster", c.version, c.name, "reload")
}

// newStandby makes a streaming replica of primary with pg_basebackup and starts it.
func newStandby(t *testing.T, primary *pgCluster) *pgCluster {
	t.Helper()
	c := newPGCluster(t, primary.version)
	c.stop("fast")
	dir := c.dataDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	run(t, "su", "postgres", "-c", fmt.Sprintf("pg_basebackup -h 127.0.0.1 -p %d -U postgres -D %s -R -X stream -c fast", primary.port, dir))
	c.start()
	return c
}

// confDir is where postgresql-common keeps the cluster's configuration.
func (c *pgCluster) confDir() string {
	return filepath.Join("/etc/postgresql", c.version, c.name)
}

func (c *pgCluster) dataDir() string {
	return filepath.Join("/var/lib/postgresql", c.version, c.name)
}

func (c *pgCluster) hostPort() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }

// url is the cluster's test database.
func (c *pgCluster) url() string {
	return "postgres://postgres@" + c.hostPort() + "/test?sslmode=disable"
}

func (c *pgCluster) start() {
	c.t.Helper()
	run(c.t, "pg_ctlcluster", c.version, c.name, "start")
	c.waitReady()
}

// startMeasured starts the cluster and returns when it first accepted a connection, which is
// some time before pg_ctlcluster returns.
func (c *pgCluster) startMeasured() (up time.Time) {
	c.t.Helper()
	done := make(chan error, 1)
	go func() {
		out, err := exec.Command("pg_ctlcluster", c.version, c.name, "start").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, out)
		}
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for up.IsZero() && time.Now().Before(deadline) {
		var one int
		if c.queryRow("postgres", "SELECT 1", &one) == nil {
			up = time.Now()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := <-done; err != nil {
		c.t.Fatalf("start cluster %s: %v", c.name, err)
	}
	if up.IsZero() {
		c.t.Fatalf("cluster %s did not accept connections within 30s", c.name)
	}
	return up
}

// stop stops the cluster: mode fast (clients are disconnected, a clean shutdown) or immediate
// (every process quits at once, as in a crash).
func (c *pgCluster) stop(mode string) {
	c.t.Helper()
	run(c.t, "pg_ctlcluster", c.version, c.name, "stop", "-m", mode)
}

// promote ends a standby's recovery: it becomes a primary.
func (c *pgCluster) promote() {
	c.t.Helper()
	run(c.t, "pg_ctlcluster", c.version, c.name, "promote")
	testenv.Await(c.t, 30*time.Second, func() error {
		var inRecovery bool
		if err := c.queryRow("postgres", "SELECT pg_is_in_recovery()", &inRecovery); err != nil || inRecovery {
			return fmt.Errorf("cluster %s is still in recovery after promote (%v)", c.name, err)
		}
		return nil
	})
}

func (c *pgCluster) waitReady() {
	c.t.Helper()
	testenv.Await(c.t, 30*time.Second, func() error {
		var one int
		if err := c.queryRow("postgres", "SELECT 1", &one); err != nil {
			return fmt.Errorf("cluster %s does not accept connections: %w", c.name, err)
		}
		return nil
	})
}

// exec runs sql in database db.
func (c *pgCluster) exec(db, sql string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", c.hostPort(), db))
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
}

func (c *pgCluster) queryRow(db, sql string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&connect_timeout=5", c.hostPort(), db))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql).Scan(dest...)
}

// clusterBackend is the backend of daemons on a cluster of the test's own (or, with several
// hosts in url, on whichever of them is the primary), read through a pool that reconnects:
// the tests read it across restarts and failovers.
type clusterBackend struct {
	url    string
	schema string
	pool   *pgxpool.Pool
}

func newClusterBackend(t *testing.T, url string) *clusterBackend {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &clusterBackend{url: url, schema: "wfhost", pool: pool}
}

func (b *clusterBackend) daemonArgs(t *testing.T) ([]string, string) {
	return []string{"--database-url", b.url, "--schema", b.schema}, t.TempDir()
}

func (b *clusterBackend) shared() bool { return true }

func (b *clusterBackend) table(name string) string { return pgx.Identifier{b.schema, name}.Sanitize() }

// query runs fn on the pool, trying again for up to a minute while the database is away.
func (b *clusterBackend) query(t *testing.T, what string, fn func(ctx context.Context) error) {
	t.Helper()
	testenv.Await(t, time.Minute, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := fn(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("%s: %v", what, err)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}

func (b *clusterBackend) count(t *testing.T, sql string) int {
	t.Helper()
	var n int
	b.query(t, sql, func(ctx context.Context) error { return b.pool.QueryRow(ctx, sql).Scan(&n) })
	return n
}

func (b *clusterBackend) liveRuns(t *testing.T) int {
	return b.count(t, "SELECT count(*) FROM "+b.table("runs")+" WHERE status IN ('pending','running')")
}

func (b *clusterBackend) leasedRuns(t *testing.T) int {
	return b.count(t, "SELECT count(*) FROM "+b.table("runs")+" WHERE lease_expires_at > now() AND status IN ('pending','running')")
}

func (b *clusterBackend) runResult(t *testing.T, id string) (string, []byte) {
	t.Helper()
	var (
		status string
		output []byte
	)
	b.query(t, "run "+id, func(ctx context.Context) error {
		return b.pool.QueryRow(ctx, "SELECT status, coalesce(output::text,'') FROM "+b.table("runs")+" WHERE id = $1", id).Scan(&status, &output)
	})
	return status, output
}

func (b *clusterBackend) journal(t *testing.T, id string) []journalRow {
	t.Helper()
	var out []journalRow
	b.query(t, "steps of "+id, func(ctx context.Context) error {
		rows, err := b.pool.Query(ctx, "SELECT seq, key, kind, status FROM "+b.table("steps")+" WHERE run_id = $1 ORDER BY seq", id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (journalRow, error) {
			var j journalRow
			return j, r.Scan(&j.seq, &j.key, &j.kind, &j.state)
		})
		return err
	})
	return out
}
