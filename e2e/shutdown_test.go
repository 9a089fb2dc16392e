package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SIGTERM lets in-flight activations finish or hands their runs back: after a clean exit no
// run is left leased, so a restarted daemon continues them at once instead of waiting for
// leases to expire.
func TestSIGTERMReleasesInFlightRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	schema := freshSchema(t)
	// A lease far longer than the test: if SIGTERM left one behind, the run would be stuck.
	d := newDaemon(t, "graceful", schema, "--deploy", "../testdata/examples.wasm")
	d.args = append(d.args, "--lease", "10m")
	d.start()
	ids := startStepsRuns(t, d, 30)
	time.Sleep(500 * time.Millisecond)

	conn, err := pgx.Connect(context.Background(), databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if liveRuns(t, conn, schema) == 0 {
		t.Fatal("every run finished before SIGTERM; the workload is too short")
	}
	if err := d.terminate(30 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, d.logTail(3000))
	}
	var leased int
	err = conn.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{schema, "runs"}.Sanitize()+
		" WHERE lease_expires_at > now() AND status IN ('pending','running')").Scan(&leased)
	if err != nil {
		t.Fatal(err)
	}
	if leased != 0 {
		t.Fatalf("%d runs still leased after a clean shutdown", leased)
	}
	d.start()
	awaitAllTerminal(t, conn, schema, stepsFinish, d)
	rows := checkStepsJournals(t, conn, schema, ids)
	t.Logf("%d runs completed across a SIGTERM restart; %d journal rows checked", len(ids), rows)
}
