package engine

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// Label bounds: names a guest or a tenant chooses become label values only up to these counts
// per scope, so a guest that invents step or event names, or a tenant that deploys workflow
// after workflow, cannot explode the metrics' cardinality; later names count as "other".
const (
	maxWorkflowLabels = 100 // per tenant
	maxStepLabels     = 64  // per workflow
	maxEventLabels    = 64  // per workflow
)

// otherLabel is the label value of every name past its bound.
const otherLabel = "other"

// metrics are the engine's Prometheus collectors, registered on the Registerer the caller
// injects (never the global default). Safe for concurrent use.
type metrics struct {
	runsStarted  *prometheus.CounterVec
	runsEnded    *prometheus.CounterVec
	runsInFlight *prometheus.GaugeVec
	runDuration  *prometheus.HistogramVec
	stepDuration *prometheus.HistogramVec
	stepRetries  *prometheus.CounterVec
	signals      *prometheus.CounterVec
	// timerLateness is how long after its due time a sleep, a wait's timeout or a retry
	// backoff was acted on: claim delay plus replay, the figure an operator promises.
	timerLateness *prometheus.HistogramVec
	activations   *prometheus.CounterVec
	activationSec *prometheus.HistogramVec
	// scheduleFires counts the fire times schedules handled, by outcome (schedules.go).
	scheduleFires *prometheus.CounterVec
	// retentionSwept counts runs the retention sweeper deleted.
	retentionSwept prometheus.Counter
	// broadcastsPruned counts broadcast events the sweeper deleted after their window.
	broadcastsPruned prometheus.Counter

	wasmCompile     *prometheus.HistogramVec
	wasmInstantiate *prometheus.HistogramVec
	wasmMemory      *prometheus.HistogramVec
	wasmDiscarded   *prometheus.CounterVec
	guestFaults     *prometheus.CounterVec
	// stalled counts runs failed because they could not move on (store_refused, no_progress).
	runsStalled *prometheus.CounterVec
	// guestLogsDropped counts guest log records past an activation's bound.
	guestLogsDropped *prometheus.CounterVec

	storeCommit *prometheus.HistogramVec
	claimBatch  prometheus.Histogram

	// Parked passes (parking.go): how many parked, how each was resumed (timer, claim) and
	// why each evicted one was (memory, cancelled, not_resumable, superseded, shutdown).
	parks         prometheus.Counter
	parkResumes   *prometheus.CounterVec
	parkEvictions *prometheus.CounterVec
	// Durable snapshots (snapshots.go): taken, their bytes, and how each claim of a run with
	// one went (restored, or replayed from the top).
	snapshots        prometheus.Counter
	snapshotBytes    prometheus.Counter
	snapshotRestores *prometheus.CounterVec
	snapshotFailures prometheus.Counter

	// hooks are the webhook dispatcher's (hookmetrics.go).
	hooks hookMetrics

	workflows, steps, events labelBound

	clock     clock.Clock // activation and store latencies are measured on it
	runningMu sync.Mutex
	running   map[string]time.Time // run id -> when its activation on this host began
}

