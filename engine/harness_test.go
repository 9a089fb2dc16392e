package engine_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/envelope"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

func runtimeForTests(t testing.TB) *host.Runtime { return testenv.Runtime(t) }

func fixture(t testing.TB, name string) []byte { return testenv.Fixture(t, name) }

type harness struct {
	t      testing.TB
	schema string // the test's own Postgres schema
	store  *postgres.Store
	engine *engine.Engine
	logs   *logBuffer
}

type harnessOptions struct {
	limits      store.Limits
	concurrency int
	noStart     bool
	// wrapStore, when set, is what the engine gets instead of the store (h.store stays the
	// store itself): a store that fails or records some calls.
	wrapStore  func(store.Store) store.Store
	faultLimit int
	// parkMemory is engine.Config.ParkMemory (0: the default; negative: no parking).
	parkMemory int64
	// pollInterval is engine.Config.PollInterval (0: one second).
	pollInterval time.Duration
	// snapshotEvery, when set, runs the engine on a runtime that transforms modules for
	// durable snapshots (testenv.SnapshotRuntime), taking one every snapshotEvery entries.
	snapshotEvery int
	// journalWindow is engine.Config.JournalWindow (0: the default).
	journalWindow int
	// reservedSlots and tenantStarts are engine.Config's (0: the defaults), and
	// allowPrivateHosts lets guests reach a test server on the loopback.
	reservedSlots, tenantStarts int
	allowPrivateHosts           bool
	// metrics and tracerProvider, when set, receive the engine's metrics and spans.
	metrics        prometheus.Registerer
	tracerProvider trace.TracerProvider
	// runStatesInterval is engine.Config.RunStatesInterval (0: the default).
	runStatesInterval time.Duration
	// hookPoll and hookBackoff are engine.Config's (0: the defaults).
	hookPoll, hookBackoff time.Duration
	// secretKeys is engine.Config.SecretKeys: the keyring that seals tenant secrets and
	// webhook signing secrets (nil: none, as a Postgres daemon without --secrets-key-file).
	secretKeys *envelope.Keyring
}

// setup gives the test a migrated schema of its own, a started engine on it and the example
// modules deployed.
func setup(t testing.TB, opts harnessOptions) *harness {
	t.Helper()
	ctx := context.Background()
	schema := testenv.Schema(t, "wfhost_engine")
	st, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: schema, MaxConns: 6})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
		t.Fatalf("ensure tenant: %v", err)
	}
	logs := &logBuffer{}
	var engineStore store.Store = st
	if opts.wrapStore != nil {
		engineStore = opts.wrapStore(st)
	}
	rt := runtimeForTests(t)
	if opts.snapshotEvery > 0 {
		rt = testenv.SnapshotRuntime(t)
	}
	eng, err := engine.New(engine.Config{
		Store:             engineStore,
		Runtime:           rt,
		SnapshotEvery:     opts.snapshotEvery,
		JournalWindow:     opts.journalWindow,
		Logger:            slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Concurrency:       opts.concurrency,
		ReservedSlots:     opts.reservedSlots,
		TenantStarts:      opts.tenantStarts,
		AllowPrivateHosts: opts.allowPrivateHosts,
		LeaseFor:          3 * time.Second,
		PollInterval:      cmp.Or(opts.pollInterval, time.Second),
		TenantDefaults:    opts.limits,
		FaultLimit:        opts.faultLimit,
		ParkMemory:        opts.parkMemory,
		Metrics:           opts.metrics,
		TracerProvider:    opts.tracerProvider,
		RunStatesInterval: opts.runStatesInterval,
		HookPoll:          opts.hookPoll,
		HookBackoff:       opts.hookBackoff,
		SecretKeys:        opts.secretKeys,
	})
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	h := &harness{t: t, schema: schema, store: st, engine: eng, logs: logs}
	if !opts.noStart {
		if err := eng.Start(ctx); err != nil {
			t.Fatalf("start engine: %v", err)
		}
		t.Cleanup(eng.Stop)
	}
	return h
}

func (h *harness) deploy(name string, replace bool) engine.DeployResult {
	h.t.Helper()
	res, err := h.engine.Deploy(context.Background(), store.DefaultTenant, fixture(h.t, name), replace)
	if err != nil {
		h.t.Fatalf("deploy %s: %v", name, err)
	}
	return res
}

func (h *harness) start(workflow string, input any) store.Run {
	h.t.Helper()
	b, err := json.Marshal(input)
	if err != nil {
		h.t.Fatal(err)
	}
	run, _, err := h.engine.StartRun(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: workflow, Input: b})
	if err != nil {
		h.t.Fatalf("start %s: %v", workflow, err)
	}
	return run
}

