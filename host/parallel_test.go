package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// RunParallel answers every fork BRANCH, as the engine answers a branch's own pass at the call
// that forked it, so that the tests reach branch_done.
func (h *memHandler) RunParallel(_ context.Context, name string, req abi.Parallel) (host.Reply, error) {
	h.key(name)
	h.forks = append(h.forks, req)
	return host.Reply{Status: abi.StatusBranch, Data: []byte(`{"branch":1}`)}, nil
}

// parallel_run and branch_done misused: each misuse ends the pass with a clear abi_violation
// naming the function and the fault (ABI.md §4.18).
func TestParallelRefusesAbuse(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	cases := map[string]string{
		"parallel-not-json":      `parallel_run "p": the request is not a Parallel JSON`,
		"parallel-zero":          "branches 0: want 1 to 64",
		"parallel-65":            "branches 65: want 1 to 64",
		"parallel-bad-join":      `join "x": want "all", "first" or "allSettled"`,
		"parallel-bad-max":       "maxConcurrent 3: want 0 (the host's bound) to branches (2)",
		"parallel-invalid-utf8":  "the request is not valid UTF-8",
		"parallel-empty-name":    "parallel_run: step name is empty",
		"parallel-out-of-bounds": "parallel_run: request at",
		"parallel-huge":          "parallel_run: request is 4294967295 bytes",
		"parallel-in-step":       "parallel_run called inside a step callback",
		"branch-done-outside":    "branch_done called in a pass that parallel_run did not answer BRANCH",
		"branch-done-in-step":    "branch_done called inside a step callback",
		"branch-bad-outcome":     "branch_done: outcome 7",
		"branch-output-not-json": "complete: output is not valid JSON",
		"branch-out-of-bounds":   "complete: output at",
		"branch-complete":        "complete called in a branch's pass; a branch ends with branch_done",
		"branch-continue":        "continue_as_new called in a branch's pass",
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := activate(t, m, "abuse", "run", `{"case":"`+name+`"}`, newMemHandler(), host.Limits{})
			var ge *host.GuestError
			if !errors.As(err, &ge) || ge.Info.Code != abi.CodeABIViolation || !strings.Contains(ge.Info.Message, want) {
				t.Fatalf("result %+v, error %v; want abi_violation containing %q", res, err, want)
			}
		})
	}
	if res, err := activate(t, m, "echo", "after", `{"still":"fine"}`, newMemHandler(), host.Limits{}); err != nil || string(res.Output) != `{"still":"fine"}` {
		t.Fatalf("echo after the abuse: %s %v", res.Output, err)
	}
}

// A branch's output is held to the rules of a run's: one over the output limit fails the
// branch with payload_too_large, one no store keeps with not_storable.
func TestBranchDoneRefusesBadOutputs(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	for name, code := range map[string]string{"branch-huge": abi.CodePayloadTooLarge, "branch-not-storable": abi.CodeNotStorable} {
		res, err := activate(t, m, "abuse", "run", `{"case":"`+name+`"}`, newMemHandler(), host.Limits{})
		var ge *host.GuestError
		if !errors.As(err, &ge) || ge.Info.Code != code {
			t.Fatalf("%s: result %+v, error %v; want %s", name, res, err, code)
		}
	}
}

// branch_done ends the pass in the call: the branch's output is the first call's, the code
// after it (a second branch_done, the workflow's own return) never runs; an error outcome
// ends the branch with the guest's error.
func TestBranchDoneEndsThePass(t *testing.T) {
	t.Parallel()
	m := load(t, "hostile.wasm")
	h := newMemHandler()
	res, err := activate(t, m, "abuse", "run", `{"case":"branch-done-twice"}`, h, host.Limits{})
	if err != nil || string(res.Output) != `{"first":true}` || res.Error != nil {
		t.Fatalf("result %s %+v, error %v; want the first branch_done's output", res.Output, res.Error, err)
	}
	if len(h.forks) != 1 || h.forks[0] != (abi.Parallel{Branches: 2, Join: abi.JoinAll, MaxConcurrent: 2}) {
		t.Fatalf("forks %+v; want one of 2 branches, join all, bound 2", h.forks)
	}
	res, err = activate(t, m, "abuse", "run", `{"case":"branch-fails"}`, newMemHandler(), host.Limits{})
	if err != nil || res.Error == nil || res.Error.Code != "branch_boom" || res.Error.Message != "branch 1 fails" {
		b, _ := json.Marshal(res.Error)
		t.Fatalf("result error %s, error %v; want the branch's own error", b, err)
	}
}
