package e2e_test

import (
	"testing"
	"time"
)

// SIGTERM lets in-flight activations finish or hands their runs back: after a clean exit no
// run is left leased, so a restarted daemon continues them at once instead of waiting for
// leases to expire.
func TestSIGTERMReleasesInFlightRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	eachStore(t, testSIGTERMReleasesInFlightRuns)
}

func testSIGTERMReleasesInFlightRuns(t *testing.T, b backend) {
	// A lease far longer than the test: if SIGTERM left one behind, the run would be stuck.
	d := newDaemon(t, "graceful", b, "--deploy", "../testdata/examples.wasm")
	d.args = append(d.args, "--lease", "10m")
	d.start()
	ids := startStepsRuns(t, d, 30)
	time.Sleep(500 * time.Millisecond)

	if b.liveRuns(t) == 0 {
		t.Fatal("every run finished before SIGTERM; the workload is too short")
	}
	if err := d.terminate(30 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, d.logTail(3000))
	}
	if leased := b.leasedRuns(t); leased != 0 {
		t.Fatalf("%d runs still leased after a clean shutdown", leased)
	}
	d.start()
	awaitAllTerminal(t, b, stepsFinish, d)
	rows := checkStepsJournals(t, b, ids)
	t.Logf("%d runs completed across a SIGTERM restart; %d journal rows checked", len(ids), rows)
}
