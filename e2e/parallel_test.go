package e2e_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/wfhost/wfhost/api/wire"
)

// fanOut is a parent of the parallel workflow (abi/ABI.md §4.18) started before the kills of a
// crash test, and what it must end with.
type fanOut struct {
	id, join string
	n        int
	fail     []int
}

// fanOutCases are the parents a crash test starts: every join, with failing branches.
var fanOutCases = []fanOut{
	{join: "all", n: 4},
	{join: "all", n: 4, fail: []int{1}},
	{join: "allSettled", n: 4, fail: []int{1}},
	{join: "first", n: 3, fail: []int{0, 2}},
}

// startFanOuts starts each case twice.
func startFanOuts(t *testing.T, d *daemon) []fanOut {
	var out []fanOut
	for range 2 {
		for _, c := range fanOutCases {
			in := map[string]any{"n": c.n, "join": c.join, "fail": c.fail}
			c.id = runID(t, d.mustDo("POST", "/v1/workflows/parallel/runs", map[string]any{"input": in}, 201))
			out = append(out, c)
		}
	}
	return out
}

// checkFanOuts: after the kills, every parent ends as its join says, with exactly its
// branches, each created once (by its derived id, fan[i] of its parent) and each journal
// holding every step once.
func checkFanOuts(t *testing.T, d *daemon, fans []fanOut) {
	total := 0
	for _, c := range fans {
		total += 1 + c.n
		r := d.awaitRun("parallel", c.id)
		var kids wire.RunPage
		if err := json.Unmarshal(d.mustDo("GET", "/v1/runs?parent="+c.id+"&limit=100", nil, 200), &kids); err != nil {
			t.Fatal(err)
		}
		if len(kids.Runs) != c.n {
			t.Fatalf("parent %s (%s) has %d children, want its %d branches", c.id, c.join, len(kids.Runs), c.n)
		}
		ended := map[string]wire.RunStatus{}
		for _, k := range kids.Runs {
			if k.IdempotencyKey != c.id+":"+k.ParentKey || ended[k.ParentKey] != "" {
				t.Fatalf("parent %s: branch %s by id %q", c.id, k.ParentKey, k.IdempotencyKey)
			}
			b := d.awaitRun("parallel", k.ID)
			ended[k.ParentKey] = b.Status
			keys := stepKeys(d.steps("parallel", k.ID))
			if !slices.Equal(keys, []string{"fan", "square"}) && !slices.Equal(keys, []string{"fan"}) {
				t.Fatalf("branch %s of %s: journal %v", k.ParentKey, c.id, keys)
			}
		}
		keys := stepKeys(d.steps("parallel", c.id))
		failed := c.join == "all" && len(c.fail) > 0
		if failed {
			if r.Status != wire.RunFailed || r.Error == nil || r.Error.Code != "branch_failed" || !slices.Equal(keys, []string{"fan"}) {
				t.Fatalf("parent %s (%s, fail %v): %s %+v, journal %v; want branch_failed", c.id, c.join, c.fail, r.Status, r.Error, keys)
			}
			continue
		}
		var out struct {
			First    int      `json:"first"`
			Statuses []string `json:"statuses"`
			Sum      int      `json:"sum"`
		}
		if r.Status != wire.RunCompleted || json.Unmarshal(r.Output, &out) != nil || !slices.Equal(keys, []string{"fan", "sum"}) {
			t.Fatalf("parent %s (%s): %s %s %+v, journal %v", c.id, c.join, r.Status, r.Output, r.Error, keys)
		}
		sum := 0
		for i := range c.n {
			st := ended[fmt.Sprintf("fan[%d]", i)]
			switch {
			case slices.Contains(c.fail, i) && c.join == "first":
				if out.Statuses[i] == "completed" || st == wire.RunCompleted {
					t.Fatalf("parent %s: branch %d %s/%s, but it always fails", c.id, i, out.Statuses[i], st)
				}
			case slices.Contains(c.fail, i):
				if out.Statuses[i] != "failed" || st != wire.RunFailed {
					t.Fatalf("parent %s: branch %d %s/%s, want failed", c.id, i, out.Statuses[i], st)
				}
			default:
				if out.Statuses[i] != "completed" || st != wire.RunCompleted {
					t.Fatalf("parent %s: branch %d %s/%s, want completed", c.id, i, out.Statuses[i], st)
				}
				sum += i * i
			}
		}
		if out.Sum != sum || out.Statuses[out.First] != "completed" {
			t.Fatalf("parent %s (%s): %s, want sum %d and a completed first", c.id, c.join, r.Output, sum)
		}
	}
	var all wire.RunPage
	if err := json.Unmarshal(d.mustDo("GET", "/v1/workflows/parallel/runs?limit=500", nil, 200), &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Runs) != total {
		t.Fatalf("%d parallel runs, want %d parents and branches: none twice, none lost", len(all.Runs), total)
	}
}

func stepKeys(steps []wire.Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Key)
	}
	return out
}
