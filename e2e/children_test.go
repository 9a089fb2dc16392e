package e2e_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
)

// TestChildrenSurviveSIGKILL: a daemon killed with SIGKILL, twice, while parents start
// children and await them, and while the children hold and end (issue 14, point 1: what a
// crash in the middle does). A crash before a parent's child step commits leaves neither the
// step nor the child, and the next activation starts it; after the commit both exist, and the
// replay finds the step. A child's end resolves its parent's step in the transaction that ends
// it, so a kill after it loses nothing. After the restarts every parent has exactly its one
// child, by its derived id, none twice, and ends with the child's result: its square, or
// child_failed compensated. Parents that fan out into parallel branches are killed with them:
// a crash before the fork's commit leaves neither the step nor a branch, after it all of them;
// a branch's end decides the join in the transaction that ends it. Each ends with the
// ParallelResult its join gives, each branch created once, each journal entry once.
func TestChildrenSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crash test")
	}
	eachStore(t, func(t *testing.T, b backend) {
		const parents, failing = 12, 4
		d := newDaemon(t, "children", b, "--deploy", "../testdata/examples.wasm")
		d.start()
		var ids []string
		for i := range parents {
			out := d.mustDo("POST", "/v1/workflows/parent/runs", map[string]any{
				"input": map[string]any{"n": i + 1, "holdMs": 1500, "failChild": i < failing},
			}, 201)
			ids = append(ids, runID(t, out))
		}
		// And parents that fan out into branches (parallel_test.go).
		fans := startFanOuts(t, d)
		// Killed while the children are being started, and again while they hold or end.
		d.kill()
		d.start()
		time.Sleep(800 * time.Millisecond)
		d.kill()
		d.start()

		for i, id := range ids {
			r := d.awaitRun("parent", id)
			var kids wire.RunPage
			if err := json.Unmarshal(d.mustDo("GET", "/v1/runs?parent="+id, nil, 200), &kids); err != nil {
				t.Fatal(err)
			}
			if len(kids.Runs) != 1 || kids.Runs[0].IdempotencyKey != id+":square" || kids.Runs[0].ParentKey != "square" {
				t.Fatalf("parent %s has children %+v, want exactly its square child", id, kids.Runs)
			}
			kid := d.awaitRun("child", kids.Runs[0].ID)
			steps := d.steps("parent", id)
			if i < failing {
				if r.Status != wire.RunFailed || r.Error == nil || r.Error.Code != "child_failed" || kid.Status != wire.RunFailed ||
					len(steps) != 2 || steps[1].Key != "compensate" {
					t.Fatalf("parent %s: %s %+v, child %s, journal %+v; want child_failed compensated", id, r.Status, r.Error, kid.Status, steps)
				}
				continue
			}
			want := fmt.Sprintf(`{"square":%d,"audited":false}`, (i+1)*(i+1))
			if r.Status != wire.RunCompleted || compact(t, r.Output) != want || kid.Status != wire.RunCompleted || len(steps) != 1 {
				t.Fatalf("parent %s: %s %s, child %s, journal %+v; want completed with %s", id, r.Status, r.Output, kid.Status, steps, want)
			}
		}
		var all wire.RunPage
		if err := json.Unmarshal(d.mustDo("GET", "/v1/workflows/child/runs?limit=500", nil, 200), &all); err != nil {
			t.Fatal(err)
		}
		if len(all.Runs) != parents {
			t.Fatalf("%d child runs, want %d: none twice, none lost", len(all.Runs), parents)
		}
		checkFanOuts(t, d, fans)
	})
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return string(raw)
	}
	return fmt.Sprintf(`{"square":%v,"audited":%v}`, m["square"], m["audited"])
}