func newMetrics(reg prometheus.Registerer, cfg Config) *metrics {
	clk := cfg.Clock
	m := &metrics{
		clock: clk,
		runsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_runs_started_total", Help: "Runs created.",
		}, []string{"tenant", "workflow"}),
		runsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_runs_ended_total", Help: "Runs that ended or stopped, by status (completed, failed, cancelled, continued, nondeterministic).",
		}, []string{"tenant", "workflow", "status"}),
		runsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "wfhost_activations_in_flight", Help: "Activations running on this host now (a sleeping or waiting run has none: see wfhost_runs).",
		}, []string{"tenant", "workflow"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_run_duration_seconds", Help: "Time from a run's creation to its final status.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 12),
		}, []string{"tenant", "workflow"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_step_duration_seconds", Help: "Time a step callback took, commit included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
		}, []string{"tenant", "workflow", "step"}),
		stepRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_step_retries_total", Help: "Failed step attempts that were scheduled to retry.",
		}, []string{"tenant", "workflow", "step"}),
		signals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_signals_total", Help: "Events (signals and broadcasts) that resolved a run's wait.",
		}, []string{"tenant", "workflow", "event"}),
		timerLateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_timer_lateness_seconds", Help: "How long after its due time a timer was acted on, by kind (sleep, wait_timeout, retry).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"kind"}),
		activations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_activations_total", Help: "Activations by how they ended.",
		}, []string{"tenant", "outcome"}),
		activationSec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_activation_duration_seconds", Help: "Wall time of one activation.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
		}, []string{"tenant"}),
		scheduleFires: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_schedule_fires_total", Help: "Fire times of schedules handled by this host, by outcome: started, skipped (the last run live), buffered, missed (past the catch-up window), failed (the start was refused).",
		}, []string{"outcome"}),
		retentionSwept: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wfhost_retention_swept_total", Help: "Terminal runs deleted because their retention passed.",
		}),
		broadcastsPruned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wfhost_broadcast_events_pruned_total", Help: "Broadcast events deleted because their window passed.",
		}),
		wasmCompile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_wasm_compile_seconds", Help: "Time spent compiling a module (deploys, and activations that missed the compiled-code cache).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"tenant"}),
		wasmInstantiate: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_wasm_instantiate_seconds", Help: "Time from a compiled module to an instance ready to run, per activation (0: an idle instance was reused).",
			Buckets: prometheus.ExponentialBuckets(0.00001, 4, 10),
		}, []string{"tenant"}),
		wasmMemory: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_wasm_memory_bytes", Help: "An instance's linear memory when its activation ended.",
			Buckets: prometheus.ExponentialBuckets(64<<10, 4, 8), // 64 KiB .. 1 GiB
		}, []string{"tenant"}),
		wasmDiscarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_wasm_instances_discarded_total",
			Help: "Instances closed after their activation instead of kept idle for the next, by reason: faulted, closed, not_poolable, memory_grown, pool_full, interrupted (host.Stats.Discarded). Each costs a later activation a fresh instance.",
		}, []string{"tenant", "reason"}),
		guestFaults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_wasm_guest_faults_total", Help: "Runs ended by the guest's fault, by cause (trap, deadline_exceeded, abi_violation, ...).",
		}, []string{"tenant", "cause"}),
		runsStalled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_runs_stalled_total",
			Help: "Runs failed because they could not move on, by cause: the store refused a value they wrote (store_refused), or they were activated FaultLimit times in a row without journal progress (no_progress).",
		}, []string{"tenant", "cause"}),
		guestLogsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_guest_log_records_dropped_total", Help: "Guest log records dropped because an activation wrote more than its bound.",
		}, []string{"tenant"}),
		storeCommit: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_store_commit_seconds", Help: "Latency of an activation's fenced writes as the engine sees them (group commit included), by operation.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"op"}),
		claimBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "wfhost_store_claim_batch_size", Help: "Runs one claim took.",
			Buckets: []float64{0, 1, 2, 4, 8, 16, 32, 64, 128},
		}),
		hooks:     newHookMetrics(),
		workflows: newLabelBound(maxWorkflowLabels),
		steps:     newLabelBound(maxStepLabels),
		events:    newLabelBound(maxEventLabels),
		running:   make(map[string]time.Time),
	}
	m.parks = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wfhost_parks_total", Help: "Passes kept parked, their guest blocked in the host call, when their run suspended.",
	})
	m.parkResumes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wfhost_park_resumes_total", Help: "Parked passes resumed without a replay, by what resumed them (timer, claim).",
	}, []string{"by"})
	m.parkEvictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wfhost_park_evictions_total", Help: "Parked passes unwound instead of resumed (their runs replay when next due), by reason (memory, cancelled, not_resumable, superseded, shutdown).",
	}, []string{"reason"})
	m.snapshots = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wfhost_snapshots_total", Help: "Durable snapshots of a guest taken at a step boundary (every --snapshot-every journal entries).",
	})
	m.snapshotBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wfhost_snapshot_bytes_total", Help: "Bytes of the durable snapshots taken, as stored (compressed, sealed).",
	})
	m.snapshotRestores = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wfhost_snapshot_restores_total", Help: "Activations of runs with a durable snapshot, by outcome: restored (the journal replayed from the snapshot on), replayed (from the top: other code, or the restore failed).",
	}, []string{"outcome"})
	m.snapshotFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wfhost_snapshot_failures_total", Help: "Durable snapshots that could not be taken (the guest's call stack past the unwind buffer): the run is handed back and takes no more snapshots on this host, nor restores one here.",
	})
	oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "wfhost_activation_oldest_seconds", Help: "Age of the longest-running activation on this host (0: none); a stuck run shows here.",
	}, m.oldestActivation)
	if reg != nil {
		reg.MustRegister(m.runsStarted, m.runsEnded, m.runsInFlight, m.runDuration,
			m.stepDuration, m.stepRetries, m.signals, m.timerLateness, m.activations, m.activationSec,
			m.scheduleFires, m.retentionSwept, m.broadcastsPruned, m.wasmCompile, m.wasmInstantiate, m.wasmMemory, m.wasmDiscarded, m.guestFaults, m.runsStalled, m.guestLogsDropped,
			m.storeCommit, m.claimBatch, m.parks, m.parkResumes, m.parkEvictions,
			m.snapshots, m.snapshotBytes, m.snapshotRestores, m.snapshotFailures, oldest,
			buildInfo(cfg.Version), newRunStates(cfg.Store, clk, cfg.RunStatesInterval),
			newHookOutbox(cfg.Store, clk, cfg.RunStatesInterval))
		reg.MustRegister(m.hooks.collectors()...)
	}
	m.zeroFixedLabels()
	return m
}

