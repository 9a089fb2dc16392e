package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/host"
)

// parallelSDKFixtures are the example modules whose SDKs answer a BRANCH reply (ABI.md §4.18)
// by running the branch's function: the Rust and AssemblyScript SDKs and the Extism
// AssemblyScript helpers, each with the "parallel" example workflow.
var parallelSDKFixtures = []string{"examples_rust.wasm", "examples_as.wasm", "extism_as.wasm"}

// In a branch's pass (memHandler answers every fork BRANCH with branch 1) each SDK sends the
// request the workflow asked for (the host fills in its bound on concurrency), runs branch 1 only, and ends the pass with branch_done: the
// branch's output, or its step's error as the branch's error. The code after the call (the
// "sum" step, the workflow's own output) never runs in a branch.
func TestParallelSDKsRunTheirBranch(t *testing.T) {
	for _, fixture := range parallelSDKFixtures {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			m := load(t, fixture)

			h := newMemHandler()
			res, err := activate(t, m, "parallel", "r:fan[1]", `{"n":3,"join":"first"}`, h, host.Limits{})
			if err != nil || res.Error != nil || string(res.Output) != `{"sq":1}` {
				t.Fatalf("branch 1: output %s error %+v %v; want {\"sq\":1}", res.Output, res.Error, err)
			}
			if want := []abi.Parallel{{Branches: 3, Join: abi.JoinFirst, MaxConcurrent: 3}}; !reflect.DeepEqual(h.forks, want) {
				t.Fatalf("requests %+v, want %+v", h.forks, want)
			}
			if want := []string{"square"}; !reflect.DeepEqual(h.ran, want) {
				t.Fatalf("steps run %v, want only the branch's %v", h.ran, want)
			}

			h = newMemHandler()
			res, err = activate(t, m, "parallel", "r:fan[1]", `{"n":3,"fail":[1]}`, h, host.Limits{})
			if err != nil || res.Error == nil || res.Error.Code != "branch_boom" ||
				res.Error.Message != "step square failed: branch_boom: branch 1 fails" || len(res.Output) != 0 {
				b, _ := json.Marshal(res.Error)
				t.Fatalf("failing branch 1: output %s error %s %v; want the step's branch_boom", res.Output, b, err)
			}
			if want := []abi.Parallel{{Branches: 3, Join: abi.JoinAll, MaxConcurrent: 3}}; !reflect.DeepEqual(h.forks, want) {
				t.Fatalf("an absent join: requests %+v, want %+v", h.forks, want)
			}
		})
	}
}

// A BRANCH reply naming no branch of the call (here branch 1 of 1) is the host's fault: the
// SDK runs no branch's code and ends the branch with an abi error saying what it got.
func TestParallelSDKsRefuseABranchOutOfRange(t *testing.T) {
	for _, fixture := range parallelSDKFixtures {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			h := newMemHandler()
			res, err := activate(t, load(t, fixture), "parallel", "r:fan[1]", `{"n":1}`, h, host.Limits{})
			if err != nil || res.Error == nil || res.Error.Code != "abi" ||
				!strings.Contains(res.Error.Message, `the host answered BRANCH with {"branch":1}, not a branch of 1`) {
				b, _ := json.Marshal(res.Error)
				t.Fatalf("output %s error %s %v; want an abi error", res.Output, b, err)
			}
			if len(h.ran) != 0 {
				t.Fatalf("steps run %v, want none", h.ran)
			}
		})
	}
}

// queryAtFork is a query's dry pass whose frontier is the parallel call: parallel_run is
// answered QUERY (as the engine answers any durable call there, ABI.md §4.17), and the answer
// the guest gives through query_respond is kept.
type queryAtFork struct {
	*memHandler
	outcome abi.Outcome
	answer  []byte
}

var errAnswered = errors.New("answered")

func (h *queryAtFork) RunParallel(context.Context, string, abi.Parallel) (host.Reply, error) {
	return host.Reply{}, &host.Answer{Reply: host.Reply{Status: abi.StatusQuery, Data: []byte(`{"name":"progress","arg":null}`)}}
}

func (h *queryAtFork) QueryRespond(_ context.Context, outcome abi.Outcome, data []byte) error {
	h.outcome, h.answer = outcome, data
	return errAnswered
}

// A QUERY reply at the parallel call is answered as at any durable call: the parallel
// workflow registers no query, so each SDK answers unknown_query, and no branch runs.
func TestParallelSDKsAnswerAQueryAtTheFork(t *testing.T) {
	for _, fixture := range parallelSDKFixtures {
		t.Run(fixture, func(t *testing.T) {
			t.Parallel()
			h := &queryAtFork{memHandler: newMemHandler()}
			_, err := activate(t, load(t, fixture), "parallel", "r", `{"n":3}`, h, host.Limits{})
			var info abi.ErrorInfo
			if !errors.Is(err, errAnswered) || h.outcome != abi.OutcomeError || json.Unmarshal(h.answer, &info) != nil ||
				info.Code != "unknown_query" || !strings.Contains(info.Message, `"progress"`) {
				t.Fatalf("error %v, answer %d %s; want unknown_query naming the query", err, h.outcome, h.answer)
			}
			if len(h.ran) != 0 {
				t.Fatalf("steps run %v, want none", h.ran)
			}
		})
	}
}
