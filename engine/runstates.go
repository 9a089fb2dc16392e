package engine

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// runStatesTimeout bounds one count of the live runs: a scrape waits for it at most this long
// and then serves the last counts it has.
const runStatesTimeout = 5 * time.Second

// runStates is the wfhost_runs gauge: live runs by tenant and state (store.RunState), over the
// whole store, not this host. A count reads every live run, so it is made at most once per
// interval, whoever scrapes and however often: a scrape in between serves the last counts,
// and concurrent scrapes wait for one count rather than make one each. Safe for concurrent use.
type runStates struct {
	desc     *prometheus.Desc
	store    store.Store
	clock    clock.Clock
	interval time.Duration

	mu     sync.Mutex // held across a count, so concurrent scrapes share it
	at     time.Time  // when counts were made (zero: never)
	counts map[string]map[store.RunState]int
}

func newRunStates(st store.Store, clk clock.Clock, interval time.Duration) *runStates {
	return &runStates{
		desc: prometheus.NewDesc("wfhost_runs",
			"Live runs in the store by tenant and state (queued, running, waiting, sleeping, paused), counted at most once per --run-states-interval.",
			[]string{"tenant", "state"}, nil),
		store: st, clock: clk, interval: interval,
	}
}

func (r *runStates) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

// Collect serves every state of every tenant with live runs, and of the default tenant even
// with none, so a dashboard shows zeroes from the first scrape rather than no data.
func (r *runStates) Collect(ch chan<- prometheus.Metric) {
	for tenant, states := range r.current() {
		for _, s := range store.RunStates {
			ch <- prometheus.MustNewConstMetric(r.desc, prometheus.GaugeValue, float64(states[s]), tenant, string(s))
		}
	}
}

// current is the counts, made again when the last are older than the interval. A failed count
// keeps the last counts (and is tried again at the next scrape after the interval).
func (r *runStates) current() map[string]map[store.RunState]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	if r.at.IsZero() || now.Sub(r.at) >= r.interval {
		r.at = now
		ctx, cancel := context.WithTimeout(context.Background(), runStatesTimeout)
		rows, err := r.store.CountRunStates(ctx)
		cancel()
		if err == nil {
			// A tenant counted before stays, at zero, so its series end at 0 rather than stop.
			counts := map[string]map[store.RunState]int{store.DefaultTenant: {}}
			for tenant := range r.counts {
				counts[tenant] = make(map[store.RunState]int)
			}
			for _, c := range rows {
				if counts[c.TenantID] == nil {
					counts[c.TenantID] = make(map[store.RunState]int)
				}
				counts[c.TenantID][c.State] += c.Runs
			}
			r.counts = counts
		}
	}
	if r.counts == nil {
		return map[string]map[store.RunState]int{store.DefaultTenant: {}}
	}
	return r.counts
}

// buildInfo is the wfhost_build_info gauge: always 1, its labels this build's version and Go's.
func buildInfo(version string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "wfhost_build_info", Help: "Always 1; the labels name this build: version (a release, or devel-<commit>) and goversion.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}