// zeroFixedLabels makes the series whose label values are a fixed set, and the default
// tenant's, exist at zero before their first use, so a dashboard panel or an alert over them
// has data from the first scrape: a series that appears only at its first event makes rate()
// and increase() miss that event, and a panel shows "no data" where it means none happened.
func (m *metrics) zeroFixedLabels() {
	for _, kind := range []string{"sleep", "wait_timeout", "retry"} {
		m.timerLateness.WithLabelValues(kind)
	}
	for _, op := range []string{"commit_step", "suspend", "commit_and_suspend", "finish", "commit_and_finish", "finish_and_continue", "reach_wait", "park_wait", "timeout_wait"} {
		m.storeCommit.WithLabelValues(op)
	}
	for _, by := range []string{"timer", "claim"} {
		m.parkResumes.WithLabelValues(by)
	}
	for _, reason := range []string{"memory", "cancelled", "not_resumable", "superseded", "shutdown"} {
		m.parkEvictions.WithLabelValues(reason)
	}
	for _, outcome := range []string{"restored", "replayed"} {
		m.snapshotRestores.WithLabelValues(outcome)
	}
	m.tenantSeen(store.DefaultTenant)
}

// tenantSeen makes the tenant's series with fixed label sets exist at zero (zeroFixedLabels).
// Called for the default tenant at once and for others at their first run; each is cheap and
// idempotent.
func (m *metrics) tenantSeen(tenant string) {
	for cause := range faultCauses {
		m.guestFaults.WithLabelValues(tenant, cause)
	}
	for _, cause := range []string{abi.CodeStoreRefused, abi.CodeNoProgress} {
		m.runsStalled.WithLabelValues(tenant, cause)
	}
	for _, reason := range host.DiscardReasons {
		m.wasmDiscarded.WithLabelValues(tenant, reason)
	}
	m.guestLogsDropped.WithLabelValues(tenant)
	m.hooks.tenantSeen(tenant)
}

// labelBound hands out at most max distinct label values per scope.
type labelBound struct {
	max  int
	mu   sync.Mutex
	sets map[string]map[string]bool
}

func newLabelBound(max int) labelBound {
	return labelBound{max: max, sets: make(map[string]map[string]bool)}
}

func (b *labelBound) label(scope, name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	set := b.sets[scope]
	if set == nil {
		set = make(map[string]bool)
		b.sets[scope] = set
	}
	if set[name] {
		return name
	}
	if len(set) >= b.max {
		return otherLabel
	}
	set[name] = true
	return name
}

// workflowLabel is the workflow's label value within its tenant's bound.
func (m *metrics) workflowLabel(tenant, workflow string) string {
	return m.workflows.label(tenant, workflow)
}

