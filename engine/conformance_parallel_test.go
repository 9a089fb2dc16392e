package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// The parallel scenarios (abi/ABI.md §4.18): the parallel workflow of examples/wasm/*, fanned
// out into three branches and joined every way. Only the languages whose SDK has parallel_run
// run them (scenarioLangs): a language's fixture joins by adding its name there.
//
// What is left out of a transcript, because it depends on which branch a host happened to end
// first: the index of the first branch to complete (checked to be a completed one), and the
// end of a branch that the join may have cancelled before or after it ended (under first and
// a failing all: checked to be failed or cancelled). Everything else, the branches' outputs
// and errors and every journal, is compared.
func init() {
	langs := []string{"go", "extism-go", "tinygo", "assemblyscript", "rust", "extism-as"}
	for _, name := range []string{"ParallelAllComplete", "ParallelAllFails", "ParallelAllSettled", "ParallelFirst", "ParallelCrashAndReplay", "ParallelReplayChecksTheFork"} {
		scenarioLangs[name] = langs
	}
	conformanceScenarios = append(conformanceScenarios,
		conformanceScenario{"ParallelAllComplete", func(t *testing.T, h *harness, st store.Store) transcript {
			return parallelCase(t, h, st, h.start("parallel", map[string]any{"n": 3, "join": "all"}).ID, `{"sum":5}`)
		}},
		conformanceScenario{"ParallelAllFails", func(t *testing.T, h *harness, st store.Store) transcript {
			// Branch 1 fails for good: the join fails with branch_failed at once, the parent
			// fails with it, and the branches still running are cancelled.
			run := h.start("parallel", map[string]any{"n": 3, "join": "all", "fail": []int{1}})
			return parallelCase(t, h, st, run.ID, "")
		}},
		conformanceScenario{"ParallelAllSettled", func(t *testing.T, h *harness, st store.Store) transcript {
			run := h.start("parallel", map[string]any{"n": 3, "join": "allSettled", "fail": []int{1}})
			return parallelCase(t, h, st, run.ID, `{"sum":4}`)
		}},
		conformanceScenario{"ParallelFirst", func(t *testing.T, h *harness, st store.Store) transcript {
			// Only branch 1 can complete: it is first, the others failed or were cancelled.
			run := h.start("parallel", map[string]any{"n": 3, "join": "first", "fail": []int{0, 2}})
			return parallelCase(t, h, st, run.ID, `{"sum":1}`)
		}},
		conformanceScenario{"ParallelCrashAndReplay", func(t *testing.T, h *harness, st store.Store) transcript {
			// The fork's transaction fails once (as if the host died before it committed: no
			// branch, no step) and so does the first end of a run written with its step (a
			// branch's host dying after its step ran): the parent forks on its next activation,
			// the branch runs its step again from its copied journal; the transcript is the
			// one without crashes, and no branch was created twice.
			faulty := &forkFaults{Store: st}
			eng, err := engine.New(engine.Config{Store: faulty, Runtime: runtimeForTests(t), LeaseFor: 3 * time.Second,
				PollInterval: time.Second, Logger: slog.New(slog.NewJSONHandler(h.logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer eng.Stop()
			run := h.start("parallel", map[string]any{"n": 3, "join": "all"})
			tr := parallelCase(t, h, st, run.ID, `{"sum":5}`)
			if faulty.forks.Load() < 2 || faulty.ends.Load() < 2 {
				t.Fatalf("%d forks and %d ends tried: the faults were not injected", faulty.forks.Load(), faulty.ends.Load())
			}
			return tr
		}},
		conformanceScenario{"ParallelReplayChecksTheFork", func(t *testing.T, h *harness, st store.Store) transcript {
			// The parallel step keeps the request it forked, and a replay that reaches it asking
			// another number of branches or another join is nondeterministic: here a restart
			// that keeps the step and gives the workflow an input that asks otherwise (the
			// workflow takes n and join from its input), as changed code would.
			run := h.start("parallel", map[string]any{"n": 2, "join": "all"})
			tr := parallelCase(t, h, st, run.ID, `{"sum":1}`)
			var kept abi.Parallel
			if err := json.Unmarshal(h.steps(run.ID)[0].Match, &kept); err != nil || kept != (abi.Parallel{Branches: 2, Join: abi.JoinAll, MaxConcurrent: 2}) {
				t.Fatalf("the fan step keeps the request %s (%v), want the one forked, defaults filled in", h.steps(run.ID)[0].Match, err)
			}
			for _, c := range []struct{ input, message string }{
				{`{"n":3,"join":"all"}`, `parallel "fan": the journal forked 2 branches joined "all" but the workflow asks 3 joined "all"`},
				{`{"n":2,"join":"allSettled"}`, `parallel "fan": the journal forked 2 branches joined "all" but the workflow asks 2 joined "allSettled"`},
			} {
				again, err := h.engine.RestartRun(context.Background(), store.DefaultTenant, engine.RestartRequest{RunID: run.ID, FromStep: "sum", Input: json.RawMessage(c.input)})
				if err != nil {
					t.Fatal(err)
				}
				r := h.await(again.ID, settle)
				if r.Status != store.StatusNondeterministic || r.Error == nil || !strings.Contains(r.Error.Message, c.message) {
					t.Fatalf("restarted with %s: %s %+v, want nondeterministic: %s", c.input, r.Status, r.Error, c.message)
				}
				if kids := h.children(st, again.ID); len(kids) != 0 {
					t.Fatalf("restarted with %s: %d branches forked again", c.input, len(kids))
				}
				tr.Chain = append(tr.Chain, fmt.Sprintf("restarted with %s: %s %s", c.input, r.Status, errorString(r.Error)))
			}
			// The same input replays the kept step and goes on.
			same, err := h.engine.RestartRun(context.Background(), store.DefaultTenant, engine.RestartRequest{RunID: run.ID, FromStep: "sum"})
			if err != nil {
				t.Fatal(err)
			}
			if r := h.await(same.ID, settle); r.Status != store.StatusCompleted || decode[map[string]any](t, r.Output)["sum"] != float64(1) {
				t.Fatalf("restarted with its own input: %s %s %+v", r.Status, r.Output, r.Error)
			}
			return tr
		}},
	)
}

// forkFaults fails the first ForkBranches and the first CommitAndFinish.
type forkFaults struct {
	store.Store
	forks, ends atomic.Int32
}

func (f *forkFaults) ForkBranches(ctx context.Context, l store.Lease, held *store.Step, s store.Step, fk store.Fork, leaseFor time.Duration) (store.Step, []string, error) {
	if f.forks.Add(1) == 1 {
		return store.Step{}, nil, errInjected
	}
	return f.Store.ForkBranches(ctx, l, held, s, fk, leaseFor)
}

func (f *forkFaults) CommitAndFinish(ctx context.Context, l store.Lease, s store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) error {
	if f.ends.Add(1) == 1 {
		return errInjected
	}
	return f.Store.CommitAndFinish(ctx, l, s, status, output, info, guestLog)
}

// parallelCase awaits the parallel run runID and its branches and checks what every language
// must agree on: the branches are the run's children fan[i], each started once with the run's
// input and the parent's journal before the fork; a completed run's sum is wantSum. It returns
// the run's transcript with its branches' in Chain, left out what a race decides.
func parallelCase(t *testing.T, h *harness, st store.Store, runID, wantSum string) transcript {
	t.Helper()
	r := h.await(runID, settle)
	var in struct {
		N    int    `json:"n"`
		Join string `json:"join"`
		Fail []int  `json:"fail"`
	}
	if err := json.Unmarshal(r.Input, &in); err != nil {
		t.Fatal(err)
	}
	tr := h.transcript(r)
	kids := h.children(st, runID)
	if len(kids) != in.N {
		t.Fatalf("%d children, want %d branches", len(kids), in.N)
	}
	// Created in one transaction, the branches are as old as each other: in branch order here.
	byKey := map[string]store.ChildRef{}
	for _, k := range kids {
		byKey[k.Link.ParentKey] = k
	}
	for i := range kids {
		kids[i] = byKey[store.BranchKey("fan", i)]
	}
	racy := func(i int) bool { // a branch the join may have cancelled
		return in.Join == abi.JoinFirst && slices.Contains(in.Fail, i) || in.Join == abi.JoinAll && len(in.Fail) > 0 && !slices.Contains(in.Fail, i)
	}
	for i, k := range kids {
		if k.Link.ParentKey != store.BranchKey("fan", i) || k.Link.ParentClose != abi.ParentCloseCancel || k.Workflow != "parallel" {
			t.Fatalf("branch %d's link: %+v", i, k)
		}
		b := h.await(k.RunID, settle)
		if b.IdempotencyKey != runID+":"+store.BranchKey("fan", i) || string(b.Input) != string(r.Input) {
			t.Fatalf("branch %d: id %q, input %s", i, b.IdempotencyKey, b.Input)
		}
		btr := h.transcript(b)
		if len(btr.Steps) == 0 || btr.Steps[0].Key != "fan" || btr.Steps[0].Kind != store.KindBranch {
			t.Fatalf("branch %d's journal does not start at its fork: %+v", i, btr)
		}
		if racy(i) {
			if b.Status == store.StatusCompleted && in.Join == abi.JoinFirst {
				t.Fatalf("branch %d completed but it always fails", i)
			}
			continue
		}
		tr.Chain = append(tr.Chain, fmt.Sprintf("branch %d: %s %v %s %s", i, b.Status, btr.Output, btr.Error, strings.Join(h.keys(b.ID), ",")))
	}
	if len(tr.Steps) == 0 || tr.Steps[0].Key != "fan" || tr.Steps[0].Kind != store.KindParallel {
		t.Fatalf("the run's journal does not start with its parallel step: %+v", tr)
	}
	if wantSum == "" {
		wantTranscript(t, tr, store.StatusFailed, "fan")
		if r.Error == nil || r.Error.Code != abi.CodeBranchFailed || tr.Steps[0].Status != store.StepFailed ||
			!strings.HasPrefix(tr.Steps[0].Error, fmt.Sprintf("branch_failed: branch %d ended failed: ", in.Fail[0])) {
			t.Fatalf("want the run failed with branch %d's branch_failed: %+v", in.Fail[0], tr)
		}
		return tr
	}
	wantTranscript(t, tr, store.StatusCompleted, "fan", "sum")
	if got := fmt.Sprint(tr.Steps[1].Output); got != fmt.Sprint(decodeAny(t, json.RawMessage(wantSum))) {
		t.Fatalf("the sum step's output %s, want %s", got, wantSum)
	}
	var res abi.ParallelResult
	if err := json.Unmarshal(h.steps(runID)[0].Output, &res); err != nil || len(res.Branches) != in.N {
		t.Fatalf("the fan step's result %s: %v", h.steps(runID)[0].Output, err)
	}
	if res.First < 0 || res.Branches[res.First].Status != abi.BranchCompleted {
		t.Fatalf("first %d is not a completed branch: %+v", res.First, res)
	}
	out := tr.Output.(map[string]any)
	if out["first"] != float64(res.First) {
		t.Fatalf("the run's first %v, the step's %d", out["first"], res.First)
	}
	out["first"] = "a completed branch"
	stepOut := tr.Steps[0].Output.(map[string]any)
	stepOut["first"] = "a completed branch"
	for i := range res.Branches {
		if racy(i) {
			if s := res.Branches[i].Status; s != abi.BranchFailed && s != abi.BranchCancelled {
				t.Fatalf("branch %d is %s, want failed or cancelled", i, s)
			}
			out["statuses"].([]any)[i] = "failed or cancelled"
			stepOut["branches"].([]any)[i] = "failed or cancelled"
		}
	}
	return tr
}
