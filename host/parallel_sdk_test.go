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

// parallelReply answers every fork with one reply, as the engine answers the caller's call.
type parallelReply struct {
	*memHandler
	reply host.Reply
}

func (h *parallelReply) RunParallel(context.Context, string, abi.Parallel) (host.Reply, error) {
	return h.reply, nil
}

// The caller's side of the call in each SDK: a ParallelResult is read into the example's
// output (the sum step runs after it), a failed join fails the run with the step's error as the
// Go SDK words it, and a reply the SDK cannot read fails the run with a clear code instead of
// being taken for a result.
func TestParallelSDKsReadTheJoin(t *testing.T) {
	cases := []struct {
		name       string
		reply      host.Reply
		output     string
		code, text string
	}{
		{"ok", host.Reply{Status: abi.StatusOK, Data: []byte(`{"branches":[{"status":"completed","output":{"sq":4}},` +
			`{"status":"failed","error":{"code":"x","message":"y"}},{"status":"cancelled"}],"first":0}`)},
			`{"first":0,"statuses":["completed","failed","cancelled"],"sum":4}`, "", ""},
		{"none completed", host.Reply{Status: abi.StatusOK, Data: []byte(`{"branches":[{"status":"cancelled"}],"first":-1}`)},
			`{"first":-1,"statuses":["cancelled"],"sum":0}`, "", ""},
		{"branch failed", host.Reply{Status: abi.StatusStepFailed, Data: []byte(`{"code":"branch_failed","message":"branch 1 ended failed: boom","nonRetryable":true}`)},
			"", "branch_failed", "step fan failed: branch_failed: branch 1 ended failed: boom"},
		{"cancelled", host.Reply{Status: abi.StatusStepFailed, Data: []byte(`{"code":"cancelled","message":"the run was cancelled"}`)},
			"", "cancelled", "step fan failed: cancelled: the run was cancelled"},
		{"not JSON", host.Reply{Status: abi.StatusOK, Data: []byte("\xff{not json")}, "", "decode", ""},
		{"a status parallel_run never answers", host.Reply{Status: abi.StatusTimeout}, "", "abi", "unexpected reply status 3"},
	}
	for _, fixture := range parallelSDKFixtures {
		for _, c := range cases {
			t.Run(fixture+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				h := &parallelReply{memHandler: newMemHandler(), reply: c.reply}
				res, err := activate(t, load(t, fixture), "parallel", "r", `{"n":3}`, h, host.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if c.code == "" {
					var got, want any
					if res.Error != nil || json.Unmarshal(res.Output, &got) != nil || json.Unmarshal([]byte(c.output), &want) != nil || !reflect.DeepEqual(got, want) {
						t.Fatalf("output %s error %+v; want %s", res.Output, res.Error, c.output)
					}
					return
				}
				if res.Error == nil || res.Error.Code != c.code || !strings.Contains(res.Error.Message, c.text) {
					t.Fatalf("output %s error %+v; want %s containing %q", res.Output, res.Error, c.code, c.text)
				}
				if len(h.ran) != 0 {
					t.Fatalf("steps run %v after a failed join, want none", h.ran)
				}
			})
		}
	}
}
