package engine

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// TestStepLabelsAreBounded: a guest that invents a step name per call adds at most
// maxStepLabels series per workflow; repetitions of one name share its series.
func TestStepLabelsAreBounded(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, Config{Clock: clock.Real{}})
	run := store.Run{TenantID: "t", Workflow: "wf"}
	for i := range 10 {
		key := "poll"
		if i > 0 {
			key = fmt.Sprintf("poll#%d", i)
		}
		m.stepDone(run, key, 0)
	}
	for i := range 1000 {
		m.stepRetry(run, fmt.Sprintf("invented-%d", i))
	}
	if got := count(t, m.stepDuration); got != 1 {
		t.Fatalf("poll, poll#1 ... made %d series, want 1", got)
	}
	if got := count(t, m.stepRetries); got != maxStepLabels {
		t.Fatalf("1000 invented step names made %d series, want %d", got, maxStepLabels)
	}
	// "poll" holds one of the 64 slots, so 63 invented names got their own series.
	if got := value(t, m.stepRetries.WithLabelValues("t", "wf", otherLabel)); got != 1000-(maxStepLabels-1) {
		t.Fatalf("other = %v, want %d", got, 1000-(maxStepLabels-1))
	}
	// Another workflow has its own bound.
	m.stepRetry(store.Run{TenantID: "t", Workflow: "wf2"}, "invented-999")
	if got := value(t, m.stepRetries.WithLabelValues("t", "wf2", "invented-999")); got != 1 {
		t.Fatalf("wf2's first step name counted %v under its own label, want 1", got)
	}
	// So has a workflow of the same name in another tenant, whose steps carry its tenant.
	m.stepRetry(store.Run{TenantID: "u", Workflow: "wf"}, "invented-999")
	if got := value(t, m.stepRetries.WithLabelValues("u", "wf", "invented-999")); got != 1 {
		t.Fatalf("tenant u's step counted %v under its own tenant label, want 1", got)
	}
}

// TestWorkflowAndEventLabelsAreBounded: a tenant deploying workflow after workflow, or runs
// waiting on invented event names, are bounded too.
func TestWorkflowAndEventLabelsAreBounded(t *testing.T) {
	t.Parallel()
	m := newMetrics(prometheus.NewRegistry(), Config{Clock: clock.Real{}})
	for i := range maxWorkflowLabels + 50 {
		m.runStarted(store.Run{TenantID: "greedy", Workflow: fmt.Sprintf("wf-%d", i)})
	}
	m.runStarted(store.Run{TenantID: "modest", Workflow: "wf-1"})
	if got := count(t, m.runsStarted); got != maxWorkflowLabels+1+1 {
		t.Fatalf("%d series, want %d for greedy (other included) and 1 for modest", got, maxWorkflowLabels+2)
	}
	if got := value(t, m.runsStarted.WithLabelValues("greedy", otherLabel)); got != 50 {
		t.Fatalf("greedy's other = %v, want 50", got)
	}
	run := store.Run{TenantID: "t", Workflow: "wf"}
	for i := range 200 {
		m.signalled(run, fmt.Sprintf("ev-%d", i))
	}
	if got := count(t, m.signals); got != maxEventLabels+1 {
		t.Fatalf("%d signal series, want %d", got, maxEventLabels+1)
	}
}

// count is the number of series c has.
func count(t *testing.T, c prometheus.Collector) int {
	t.Helper()
	ch := make(chan prometheus.Metric, 1024)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}

// value is the value of a counter.
func value(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