// stepLabel is the step's name without its repetition suffix, or "other" past the bound.
func (m *metrics) stepLabel(workflow, key string) string {
	name, _, _ := strings.Cut(key, abi.SuffixSep)
	return m.steps.label(workflow, name)
}

func (m *metrics) runStarted(run store.Run) {
	m.tenantSeen(run.TenantID)
	m.runsStarted.WithLabelValues(run.TenantID, m.workflowLabel(run.TenantID, run.Workflow)).Inc()
}

func (m *metrics) stepDone(run store.Run, key string, d time.Duration) {
	wf := m.workflowLabel(run.TenantID, run.Workflow)
	m.stepDuration.WithLabelValues(run.TenantID, wf, m.stepLabel(run.TenantID+"/"+wf, key)).Observe(d.Seconds())
}

func (m *metrics) stepRetry(run store.Run, key string) {
	wf := m.workflowLabel(run.TenantID, run.Workflow)
	m.stepRetries.WithLabelValues(run.TenantID, wf, m.stepLabel(run.TenantID+"/"+wf, key)).Inc()
}

func (m *metrics) signalled(run store.Run, event string) {
	wf := m.workflowLabel(run.TenantID, run.Workflow)
	m.signals.WithLabelValues(run.TenantID, wf, m.events.label(run.TenantID+"/"+wf, event)).Inc()
}

// timerDue records how late a timer due at was acted on at now.
func (m *metrics) timerDue(kind string, due, now time.Time) {
	m.timerLateness.WithLabelValues(kind).Observe(max(now.Sub(due), 0).Seconds())
}

func (m *metrics) runEnded(run store.Run, status store.RunStatus, at time.Time) {
	wf := m.workflowLabel(run.TenantID, run.Workflow)
	m.runsEnded.WithLabelValues(run.TenantID, wf, string(status)).Inc()
	m.runDuration.WithLabelValues(run.TenantID, wf).Observe(max(at.Sub(run.CreatedAt), 0).Seconds())
}

// activationBegan counts an activation of run as running until the returned func is called.
func (m *metrics) activationBegan(run store.Run) (done func()) {
	inFlight := m.runsInFlight.WithLabelValues(run.TenantID, m.workflowLabel(run.TenantID, run.Workflow))
	inFlight.Inc()
	began := m.clock.Now()
	m.runningMu.Lock()
	m.running[run.ID] = began
	m.runningMu.Unlock()
	return func() {
		inFlight.Dec()
		m.runningMu.Lock()
		delete(m.running, run.ID)
		m.runningMu.Unlock()
		m.activationSec.WithLabelValues(run.TenantID).Observe(clock.Since(m.clock, began).Seconds())
	}
}

