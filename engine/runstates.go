package engine

import (
	"context"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// runStates is the wfhost_runs gauge: live runs by tenant and state (store.RunState), counted
// over the whole store at most once per interval (storeCount: a count reads every live run).
type runStates struct {
	desc   *prometheus.Desc
	counts *storeCount[map[store.RunState]int]
}

func newRunStates(st store.Store, clk clock.Clock, interval time.Duration) *runStates {
	return &runStates{
		desc: prometheus.NewDesc("wfhost_runs",
			"Live runs in the store by tenant and state (queued, running, waiting, sleeping, paused), counted at most once per --run-states-interval.",
			[]string{"tenant", "state"}, nil),
		counts: &storeCount[map[store.RunState]int]{clock: clk, interval: interval,
			count: func(ctx context.Context) (map[string]map[store.RunState]int, error) {
				rows, err := st.CountRunStates(ctx)
				if err != nil {
					return nil, err
				}
				out := map[string]map[store.RunState]int{}
				for _, c := range rows {
					if out[c.TenantID] == nil {
						out[c.TenantID] = make(map[store.RunState]int)
					}
					out[c.TenantID][c.State] += c.Runs
				}
				return out, nil
			}},
	}
}

func (r *runStates) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

// Collect serves every state of every tenant counted (the default tenant's too, with none), a
// state with no runs at 0.
func (r *runStates) Collect(ch chan<- prometheus.Metric) {
	for tenant, states := range r.counts.current() {
		for _, s := range store.RunStates {
			ch <- prometheus.MustNewConstMetric(r.desc, prometheus.GaugeValue, float64(states[s]), tenant, string(s))
		}
	}
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
