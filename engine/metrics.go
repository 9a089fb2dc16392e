package engine

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// maxStepLabels bounds the distinct step-name label values per workflow, so a guest that
// invents step names cannot explode the metrics' cardinality; later names count as "other".
const maxStepLabels = 64

// metrics are the engine's Prometheus collectors, registered on the Registerer the caller
// injects (never the global default).
type metrics struct {
	runsStarted   *prometheus.CounterVec
	runsCompleted *prometheus.CounterVec
	runsInFlight  *prometheus.GaugeVec
	runDuration   *prometheus.HistogramVec
	stepDuration  *prometheus.HistogramVec
	stepRetries   *prometheus.CounterVec
	activations   *prometheus.CounterVec
	activationSec *prometheus.HistogramVec
	// retentionSwept counts runs the retention sweeper deleted.
	retentionSwept prometheus.Counter

	mu    sync.Mutex
	steps map[string]map[string]bool // workflow -> step labels in use
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		runsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workflow_runs_started_total", Help: "Runs created.",
		}, []string{"tenant", "workflow"}),
		runsCompleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workflow_runs_completed_total", Help: "Runs that reached a final status, by status.",
		}, []string{"tenant", "workflow", "status"}),
		runsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workflow_runs_in_flight", Help: "Activations running on this host.",
		}, []string{"tenant", "workflow"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workflow_run_duration_seconds", Help: "Time from a run's creation to its final status.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 12),
		}, []string{"tenant", "workflow"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workflow_step_duration_seconds", Help: "Time a step callback took, commit included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
		}, []string{"workflow", "step"}),
		stepRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workflow_step_retries_total", Help: "Failed step attempts that were scheduled to retry.",
		}, []string{"workflow", "step"}),
		activations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_activations_total", Help: "Activations by how they ended.",
		}, []string{"tenant", "outcome"}),
		activationSec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_activation_duration_seconds", Help: "Wall time of one activation.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
		}, []string{"tenant"}),
		retentionSwept: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "workflow_retention_swept_total", Help: "Terminal runs deleted because their retention passed.",
		}),
		steps: make(map[string]map[string]bool),
	}
	if reg != nil {
		reg.MustRegister(m.runsStarted, m.runsCompleted, m.runsInFlight, m.runDuration,
			m.stepDuration, m.stepRetries, m.activations, m.activationSec, m.retentionSwept)
	}
	return m
}

// stepLabel is the step's name without its repetition suffix, or "other" past the bound.
func (m *metrics) stepLabel(workflow, key string) string {
	name, _, _ := strings.Cut(key, abi.SuffixSep)
	m.mu.Lock()
	defer m.mu.Unlock()
	set := m.steps[workflow]
	if set == nil {
		set = make(map[string]bool)
		m.steps[workflow] = set
	}
	if set[name] {
		return name
	}
	if len(set) >= maxStepLabels {
		return "other"
	}
	set[name] = true
	return name
}

func (m *metrics) stepDone(workflow, key string, d time.Duration) {
	m.stepDuration.WithLabelValues(workflow, m.stepLabel(workflow, key)).Observe(d.Seconds())
}

func (m *metrics) stepRetry(workflow, key string) {
	m.stepRetries.WithLabelValues(workflow, m.stepLabel(workflow, key)).Inc()
}

func (m *metrics) runEnded(run store.Run, status store.RunStatus) {
	m.runsCompleted.WithLabelValues(run.TenantID, run.Workflow, string(status)).Inc()
	m.runDuration.WithLabelValues(run.TenantID, run.Workflow).Observe(time.Since(run.CreatedAt).Seconds())
}