func (m *metrics) oldestActivation() float64 {
	m.runningMu.Lock()
	defer m.runningMu.Unlock()
	var oldest time.Time
	for _, t := range m.running {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return clock.Since(m.clock, oldest).Seconds()
}

// wasmStats records what an activation cost the sandbox.
func (m *metrics) wasmStats(tenant string, s host.Stats) {
	if s.Compile > 0 {
		m.wasmCompile.WithLabelValues(tenant).Observe(s.Compile.Seconds())
	}
	// A memory size says the activation had an instance; an instance reused from the pool
	// cost nothing to make, and counting it as 0 shows how often the pool served.
	if s.MemoryBytes > 0 {
		m.wasmInstantiate.WithLabelValues(tenant).Observe(s.Instantiate.Seconds())
		m.wasmMemory.WithLabelValues(tenant).Observe(float64(s.MemoryBytes))
	}
	if s.Discarded != "" {
		m.wasmDiscarded.WithLabelValues(tenant, s.Discarded).Inc()
	}
}

// faultCauses are the codes that guest faults carry; any other counts as "other", since only
// the host and the engine set these codes and a new one must not go unbounded.
var faultCauses = map[string]bool{
	abi.CodeTrap: true, abi.CodeDeadline: true, abi.CodeABIViolation: true, abi.CodePayloadTooLarge: true,
	abi.CodeNondeterministic: true, abi.CodeNoResult: true, abi.CodeUnknownWorkflow: true, abi.CodeStepLimit: true,
}

// stalled counts a run failed with cause abi.CodeStoreRefused or abi.CodeNoProgress.
func (m *metrics) stalled(run store.Run, cause string) {
	m.runsStalled.WithLabelValues(run.TenantID, cause).Inc()
}

func (m *metrics) guestFault(tenant, code string) {
	if !faultCauses[code] {
		code = otherLabel
	}
	m.guestFaults.WithLabelValues(tenant, code).Inc()
}

// observedStore times the store calls an activation waits on and sizes claims; every other
// call goes straight through.
type observedStore struct {
	store.Store
	m   *metrics
	acq *acquisitions
}

func (s observedStore) since(op string, began time.Time) {
	s.m.storeCommit.WithLabelValues(op).Observe(clock.Since(s.m.clock, began).Seconds())
}

func (s observedStore) ClaimRuns(ctx context.Context, p store.ClaimParams) ([]store.Claim, error) {
	cs, err := s.Store.ClaimRuns(ctx, p)
	if err == nil {
		s.m.claimBatch.Observe(float64(len(cs)))
	}
	return cs, err
}

// CreateLeasedRun records the lease of a run this host starts until its activation registers,
// and notes a start whose outcome is unknown (handback.go).
func (s observedStore) CreateLeasedRun(ctx context.Context, r store.NewRun, to store.LeaseTo) (store.Claim, bool, error) {
	if to.Owner == "" {
		return s.Store.CreateLeasedRun(ctx, r, to)
	}
	s.acq.mu.RLock()
	defer s.acq.mu.RUnlock()
	c, created, err := s.Store.CreateLeasedRun(ctx, r, to)
	switch {
	case err != nil:
		s.acq.failed(err)
	case c.Lease.Epoch > 0:
		s.acq.add(c.Run.ID)
	}
	return c, created, err
}

func (s observedStore) CommitStep(ctx context.Context, l store.Lease, row store.Step, leaseFor time.Duration) error {
	defer s.since("commit_step", s.m.clock.Now())
	return s.Store.CommitStep(ctx, l, row, leaseFor)
}

func (s observedStore) Suspend(ctx context.Context, l store.Lease, row *store.Step, wakeAt *time.Time) error {
	defer s.since("suspend", s.m.clock.Now())
	return s.Store.Suspend(ctx, l, row, wakeAt)
}

func (s observedStore) CommitAndSuspend(ctx context.Context, l store.Lease, held, row store.Step, wakeAt *time.Time) error {
	defer s.since("commit_and_suspend", s.m.clock.Now())
	return s.Store.CommitAndSuspend(ctx, l, held, row, wakeAt)
}

func (s observedStore) Finish(ctx context.Context, l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	defer s.since("finish", s.m.clock.Now())
	return s.Store.Finish(ctx, l, status, output, info, guestLog)
}

func (s observedStore) CommitAndFinish(ctx context.Context, l store.Lease, row store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	defer s.since("commit_and_finish", s.m.clock.Now())
	return s.Store.CommitAndFinish(ctx, l, row, status, output, info, guestLog)
}

func (s observedStore) FinishAndContinue(ctx context.Context, l store.Lease, held *store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, next store.NewRun, guestLog []store.GuestLogLine) (store.Run, error) {
	defer s.since("finish_and_continue", s.m.clock.Now())
	return s.Store.FinishAndContinue(ctx, l, held, status, output, info, next, guestLog)
}

func (s observedStore) ReachWait(ctx context.Context, l store.Lease, row store.Step, leaseFor time.Duration) (*store.Step, error) {
	defer s.since("reach_wait", s.m.clock.Now())
	return s.Store.ReachWait(ctx, l, row, leaseFor)
}

func (s observedStore) ParkWait(ctx context.Context, l store.Lease, key string, wakeAt *time.Time, leaseFor time.Duration) (*store.Step, error) {
	defer s.since("park_wait", s.m.clock.Now())
	return s.Store.ParkWait(ctx, l, key, wakeAt, leaseFor)
}

func (s observedStore) TimeoutWait(ctx context.Context, l store.Lease, key string, at time.Time, leaseFor time.Duration) (store.Step, error) {
	defer s.since("timeout_wait", s.m.clock.Now())
	return s.Store.TimeoutWait(ctx, l, key, at, leaseFor)
}
