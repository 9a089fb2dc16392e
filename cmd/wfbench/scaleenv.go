package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// scaleEnv is one scenario's world: a fresh store (a reset schema, or a new temporary data
// directory), a runtime and an engine with the fixture deployed to every tenant it names.
// Each scenario gets its own, so one's rows never slow the next one's queries.
type scaleEnv struct {
	o       options
	st      store.Store
	tx      *txCounter // Postgres only: the statements the engine sent
	rt      *host.Runtime
	eng     *engine.Engine
	wasm    []byte
	limits  store.Limits
	dataDir string // embedded only
	// metrics has the collectors of the engine newEngine started last.
	metrics *prometheus.Registry
}

// newScaleEnv opens the store named by -store and starts an engine on it. limits are the
// engine's tenant defaults (engine.Config.TenantDefaults).
func newScaleEnv(ctx context.Context, o options, wasm []byte, limits store.Limits, leaseFor time.Duration, tenants ...string) (*scaleEnv, error) {
	e := &scaleEnv{o: o, wasm: wasm, limits: limits, tx: &txCounter{}}
	switch o.store {
	case "postgres":
		if err := ensureDatabase(ctx, o); err != nil {
			return nil, err
		}
		url := o.databaseURL(o.db)
		if err := resetSchema(ctx, url, "wfbench"); err != nil {
			return nil, err
		}
		st, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: "wfbench", MaxConns: o.pool, Tracer: e.tx})
		if err != nil {
			return nil, err
		}
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, err
		}
		e.st = st
	case "embedded":
		dir, err := os.MkdirTemp("", "wfbench-embedded-")
		if err != nil {
			return nil, err
		}
		e.dataDir = dir
		st, err := embedded.Open(ctx, embedded.Config{Dir: dir})
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		e.st = st
	default:
		return nil, fmt.Errorf("-store %q: want postgres or embedded", o.store)
	}
	if len(tenants) == 0 {
		tenants = []string{store.DefaultTenant}
	}
	for _, t := range tenants {
		if err := e.st.EnsureTenant(ctx, t); err != nil {
			e.close(ctx)
			return nil, err
		}
	}
	rt, eng, err := e.newEngine(ctx, leaseFor)
	if err != nil {
		e.close(ctx)
		return nil, err
	}
	e.rt, e.eng = rt, eng
	for _, t := range tenants {
		if _, err := eng.Deploy(ctx, t, wasm, false); err != nil {
			e.close(ctx)
			return nil, err
		}
	}
	return e, nil
}

// newEngine starts an engine with a runtime of its own on the env's store: a new wazero
// runtime has no compiled module in memory and no pooled instance, as after a restart (the
// compile cache on disk is shared, as a restarted daemon's is).
func (e *scaleEnv) newEngine(ctx context.Context, leaseFor time.Duration) (*host.Runtime, *engine.Engine, error) {
	cacheDir := filepath.Join(os.TempDir(), "wfbench-compile-cache")
	snapshots, err := e.o.snapshotConfig()
	if err != nil {
		return nil, nil, err
	}
	rt, err := host.NewRuntime(ctx, host.Config{CacheDir: cacheDir, MaxIdleInstances: e.o.c, TenantCores: e.o.tenantCores, Snapshots: snapshots})
	if err != nil {
		return nil, nil, err
	}
	var parkMemory int64 // the engine's default
	switch {
	case e.o.parkMemoryMiB == 0:
		parkMemory = -1
	case e.o.parkMemoryMiB > 0:
		parkMemory = int64(e.o.parkMemoryMiB) << 20
	}
	e.metrics = prometheus.NewRegistry()
	eng, err := engine.New(engine.Config{
		Store: e.st, Runtime: rt, Concurrency: e.o.c, PollInterval: 10 * time.Second, LeaseFor: leaseFor, ParkMemory: parkMemory,
		Metrics:        e.metrics,
		SnapshotEvery:  e.o.snapshotEvery,
		Logger:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		TenantDefaults: e.limits,
	})
	if err != nil {
		rt.Close(ctx)
		return nil, nil, err
	}
	if err := eng.Start(ctx); err != nil {
		rt.Close(ctx)
		return nil, nil, err
	}
	return rt, eng, nil
}

