package storetest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/wfhost/wfhost/store"
)

var matchingTests = []test{
	{"WaitMatchIsJSONContainment", testWaitMatchIsJSONContainment},
	{"InputFilterIsJSONContainment", testInputFilterIsJSONContainment},
}

// containment is Postgres's jsonb @> (payload contains match), which every store must
// implement the same way: the cases are the rules of its documentation that a wait's match or
// an input filter can meet.
var containment = []struct {
	payload, match string
	want           bool
}{
	{`{"a":1,"b":2}`, `{"a":1}`, true},
	{`{"a":1}`, `{"a":1,"b":2}`, false},
	{`{"a":1}`, `{"a":1.0}`, true},   // numbers compare by value
	{`{"a":100}`, `{"a":1e2}`, true}, // in any notation
	{`{"a":1}`, `{"a":"1"}`, false},  // but not across types
	{`{"a":null}`, `{"a":null}`, true},
	{`{"b":1}`, `{"a":null}`, false}, // a null is a value, not a missing key
	{`{"a":true}`, `{"a":false}`, false},
	{`{"a":{"b":{"c":1,"d":2}}}`, `{"a":{"b":{"c":1}}}`, true},
	{`{"a":{"b":1}}`, `{"b":1}`, false}, // containment does not skip levels
	{`{"a":{"b":1}}`, `{"a":{}}`, true},
	{`{"tags":["x","y","z"]}`, `{"tags":["z","x"]}`, true}, // arrays: order and
	{`{"tags":["x","y"]}`, `{"tags":["x","x"]}`, true},     // duplicates do not matter
	{`{"tags":["x","y"]}`, `{"tags":["w"]}`, false},
	{`{"tags":["x"]}`, `{"tags":"x"}`, false}, // below the top, an array does not contain a scalar
	{`{"tags":["x"]}`, `{"tags":[]}`, true},
	{`{"items":[{"id":1,"n":2},{"id":3}]}`, `{"items":[{"id":1}]}`, true},
	{`{"items":[{"id":1}]}`, `{"items":[{"id":1,"n":2}]}`, false},
	{`{"m":[[1,2],[3]]}`, `{"m":[[2]]}`, true},
	{`{"m":[[1,2]]}`, `{"m":[1]}`, false},
	{`{"s":"café ✓"}`, `{"s":"café ✓"}`, true},
	{`{"s":"a\u0062c"}`, `{"s":"abc"}`, true}, // escapes compare decoded
}

func testWaitMatchIsJSONContainment(t *testing.T, f *fixture) {
	runs := make([]store.Run, len(containment))
	for i := range runs {
		runs[i] = f.run()
	}
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: len(runs), LeaseFor: longLease})
	ok(t, err)
	equal(t, "claims", len(claims), len(runs))
	lease := map[string]store.Lease{}
	for _, c := range claims {
		lease[c.Run.ID] = c.Lease
	}
	for i, c := range containment {
		got := reach(t, f, lease[runs[i].ID], f.waitStep(runs[i].ID, 0, "w", "e", c.match, nil))
		check(t, got == nil, "case %d resolved with nothing sent", i)
	}
	for i, c := range containment {
		delivered := signal(t, f, runs[i].ID, "e", c.payload)
		check(t, delivered == c.want, "wait on %s, signal %s: delivered %v, want %v", c.match, c.payload, delivered, c.want)
	}
	// A broadcast matches by the same rules, resolving only the runs still waiting whose
	// match it satisfies.
	var want []string
	for i, c := range containment {
		if !c.want && c.payload == `{"tags":["x","y"]}` {
			want = append(want, runs[i].ID)
		}
	}
	res, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "e", Payload: json.RawMessage(`{"tags":["x","y","w"]}`)})
	ok(t, err)
	equal(t, "runs a broadcast resolved", res.Resolved, len(want))
	for _, id := range want {
		equal(t, "run resolved by the broadcast", f.step(id, "w").Status, store.StepCompleted)
	}
}

func testInputFilterIsJSONContainment(t *testing.T, f *fixture) {
	// One run per distinct payload; each match must select exactly the runs whose input
	// contains it.
	inputs := []string{}
	for _, c := range containment {
		if !slices.Contains(inputs, c.payload) {
			inputs = append(inputs, c.payload)
		}
	}
	byInput := map[string]string{}
	for _, in := range inputs {
		r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(in), RetentionDays: 7})
		ok(t, err)
		byInput[in] = r.ID
	}
	for _, c := range containment {
		runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Input: json.RawMessage(c.match), Limit: 500})
		ok(t, err)
		check(t, slices.Contains(ids(runs), byInput[c.payload]) == c.want,
			"filter %s: run with input %s listed %v, want %v", c.match, c.payload, !c.want, c.want)
	}
}
