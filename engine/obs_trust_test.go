package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// TestRunsByStateGauge: runs that wait and sleep show in wfhost_runs by state while no
// activation runs (wfhost_activations_in_flight is 0), and every state of the default tenant
// is served, at 0, before any run exists.
func TestRunsByStateGauge(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	first := series(o.scrape())
	for _, s := range store.RunStates {
		k := fmt.Sprintf("wfhost_runs{state=%s,tenant=default}", s)
		if v, ok := first[k]; !ok || v != 0 {
			t.Errorf("first scrape: %s = %v (present %v), want 0", k, v, ok)
		}
	}
	if v := first[`wfhost_build_info{goversion=`+goVersionLabel(first)+`,version=devel}`]; v != 1 {
		t.Errorf("wfhost_build_info: want 1 with version=devel, scrape has %v", keysWith(first, "wfhost_build_info"))
	}

	const waiting, sleeping = 4, 2
	for i := range waiting {
		r := o.start("onboarding", map[string]any{"email": fmt.Sprintf("w%d@example.com", i), "delayMs": 1, "verifyTimeoutMs": 600000})
		o.awaitStep(r.ID, "await-verify", store.StepWaiting, settle)
	}
	for i := range sleeping {
		r := o.start("onboarding", map[string]any{"email": fmt.Sprintf("s%d@example.com", i), "delayMs": 3600000})
		o.awaitStep(r.ID, "welcome-delay", store.StepSleeping, settle)
	}
	want := map[store.RunState]float64{store.StateWaiting: waiting, store.StateSleeping: sleeping, store.StateQueued: 0, store.StateRunning: 0, store.StatePaused: 0}
	testenv.Await(t, settle, func() error {
		got := o.quietScrape()
		for s, n := range want {
			if k := fmt.Sprintf("wfhost_runs{state=%s,tenant=default}", s); got[k] != n {
				return fmt.Errorf("%s = %v, want %v", k, got[k], n)
			}
		}
		if k := "wfhost_activations_in_flight{tenant=default,workflow=onboarding}"; got[k] != 0 {
			return fmt.Errorf("%s = %v, want 0", k, got[k])
		}
		return nil
	})
}

// goVersionLabel is the goversion label of the scrape's wfhost_build_info, "" without one.
func goVersionLabel(got map[string]float64) string {
	for _, k := range keysWith(got, "wfhost_build_info{") {
		if m := regexp.MustCompile(`goversion=([^,}]+)`).FindStringSubmatch(k); m != nil {
			return m[1]
		}
	}
	return ""
}

