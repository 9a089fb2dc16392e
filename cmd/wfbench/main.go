package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/postgres"
)

// fixtures are the committed example modules by guest language; each has the `steps`
// workflow ({"n": N} runs N trivial steps).
var fixtures = map[string]string{
	"go":             "examples.wasm",
	"rust":           "examples_rust.wasm",
	"assemblyscript": "examples_as.wasm",
}

func main() {
	host.ServeCompileWorkerIfAsked()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wfbench:", err)
		os.Exit(1)
	}
}

type options struct {
	mode, lang, db, testdata, attacks, store string
	via                                      string
	steps, n, c, pool, tenantCores, pgPort   int
	parkMemoryMiB, snapshotEvery             int
	wasmOpt                                  string
	idle                                     time.Duration
	scale                                    scaleOptions
}

func run() error {
	var o options
	flag.StringVar(&o.mode, "mode", "direct", "direct, drain, latency, idle, attack (control latency idle, then under a hostile tenant: attack.go) or scale (issue 13's scenarios at size: scale.go)")
	flag.StringVar(&o.via, "via", "engine", "direct and latency modes: engine (callers call the engine in process) or http (callers in a second process send POST runs?wait=60 to this process's API on loopback: viahttp.go)")
	loadURL := flag.String("load-url", "", "internal: run as -via=http's load process against this API")
	flag.StringVar(&o.lang, "lang", "go", "guest language of the fixture: go, rust or assemblyscript")
	flag.IntVar(&o.steps, "steps", 10, "steps per workflow")
	flag.IntVar(&o.n, "n", 1000, "workflows")
	flag.IntVar(&o.c, "c", 32, "concurrency: activations at once, and callers in direct mode")
	flag.IntVar(&o.pool, "pool", 20, "Postgres connections")
	flag.IntVar(&o.parkMemoryMiB, "park-memory-mib", -1, "scale mode: the engine's ParkMemory in MiB (-1: the default; 0: no parking), to compare parked and replayed")
	flag.IntVar(&o.snapshotEvery, "snapshot-every", 0, "scale mode: the engine's SnapshotEvery (0: the default, -1: no snapshots); snapshots need -wasm-opt")
	flag.StringVar(&o.wasmOpt, "wasm-opt", "wasm-opt", "scale mode: binaryen's wasm-opt, which makes modules snapshottable (\"\": none, every run replays from the top)")
	flag.IntVar(&o.tenantCores, "tenant-cores", 0, "cores one tenant's guest code may occupy (0: the daemon's default, host.Config.TenantCores)")
	flag.StringVar(&o.db, "db", "bench_wfhost", "Postgres database (created if missing)")
	flag.IntVar(&o.pgPort, "pg-port", 5432, "Postgres port on 127.0.0.1 (another cluster: one with autovacuum on, say)")
	flag.StringVar(&o.testdata, "testdata", "testdata", "directory of the committed fixtures")
	flag.DurationVar(&o.idle, "idle", 10*time.Second, "idle mode: how long to watch")
	flag.StringVar(&o.attacks, "attacks", "bombs,traps,fixture,slow", "attack mode: the kinds of attack (attack.go)")
	flag.StringVar(&o.store, "store", "postgres", "scale mode: postgres (the -db database) or embedded (a temporary data directory)")
	o.scaleFlags()
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file: of the measured part in the direct mode, of the whole run (setup too) in the scale mode")
	flag.Parse()
	if *loadURL != "" {
		return runLoadProcess(o, *loadURL)
	}
	switch {
	case o.via == "engine":
	case o.via == "http" && (o.mode == "direct" || o.mode == "latency"):
	case o.via == "http":
		return fmt.Errorf("-via=http measures the direct and latency modes, not %s", o.mode)
	default:
		return fmt.Errorf("-via %q: want engine or http", o.via)
	}
	fixture, ok := fixtures[o.lang]
	if !ok {
		return fmt.Errorf("-lang %q: want go, rust or assemblyscript", o.lang)
	}
	wasm, err := os.ReadFile(filepath.Join(o.testdata, fixture))
	if err != nil {
		return err
	}
	ctx := context.Background()
	if o.mode == "scale" {
		if *cpuProfile != "" {
			stop, err := startCPUProfile(*cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
		}
		return runScale(ctx, o, wasm)
	}
	if err := ensureDatabase(ctx, o); err != nil {
		return err
	}
	url := o.databaseURL(o.db)
	if err := resetSchema(ctx, url, "wfbench"); err != nil {
		return err
	}
	tx := &txCounter{}
	st, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: "wfbench", MaxConns: o.pool, Tracer: tx})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
		return err
	}
	cacheDir := filepath.Join(os.TempDir(), "wfbench-compile-cache")
	snapshots, err := o.snapshotConfig()
	if err != nil {
		return err
	}
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: cacheDir, MaxIdleInstances: o.c, TenantCores: o.tenantCores, Snapshots: snapshots})
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	eng, err := engine.New(engine.Config{
		Store: st, Runtime: rt, Concurrency: o.c, PollInterval: 10 * time.Second, SnapshotEvery: o.snapshotEvery,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		// The tenant cap must not be what a benchmark measures: the largest a tenant may have.
		TenantDefaults: store.Limits{Concurrency: 100_000},
	})
	if err != nil {
		return err
	}
	if err := eng.Start(ctx); err != nil {
		return err
	}
	defer eng.Stop()
	if _, err := eng.Deploy(ctx, store.DefaultTenant, wasm, false); err != nil {
		return err
	}
	b := &bench{eng: eng, input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, o.steps))}
	for range 20 { // warm-up: compiled code, idle instances, prepared statements
		if _, err := b.one(ctx); err != nil {
			return err
		}
	}

	var load *loadProcess
	if o.via == "http" {
		baseURL, token, stopAPI, err := serveAPI(ctx, eng, st)
		if err != nil {
			return err
		}
		defer stopAPI()
		if load, err = startLoad(ctx, o, baseURL, token); err != nil {
			return err
		}
	}

	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	xact0 := tx.n.Load()
	pg0 := postgresCPU(o.db)
	cpu0 := selfCPU()
	began := time.Now()
	var lats []time.Duration
	var elapsed time.Duration
	switch {
	case load != nil:
		elapsed, lats, err = load.run() // the load process's own clock: no pipe in it
	case o.mode == "direct":
		lats, err = b.direct(ctx, o.n, o.c)
	case o.mode == "drain":
		err = b.drain(ctx, o.n)
	case o.mode == "latency":
		lats, err = b.latency(ctx, o.n)
	case o.mode == "idle":
		o.n, o.steps = 0, 0
		time.Sleep(o.idle)
	case o.mode == "attack":
		lats, err = b.attack(ctx, o)
	default:
		return fmt.Errorf("-mode %q: want direct, drain, latency, idle, attack or scale", o.mode)
	}
	if err != nil {
		return err
	}
	if load == nil {
		elapsed = time.Since(began)
	}
	cpu1 := selfCPU()
	pgSec := pgCPUDelta(pg0, postgresCPU(o.db))
	xacts := float64(tx.n.Load() - xact0)
	out := fmt.Sprintf("RESULT peer=wfhost lang=%s mode=%s via=%s steps=%d n=%d c=%d elapsed=%.3fs wf_per_s=%.1f steps_per_s=%.1f harness_cpu=%.2fs pg_cpu=%.2fs",
		o.lang, o.mode, o.via, o.steps, o.n, o.c, elapsed.Seconds(), float64(o.n)/elapsed.Seconds(),
		float64(o.n*o.steps)/elapsed.Seconds(), cpu1-cpu0, pgSec)
	if o.n > 0 {
		// daemon_cpu_ms_per_wf is this process's CPU per run: the daemon's, and in process the
		// callers' goroutines too (a small part); with -via=http the callers are elsewhere.
		out += fmt.Sprintf(" pg_ms_per_step=%.3f xact_per_wf=%.2f daemon_cpu_ms_per_wf=%.3f",
			pgSec*1000/float64(max(o.n*o.steps, 1)), xacts/float64(o.n), (cpu1-cpu0)*1000/float64(o.n))
	} else {
		out += fmt.Sprintf(" idle_xact_per_s=%.2f", xacts/elapsed.Seconds())
	}
	if len(lats) > 0 {
		slices.Sort(lats)
		out += fmt.Sprintf(" p50_ms=%.3f p95_ms=%.3f p99_ms=%.3f", ms(pct(lats, .5)), ms(pct(lats, .95)), ms(pct(lats, .99)))
	}
	fmt.Println(out)
	return nil
}