func (e *scaleEnv) close(ctx context.Context) {
	if e.eng != nil {
		e.eng.Stop()
	}
	if e.rt != nil {
		e.rt.Close(ctx)
	}
	if e.st != nil {
		e.st.Close()
	}
	if e.dataDir != "" {
		os.RemoveAll(e.dataDir)
	}
}

// pgCPU reads the Postgres CPU used so far (nil on the embedded store, whose SQLite work is
// the process's own and so in the host CPU figures).
func (e *scaleEnv) pgCPU() map[int]float64 {
	if e.o.store != "postgres" {
		return nil
	}
	return postgresCPU(e.o.db)
}

// pgField is " name=value" on Postgres and "" on the embedded store, which has no server.
func (e *scaleEnv) pgField(name string, v float64) string {
	if e.o.store != "postgres" {
		return ""
	}
	return fmt.Sprintf(" %s=%.3f", name, v)
}

// result starts a RESULT line of the scale mode.
func (e *scaleEnv) result(scenario string) string {
	return fmt.Sprintf("RESULT peer=wfhost lang=%s mode=scale scenario=%s store=%s", e.o.lang, scenario, e.o.store)
}

// counts returns the tenant's runs of workflow by status.
func (e *scaleEnv) counts(ctx context.Context, tenant, workflow string) (map[store.RunStatus]int, error) {
	ws, err := e.st.ListWorkflows(ctx, tenant)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		if w.Name == workflow {
			return w.RunCounts, nil
		}
	}
	return map[store.RunStatus]int{}, nil
}

// waitCompleted polls until n runs of workflow have completed, failing fast on a failed run.
func (e *scaleEnv) waitCompleted(ctx context.Context, tenant, workflow string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := e.counts(ctx, tenant, workflow)
		if err != nil {
			return err
		}
		if bad := c[store.StatusFailed] + c[store.StatusNondeterministic] + c[store.StatusCancelled]; bad > 0 {
			return fmt.Errorf("%d runs of %s did not complete: %v", bad, workflow, c)
		}
		if c[store.StatusCompleted] >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %d completed runs of %s: %v after %s", n, workflow, c, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitAsleep polls until no live run is claimable before notBefore: every run started has
// reached its long sleep or wait and been suspended.
func (e *scaleEnv) waitAsleep(ctx context.Context, notBefore time.Time, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		at, ok, err := e.st.NextWakeup(ctx)
		if err != nil {
			return err
		}
		if !ok || at.After(notBefore) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runs still due at %s after %s", at.Format(time.RFC3339Nano), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startMany starts n runs with c callers, input(i) for the ith, and returns their ids in order.
func (e *scaleEnv) startMany(ctx context.Context, tenant, workflow string, n, c int, input func(i int) string) ([]string, error) {
	ids := make([]string, n)
	errs := make(chan error, c)
	next := make(chan int, c)
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range c {
		go func() {
			for i := range next {
				run, _, err := e.eng.StartRun(ctx, tenant, engine.StartRequest{Workflow: workflow, Input: []byte(input(i))})
				if err != nil {
					errs <- fmt.Errorf("start run %d of %s: %w", i, workflow, err)
					for range next { // let the feeder finish
					}
					return
				}
				ids[i] = run.ID
			}
			errs <- nil
		}()
	}
	var first error
	for range c {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return ids, first
}

// rssMB is the process's resident set (VmRSS), in MiB.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// intList parses "10,100,1000".
func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q: want positive integers separated by commas", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// snapshotConfig is the runtime's snapshot configuration from -wasm-opt and -snapshot-every,
// as the daemon's: on when wasm-opt is there.
func (o options) snapshotConfig() (host.SnapshotConfig, error) {
	if o.wasmOpt == "" || o.snapshotEvery < 0 {
		return host.SnapshotConfig{}, nil
	}
	path, err := exec.LookPath(o.wasmOpt)
	if err != nil {
		return host.SnapshotConfig{}, fmt.Errorf("-wasm-opt %q: %w (\"\" runs without snapshots)", o.wasmOpt, err)
	}
	return host.SnapshotConfig{WasmOpt: path}, nil
}

// metric sums a counter's values, or a histogram's observation counts, over all its labels, in
// the engine newEngine started last (0 when it has no such series).
func (e *scaleEnv) metric(name string) float64 {
	families, err := e.metrics.Gather()
	if err != nil {
		return 0
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			switch {
			case m.Counter != nil:
				total += m.GetCounter().GetValue()
			case m.Histogram != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return total
}