func keysWith(got map[string]float64, prefix string) []string {
	var out []string
	for k := range got {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// TestDashboardHasDataFromFirstScrape: every query of the Grafana dashboard either names only
// metrics a fresh daemon serves in its first scrape (before any run) or falls back to
// `or vector(0)`, so no panel shows "no data" on a new install.
func TestDashboardHasDataFromFirstScrape(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	served := map[string]bool{}
	for name := range o.scrape() {
		served[name] = true
	}
	b, err := os.ReadFile(filepath.Join(testenv.Root(), "deploy/grafana/wfhost.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	metric := regexp.MustCompile(`\bwfhost_[a-z_]+`)
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			queries++
			if strings.Contains(tg.Expr, "or vector(0)") {
				continue
			}
			for _, name := range metric.FindAllString(tg.Expr, -1) {
				base := name
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					base = strings.TrimSuffix(base, suffix)
				}
				if !served[base] && !served[name] {
					t.Errorf("panel %q: %s is not in a fresh daemon's first scrape, and the query has no `or vector(0)`", p.Title, name)
				}
			}
		}
	}
	if queries < 20 {
		t.Fatalf("read only %d queries from the dashboard", queries)
	}
}

// runRecords are the JSON log records of the harness's engine about run with message msg.
func runRecords(h *harness, runID, msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(h.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["run"] == runID && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// TestRunStartAndEndAreLogged: every run's start is one INFO record; a completed run's end is
// INFO, a failed run's WARN, and a run cancelled while it waits (no activation running) has
// its end logged too.
func TestRunStartAndEndAreLogged(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	ok := h.start("steps", map[string]any{"n": 1})
	failed := h.start("order-saga", map[string]any{"orderId": "o-1", "amount": 7, "failPayment": true})
	waits := h.start("onboarding", map[string]any{"email": "log@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	h.await(ok.ID, settle)
	h.await(failed.ID, settle)
	h.awaitStep(waits.ID, "await-verify", store.StepWaiting, settle)
	if _, err := h.engine.TerminateRun(t.Context(), store.DefaultTenant, waits.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		run, msg, level, status string
	}{
		{ok.ID, "run started", "INFO", ""},
		{failed.ID, "run started", "INFO", ""},
		{waits.ID, "run started", "INFO", ""},
		{ok.ID, "run ended", "INFO", "completed"},
		{failed.ID, "run ended", "WARN", "failed"},
		{waits.ID, "run ended", "INFO", "cancelled"},
	} {
		recs := runRecords(h, c.run, c.msg)
		if len(recs) != 1 {
			t.Errorf("run %s: %d %q records, want 1", c.run, len(recs), c.msg)
			continue
		}
		r := recs[0]
		if r["level"] != c.level || (c.status != "" && r["status"] != c.status) || r["tenant"] != store.DefaultTenant || r["workflow"] == nil {
			t.Errorf("run %s: %q record %v, want level %s status %q with tenant and workflow", c.run, c.msg, r, c.level, c.status)
		}
	}
}

// TestGuestStackTraceIsOneRecord: a Go guest's fatal error with its goroutine dump, a dozen
// lines of stderr, is one WARN record, not one per line.
func TestGuestStackTraceIsOneRecord(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("hostile.wasm", false)
	run := h.start("trap", nil)
	if r := h.await(run.ID, settle); r.Status != store.StatusFailed {
		t.Fatalf("trap: %s, want failed", r.Status)
	}
	var stderr []map[string]any
	for _, line := range strings.Split(h.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["run"] == run.ID && rec["stream"] == "stderr" {
			stderr = append(stderr, rec)
		}
	}
	if len(stderr) != 1 {
		t.Fatalf("%d stderr records, want the trace as 1:\n%v", len(stderr), stderr)
	}
	msg, _ := stderr[0]["msg"].(string)
	if stderr[0]["level"] != "WARN" || stderr[0]["stack_trace"] != true || !strings.HasPrefix(msg, "fatal error: ") ||
		!strings.Contains(msg, "\ngoroutine 1 [") || strings.Count(msg, "\n") < 3 {
		t.Fatalf("the trace's record: %v", stderr[0])
	}
}

// TestBroadcastLinksTheRunsItResolves: a broadcast's span, in the caller's trace, links the
// root span of each run whose wait it resolved.
func TestBroadcastLinksTheRunsItResolves(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	run := o.start("onboarding", map[string]any{"email": "bc@example.com", "delayMs": 1, "verifyTimeoutMs": 600000})
	o.awaitStep(run.ID, "await-verify", store.StepWaiting, settle)
	caller := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), caller)
	res, err := o.engine.Broadcast(ctx, store.DefaultTenant, engine.BroadcastRequest{Event: "verify", Payload: json.RawMessage(`{"userId":"` + o.userID(run.ID) + `"}`)})
	if err != nil || res.Resolved != 1 {
		t.Fatalf("broadcast: resolved %d, %v", res.Resolved, err)
	}
	var root, broadcast trace.SpanContext
	var links []sdktrace.Link
	for _, s := range o.spans.GetSpans() {
		switch {
		case s.Name == "workflow.run" && s.SpanContext.TraceID().String() == engine.TraceIDOf(run.ID):
			root = s.SpanContext
		case s.Name == "workflow.signal" && s.SpanContext.TraceID() == caller.TraceID():
			broadcast, links = s.SpanContext, s.Links
		}
	}
	if !root.IsValid() || !broadcast.IsValid() {
		t.Fatalf("root %v, broadcast span %v: want both exported", root, broadcast)
	}
	if len(links) != 1 || links[0].SpanContext.TraceID() != root.TraceID() || links[0].SpanContext.SpanID() != root.SpanID() {
		t.Fatalf("the broadcast's links %v, want the run's root %v", links, root)
	}
}

// TestContinuedRunsCountAsStarted: each run a continue-as-new creates is a started run: counted
// in wfhost_runs_started_total and logged "run started", and its predecessor's end is still
// logged "run continued as a new run".
func TestContinuedRunsCountAsStarted(t *testing.T) {
	t.Parallel()
	o := setupObs(t)
	first := o.start("ticker", map[string]any{"turns": 3, "ticks": 1})
	chain := o.awaitChain(first.ID, settle)
	if len(chain) != 3 || chain[2].Status != store.StatusCompleted {
		t.Fatalf("a chain of %d runs, the last %s; want 3, completed", len(chain), chain[len(chain)-1].Status)
	}
	got := o.quietScrape()
	if v := got["wfhost_runs_started_total{tenant=default,workflow=ticker}"]; v != 3 {
		t.Fatalf("wfhost_runs_started_total = %v for a chain of 3, want 3", v)
	}
	if v := got["wfhost_runs_ended_total{status=continued,tenant=default,workflow=ticker}"]; v != 2 {
		t.Fatalf("continued ends = %v, want 2", v)
	}
	for i, r := range chain {
		if n := len(runRecords(o.harness, r.ID, "run started")); n != 1 {
			t.Errorf("run %d of the chain: %d \"run started\" records, want 1", i, n)
		}
		if i < 2 && len(runRecords(o.harness, r.ID, "run continued as a new run")) != 1 {
			t.Errorf("run %d of the chain: no \"run continued as a new run\" record", i)
		}
	}
}