// await waits until the run reaches one of the statuses, failing the test after timeout.
func (h *harness) await(runID string, timeout time.Duration, statuses ...store.RunStatus) store.Run {
	h.t.Helper()
	if len(statuses) == 0 {
		statuses = []store.RunStatus{store.StatusCompleted, store.StatusFailed, store.StatusCancelled, store.StatusContinued, store.StatusNondeterministic}
	}
	var run store.Run
	err := testenv.Poll(h.t, timeout, func() error {
		var err error
		if run, err = h.store.GetRun(context.Background(), store.DefaultTenant, runID); err != nil {
			h.t.Fatalf("get run: %v", err)
		}
		if !slices.Contains(statuses, run.Status) {
			return fmt.Errorf("run %s is %s, want one of %v (error %+v)", runID, run.Status, statuses, run.Error)
		}
		return nil
	})
	if err != nil {
		h.t.Fatalf("%v\nlogs:\n%s", err, h.logs.tail(4000))
	}
	return run
}

// awaitChain follows a run that continues as new or is retried to the run that ends its chain,
// awaiting each, and returns every run of the chain in order.
func (h *harness) awaitChain(runID string, timeout time.Duration) []store.Run {
	h.t.Helper()
	var chain []store.Run
	for id := runID; id != ""; {
		r := h.await(id, timeout)
		if len(chain) > 0 && r.ContinuedFrom != chain[len(chain)-1].ID {
			h.t.Fatalf("run %s continues %q, want %s", r.ID, r.ContinuedFrom, chain[len(chain)-1].ID)
		}
		chain = append(chain, r)
		id = r.ContinuedAs
		if len(chain) > 1000 {
			h.t.Fatalf("a chain of more than 1000 runs from %s", runID)
		}
	}
	return chain
}

// awaitStep waits until the run's journal has the step key in the given status.
func (h *harness) awaitStep(runID, key string, status store.StepStatus, timeout time.Duration) {
	h.t.Helper()
	testenv.Await(h.t, timeout, func() error {
		steps := h.steps(runID)
		for _, s := range steps {
			if s.Key == key && s.Status == status {
				return nil
			}
		}
		return fmt.Errorf("run %s: step %s is not %s; journal %s", runID, key, status, journalText(steps))
	})
}

func (h *harness) steps(runID string) []store.Step {
	h.t.Helper()
	steps, err := h.store.ListSteps(context.Background(), store.DefaultTenant, runID)
	if err != nil {
		h.t.Fatalf("steps: %v", err)
	}
	return steps
}

func (h *harness) keys(runID string) []string {
	var out []string
	for _, s := range h.steps(runID) {
		out = append(out, s.Key)
	}
	return out
}

func (h *harness) journalString(runID string) string { return journalText(h.steps(runID)) }

func journalText(steps []store.Step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "\n  %d %s %s %s attempt=%d out=%s err=%v", s.Seq, s.Kind, s.Key, s.Status, s.Attempt, s.Output, s.Error)
	}
	return b.String()
}

func wantKeys(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("journal keys = %v, want %v", got, want)
	}
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// logBuffer collects the engine's log output for assertions and failure messages.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) tail(n int) string {
	s := l.String()
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// setupBench is setup for benchmarks: the example modules deployed, 32 activations at once.
func setupBench(b *testing.B) *harness {
	h := setup(b, harnessOptions{concurrency: 32})
	h.deploy("examples.wasm", false)
	return h
}

// userID is the id the onboarding example's create-user step returned.
func (h *harness) userID(runID string) string {
	h.t.Helper()
	return decode[struct {
		ID string `json:"id"`
	}](h.t, h.steps(runID)[0].Output).ID
}

// embeddedEngine is an engine on a new embedded store opened with sc (its Dir a new temporary
// directory when empty), with the default tenant, cfg's Store and Runtime filled in (its Logger
// discarding when unset), modules deployed, and started; both are closed when t ends.
func embeddedEngine(t *testing.T, sc embedded.Config, cfg engine.Config, modules ...string) (*embedded.Store, *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	if sc.Dir == "" {
		sc.Dir = t.TempDir()
	}
	st, err := embedded.Open(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := st.EnsureTenant(ctx, store.DefaultTenant); err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Runtime = st, runtimeForTests(t)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modules {
		if _, err := eng.Deploy(ctx, store.DefaultTenant, fixture(t, m), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	return st, eng
}
