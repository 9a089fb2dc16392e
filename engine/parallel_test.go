package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
)

// allInFlight is a server that answers no request until requests of n different branches
// (the branch query parameter) are in flight at once: a run whose branches each make one
// request completes only if they really run at the same time. A request sent again (an
// activation replayed after its host gave up on it) is the same branch, and one that ended is
// no longer in flight. A request that waits longer than giveUp is answered 503, so a serial
// engine fails the run instead of hanging the test.
func allInFlight(t *testing.T, n int, giveUp time.Duration) *httptest.Server {
	var (
		mu     sync.Mutex
		flying = map[string]int{}
		all    = make(chan struct{})
		once   sync.Once
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		branch := r.URL.Query().Get("branch")
		mu.Lock()
		if flying[branch]++; len(flying) == n {
			once.Do(func() { close(all) })
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			if flying[branch]--; flying[branch] == 0 {
				delete(flying, branch)
			}
			mu.Unlock()
		}()
		select {
		case <-all:
			fmt.Fprint(w, "ok")
		case <-time.After(giveUp):
			http.Error(w, "not every branch's request came", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Ten branches, each waiting on an outbound request that the server answers only once all
// ten are in flight: the run completes, so the branches ran at once, not one after another.
func TestParallelBranchesRunAtOnce(t *testing.T) {
	t.Parallel()
	const n = 10
	srv := allInFlight(t, n, time.Minute)
	h := setup(t, harnessOptions{concurrency: 2 * n, allowPrivateHosts: true,
		limits: store.Limits{AllowedHosts: []string{"http://" + strings.TrimPrefix(srv.URL, "http://")}}})
	h.deploy("capabilities.wasm", false)
	run := h.start("parallel-fetch", map[string]any{"n": n, "url": srv.URL + "/slow"})
	r := h.await(run.ID, 2*time.Minute)
	if r.Status != store.StatusCompleted {
		t.Fatalf("run %s: %+v\n%s", r.Status, r.Error, h.logs.String())
	}
	var out struct{ Statuses []int }
	if err := json.Unmarshal(r.Output, &out); err != nil || len(out.Statuses) != n {
		t.Fatalf("output %s: %v", r.Output, err)
	}
	for i, s := range out.Statuses {
		if s != http.StatusOK {
			t.Fatalf("branch %d's status %d", i, s)
		}
	}
}

// maxConcurrent bounds the branches that run at once: with a bound of 2 below the 3 the
// server waits for, no branch is ever answered before it gives up, and the run fails with
// branch_failed; with the bound at 3 the same run completes.
func TestParallelMaxConcurrentHoldsTheRest(t *testing.T) {
	t.Parallel()
	srv := allInFlight(t, 3, 3*time.Second)
	h := setup(t, harnessOptions{concurrency: 8, allowPrivateHosts: true,
		limits: store.Limits{AllowedHosts: []string{"http://" + strings.TrimPrefix(srv.URL, "http://")}}})
	h.deploy("capabilities.wasm", false)
	bounded := h.await(h.start("parallel-fetch", map[string]any{"n": 3, "url": srv.URL + "/a", "maxConcurrent": 2}).ID, time.Minute)
	if bounded.Status != store.StatusFailed || bounded.Error == nil || bounded.Error.Code != "branch_failed" {
		t.Fatalf("bounded to 2: %s %+v, want branch_failed\n%s", bounded.Status, bounded.Error, h.logs.String())
	}
	kids, err := h.store.ChildrenOf(context.Background(), store.DefaultTenant, bounded.ID)
	if err != nil || len(kids) != 3 {
		t.Fatalf("children %+v %v", kids, err)
	}
	for _, k := range kids {
		if k.Link.ParentKey == "fetch-all[2]" {
			// The third was held until the join was decided, then ended without running.
			if b := h.await(k.RunID, time.Minute); b.Status != store.StatusCancelled || b.Activations > 1 {
				t.Fatalf("the held branch: %s after %d activations, want cancelled, never run", b.Status, b.Activations)
			}
		}
	}
}

// BenchmarkParallelTenBranchesOfOneSecond is the wall time of a run whose ten branches each
// wait one second on an outbound request: about one second when they run at once.
func BenchmarkParallelTenBranchesOfOneSecond(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	h := setup(b, harnessOptions{concurrency: 32, allowPrivateHosts: true,
		limits: store.Limits{AllowedHosts: []string{"http://" + strings.TrimPrefix(srv.URL, "http://")}}})
	h.deploy("capabilities.wasm", false)
	in, _ := json.Marshal(map[string]any{"n": 10, "url": srv.URL + "/second"})
	b.ResetTimer()
	for range b.N {
		r, err := h.engine.StartAndAwait(context.Background(), store.DefaultTenant, engine.StartRequest{Workflow: "parallel-fetch", Input: in})
		if err != nil || r.Status != store.StatusCompleted {
			b.Fatalf("run %+v: %v", r, err)
		}
	}
}

// The parent's cancellation reaches it at its parallel step, which answers it (cancelled), and
// is passed to the branches, which all end; the parent ends cancelled.
func TestParallelParentCancelReachesTheBranches(t *testing.T) {
	t.Parallel()
	srv := allInFlight(t, 4, 5*time.Second) // three branches: never all answered
	h := setup(t, harnessOptions{concurrency: 8, allowPrivateHosts: true,
		limits: store.Limits{AllowedHosts: []string{"http://" + strings.TrimPrefix(srv.URL, "http://")}}})
	h.deploy("capabilities.wasm", false)
	run := h.start("parallel-fetch", map[string]any{"n": 3, "url": srv.URL + "/held"})
	h.awaitStep(run.ID, "fetch-all", store.StepWaiting, settle)
	if _, err := h.engine.CancelRun(context.Background(), store.DefaultTenant, run.ID, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	r := h.await(run.ID, time.Minute)
	steps := h.steps(run.ID)
	if r.Status != store.StatusCancelled || len(steps) != 1 || steps[0].Status != store.StepCancelled || steps[0].Kind != store.KindParallel {
		t.Fatalf("parent %s, journal %s; want cancelled at its parallel step", r.Status, journalText(steps))
	}
	kids, err := h.store.ChildrenOf(context.Background(), store.DefaultTenant, run.ID)
	if err != nil || len(kids) != 3 {
		t.Fatalf("children %+v %v", kids, err)
	}
	for _, k := range kids {
		if b := h.await(k.RunID, time.Minute); !b.Status.Terminal() || b.CancelRequestedAt == nil && b.Status != store.StatusCancelled {
			t.Fatalf("branch %s: %s, cancel asked %v; want it ended by the parent's cancel", k.Link.ParentKey, b.Status, b.CancelRequestedAt)
		}
	}
}

// A dry replay (the upgrade gate's check) compares a parallel step's request as a live pass
// does: the journal of a run that forked two branches replays on its own input, and diverges
// at the step on an input that asks for three.
func TestDryReplayChecksAParallelStepsRequest(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOptions{})
	h.deploy("examples.wasm", false)
	parent, replay := finishedRun(t, h, "parallel", map[string]any{"n": 2})
	if rep := dryReplay(t, "examples.wasm", replay); rep.Verdict != engine.ReplayCompatible || !rep.Ended {
		t.Fatalf("its own input: %+v, want compatible", rep)
	}
	// A branch's journal (the parent's entries before the fork, then its branch entry) replays
	// too: the call answers BRANCH and the branch ends as it did.
	kids, err := h.store.ChildrenOf(context.Background(), store.DefaultTenant, parent.ID)
	if err != nil || len(kids) != 2 {
		t.Fatalf("branches %+v %v", kids, err)
	}
	branch := h.await(kids[0].RunID, settle)
	rep := dryReplay(t, "examples.wasm", engine.Replay{Workflow: "parallel", Input: branch.Input, RunID: branch.ID, CreatedAt: branch.CreatedAt, Journal: h.steps(branch.ID)})
	if rep.Verdict != engine.ReplayCompatible || !rep.Ended || !jsonEqual(t, rep.Output, branch.Output) {
		t.Fatalf("a branch's journal: %+v, want compatible, ended with %s", rep, branch.Output)
	}
	replay.Input = json.RawMessage(`{"n":3}`)
	rep = dryReplay(t, "examples.wasm", replay)
	d := rep.Divergence
	if rep.Verdict != engine.ReplayDiverged || d == nil || d.Seq != 0 || d.Expected.Key != "fan" || d.Reached == nil || d.Reached.Kind != store.KindParallel ||
		!strings.Contains(d.Message, `the journal forked 2 branches joined "all" but the workflow asks 3 joined "all"`) {
		t.Fatalf("another number of branches: %+v (divergence %+v), want diverged at fan", rep, d)
	}
	// A journal given to a dry replay is untrusted: a request that is not one is a divergence
	// that says so, not a fault of the host.
	replay.Input = json.RawMessage(`{"n":2}`)
	for _, bad := range []string{`[1,2]`, `"all"`, `{"branches":"two"}`} {
		replay.Journal[0].Match = json.RawMessage(bad)
		rep = dryReplay(t, "examples.wasm", replay)
		if d := rep.Divergence; rep.Verdict != engine.ReplayDiverged || d == nil || !strings.Contains(d.Message, "cannot be read") {
			t.Fatalf("request %s: %+v (divergence %+v), want diverged: cannot be read", bad, rep, d)
		}
	}
}

// A query of a run holding a parallel step replays it: the parent waiting at its join is
// answered at the parallel step, and a branch at the step its callback is running, past its
// own branch entry. The query names no handler the workflow has, so each answer is
// ErrUnknownQuery; before dry passes took parallel journals, both were refused as invalid.
func TestAQueryReplaysParallelSteps(t *testing.T) {
	t.Parallel()
	// Two branches, each in its step, on a request the server holds until the test ends.
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // first: the server's Close waits for its handlers
	h := setup(t, harnessOptions{concurrency: 8, allowPrivateHosts: true,
		limits: store.Limits{AllowedHosts: []string{"http://" + strings.TrimPrefix(srv.URL, "http://")}}})
	h.deploy("capabilities.wasm", false)
	run := h.start("parallel-fetch", map[string]any{"n": 2, "url": srv.URL + "/held"})
	ctx := context.Background()
	var kids []store.ChildRef
	testenv.Await(t, settle, func() error {
		var err error
		if kids, err = h.store.ChildrenOf(ctx, store.DefaultTenant, run.ID); err != nil || len(kids) != 2 {
			return fmt.Errorf("branches %d %v", len(kids), err)
		}
		return nil
	})
	h.awaitStep(run.ID, "fetch-all", store.StepWaiting, settle)
	if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, run.ID, "nope", nil); !errors.Is(err, engine.ErrUnknownQuery) {
		t.Fatalf("a query of the parent waiting at its join: %v, want ErrUnknownQuery", err)
	}
	if _, err := h.engine.QueryRun(ctx, store.DefaultTenant, kids[0].RunID, "nope", nil); !errors.Is(err, engine.ErrUnknownQuery) {
		t.Fatalf("a query of a branch: %v, want ErrUnknownQuery", err)
	}
}
