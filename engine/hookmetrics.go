package engine

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// Hook metrics: what this host's dispatcher did with each webhook attempt (counted, timed),
// and the outbox as the store holds it (hookOutbox, the same on every host). A start hook is
// made by the store in the transaction that ends its run, where the engine sees no outcome, so
// the attempt metrics count webhooks; a start's outcome is its delivery row (GET
// /v1/hooks/deliveries) and its run is counted by wfhost_runs_started_total like any other.

// Webhook attempt outcomes (wfhost_hook_deliveries_total's outcome label).
const (
	hookDelivered = "delivered" // a 2xx
	hookRetried   = "retried"   // failed, tried again after the backoff
	hookFailed    = "failed"    // failed for good: refused by the policy, or the attempts spent
)

// hookMetrics are the dispatcher's collectors. Safe for concurrent use.
type hookMetrics struct {
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	latency  *prometheus.HistogramVec
}

func newHookMetrics() hookMetrics {
	return hookMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfhost_hook_deliveries_total",
			Help: "Webhook delivery attempts this host made, by tenant, kind (webhook) and outcome: delivered (a 2xx), retried (failed, tried again after the backoff), failed (refused by the outbound policy, or the attempts spent).",
		}, []string{"tenant", "kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_hook_attempt_duration_seconds", Help: "Time one webhook attempt took, from signing to the receiver's answer (or the error), whatever its outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"tenant"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfhost_hook_delivery_latency_seconds", Help: "Time from a run's end to its webhook's delivery (the 2xx), retries included.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"tenant"}),
	}
}

func (h hookMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{h.attempts, h.duration, h.latency}
}

// tenantSeen makes the tenant's webhook series exist at zero (metrics.zeroFixedLabels).
func (h hookMetrics) tenantSeen(tenant string) {
	for _, outcome := range []string{hookDelivered, hookRetried, hookFailed} {
		h.attempts.WithLabelValues(tenant, store.HookKindWebhook, outcome)
	}
}

// attempt records one recorded webhook attempt of dl, which took took and ended at end.
func (h hookMetrics) attempt(dl store.HookDelivery, outcome string, took time.Duration, end time.Time) {
	h.attempts.WithLabelValues(dl.TenantID, dl.Kind, outcome).Inc()
	h.duration.WithLabelValues(dl.TenantID).Observe(took.Seconds())
	if outcome == hookDelivered && !dl.CreatedAt.IsZero() {
		h.latency.WithLabelValues(dl.TenantID).Observe(max(end.Sub(dl.CreatedAt), 0).Seconds())
	}
}

// hookOutbox serves the outbox gauges: pending webhook deliveries by tenant, and how long the
// most overdue one has waited past its due time, over the whole store, counted at most once
// per interval as wfhost_runs is (storeCount). The count reads the pending rows only
// (store.CountPendingDeliveries).
type hookOutbox struct {
	pending, overdue *prometheus.Desc
	clock            clock.Clock
	counts           *storeCount[store.PendingDeliveries]
}

func newHookOutbox(st store.Store, clk clock.Clock, interval time.Duration) *hookOutbox {
	return &hookOutbox{
		pending: prometheus.NewDesc("wfhost_hook_outbox_pending",
			"Webhook deliveries pending in the store (to be sent, or tried again after a failure) by tenant, counted at most once per --run-states-interval.",
			[]string{"tenant"}, nil),
		overdue: prometheus.NewDesc("wfhost_hook_outbox_overdue_seconds",
			"How long the tenant's most overdue pending webhook delivery has been due without a dispatcher taking it (0: none is overdue); it grows when no host dispatches.",
			[]string{"tenant"}, nil),
		clock: clk,
		counts: &storeCount[store.PendingDeliveries]{clock: clk, interval: interval,
			count: func(ctx context.Context) (map[string]store.PendingDeliveries, error) {
				rows, err := st.CountPendingDeliveries(ctx)
				if err != nil {
					return nil, err
				}
				out := make(map[string]store.PendingDeliveries, len(rows))
				for _, p := range rows {
					out[p.TenantID] = p
				}
				return out, nil
			}},
	}
}

func (o *hookOutbox) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.pending
	ch <- o.overdue
}

// Collect serves every tenant counted (the default tenant's too, and at zero those that had
// deliveries pending). An overdue age is measured now, so it grows between counts as it does
// in the store.
func (o *hookOutbox) Collect(ch chan<- prometheus.Metric) {
	counts, now := o.counts.current(), o.clock.Now()
	for tenant, p := range counts {
		overdue := 0.0
		if p.Pending > 0 && now.After(p.EarliestDue) {
			overdue = now.Sub(p.EarliestDue).Seconds()
		}
		ch <- prometheus.MustNewConstMetric(o.pending, prometheus.GaugeValue, float64(p.Pending), tenant)
		ch <- prometheus.MustNewConstMetric(o.overdue, prometheus.GaugeValue, overdue, tenant)
	}
}
