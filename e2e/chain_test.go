package e2e_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
)

// TestChainsAndCancelsSurviveSIGKILL: a daemon killed with SIGKILL, twice, while runs are
// retried by their own retry policy (each retry a new run, created with the failed run's end in
// one transaction) and while cancels are on their way to sagas holding reservations. After the
// restarts every retry chain has exactly its attempts, linked one to the next, none twice and
// none lost; every cancelled saga was told, compensated and ended cancelled (issue 14, points 3
// and 4: what a crash in the middle does).
func TestChainsAndCancelsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crash test")
	}
	eachStore(t, func(t *testing.T, b backend) {
		const chains, sagas, attempts = 10, 10, 4
		d := newDaemon(t, "chains", b, "--deploy", "../testdata/examples.wasm")
		d.start()
		var chainIDs, sagaIDs []string
		for i := range chains {
			out := d.mustDo("POST", "/v1/workflows/order-saga/runs", map[string]any{
				"input": map[string]any{"orderId": fmt.Sprintf("c-%d", i), "amount": 1, "failPayment": true},
				"retry": map[string]any{"attempts": attempts, "backoff": "fixed", "baseMs": 1000},
			}, 201)
			chainIDs = append(chainIDs, runID(t, out))
		}
		for i := range sagas {
			out := d.mustDo("POST", "/v1/workflows/order-saga/runs", map[string]any{
				"input": map[string]any{"orderId": fmt.Sprintf("s-%d", i), "amount": 1, "holdMs": 600000},
			}, 201)
			sagaIDs = append(sagaIDs, runID(t, out))
		}
		for _, id := range sagaIDs {
			d.awaitStep("order-saga", id, "hold", wire.StepSleeping)
		}
		// The cancels are asked, and the daemon killed at once: some sagas are told before the
		// kill, the others by the next daemon, whose claim carries the request.
		for _, id := range sagaIDs {
			d.mustDo("POST", "/v1/workflows/order-saga/runs/"+id+"/cancel?graceMs=120000", nil, 202)
		}
		d.kill()
		d.start()
		time.Sleep(600 * time.Millisecond) // mid-chain: between retries, or in one
		var mid wire.RunPage
		if err := json.Unmarshal(d.mustDo("GET", "/v1/workflows/order-saga/runs?limit=500", nil, 200), &mid); err != nil {
			t.Fatal(err)
		}
		if len(mid.Runs) >= chains*attempts+sagas {
			t.Fatal("every retry was made before the second kill; the workload is too short")
		}
		t.Logf("second SIGKILL with %d of the %d retry runs made", len(mid.Runs)-sagas-chains, chains*(attempts-1))
		d.kill()
		d.start()

		for _, id := range sagaIDs {
			r := d.awaitRun("order-saga", id)
			steps := d.steps("order-saga", id)
			if r.Status != wire.RunCancelled || len(steps) != 3 || steps[1].Key != "hold" || steps[1].Status != wire.StepCancelled ||
				steps[2].Key != "release-inventory" || steps[2].Status != wire.StepCompleted {
				t.Fatalf("saga %s: %s %+v, journal %+v; want cancelled with its hold cancelled and its reservation released", id, r.Status, r.Error, steps)
			}
		}
		for _, first := range chainIDs {
			id, n := first, 0
			for id != "" {
				n++
				r := d.awaitRun("order-saga", id)
				if r.Status != wire.RunFailed || r.Attempt != n || (n > 1) != (r.ContinuedFrom != "") {
					t.Fatalf("chain %s, run %d (%s): %s attempt %d continues %q", first, n, id, r.Status, r.Attempt, r.ContinuedFrom)
				}
				if n > attempts {
					t.Fatalf("chain %s has more than %d runs", first, attempts)
				}
				id = r.ContinuedAs
			}
			if n != attempts {
				t.Fatalf("chain %s has %d runs, want %d", first, n, attempts)
			}
		}
		// Every run of every chain: none beyond the chains (no retry created twice).
		var page wire.RunPage
		if err := json.Unmarshal(d.mustDo("GET", "/v1/workflows/order-saga/runs?limit=500", nil, 200), &page); err != nil {
			t.Fatal(err)
		}
		if got, want := len(page.Runs), chains*attempts+sagas; got != want {
			t.Fatalf("%d runs of order-saga, want %d (%d chains of %d, %d sagas)", got, want, chains, attempts, sagas)
		}
	})
}

func runID(t *testing.T, out []byte) string {
	t.Helper()
	var r wire.Run
	if err := json.Unmarshal(out, &r); err != nil || r.ID == "" {
		t.Fatalf("decode run: %v: %s", err, out)
	}
	return r.ID
}