type bench struct {
	eng   *engine.Engine
	input json.RawMessage
}

// one starts a run and waits for its result.
func (b *bench) one(ctx context.Context) (time.Duration, error) {
	began := time.Now()
	done, err := b.eng.StartAndAwait(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: b.input})
	if err != nil {
		return 0, err
	}
	if done.Status != store.StatusCompleted {
		return 0, fmt.Errorf("run %s ended %s: %+v", done.ID, done.Status, done.Error)
	}
	return time.Since(began), nil
}

func (b *bench) direct(ctx context.Context, n, c int) ([]time.Duration, error) {
	return callInParallel(n, c, func() (time.Duration, error) { return b.one(ctx) })
}

func (b *bench) drain(ctx context.Context, n int) error {
	ids := make([]string, n)
	for i := range ids {
		run, _, err := b.eng.StartRun(ctx, store.DefaultTenant, engine.StartRequest{Workflow: "steps", Input: b.input})
		if err != nil {
			return err
		}
		ids[i] = run.ID
	}
	for _, id := range ids {
		done, err := b.eng.AwaitRun(ctx, store.DefaultTenant, id)
		if err != nil {
			return err
		}
		if done.Status != store.StatusCompleted {
			return fmt.Errorf("run %s ended %s", id, done.Status)
		}
	}
	return nil
}

func (b *bench) latency(ctx context.Context, n int) ([]time.Duration, error) {
	lats := make([]time.Duration, 0, n)
	for range n {
		d, err := b.one(ctx)
		if err != nil {
			return nil, err
		}
		lats = append(lats, d)
	}
	return lats, nil
}

func pct(sorted []time.Duration, p float64) time.Duration {
	return sorted[int(float64(len(sorted)-1)*p)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// startCPUProfile profiles this process into path until the returned func is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// databaseURL is database db on the benchmark's Postgres.
func (o options) databaseURL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", o.pgPort, db)
}

func ensureDatabase(ctx context.Context, o options) error {
	db := o.db
	conn, err := pgx.Connect(ctx, o.databaseURL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", db).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize())
	return err
}

func resetSchema(ctx context.Context, url, schema string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	return err
}

// txCounter counts the engine's transactions as the client sends them: each statement sent
// alone is one (autocommit), and so is each batch (an implicit transaction). The hot path has
// no explicit transactions. pg_stat_database would count them too, but backends report to it
// up to 10 s late.
type txCounter struct{ n atomic.Int64 }

func (c *txCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *txCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *txCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *txCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (c *txCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
