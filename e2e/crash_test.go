package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	crashRuns   = 100
	crashSteps  = 12
	crashSleep  = 500 // ms between steps, so runs stay mid-flight across kills
	crashKills  = 5
	stepsFinish = 90 * time.Second
)

var stepIndex = regexp.MustCompile(`index=(\d+)`)

type runView struct {
	ID     string          `json:"id"`
	Status string          `json:"status"`
	Output json.RawMessage `json:"output"`
	Error  json.RawMessage `json:"error"`
}

// startStepsRuns starts n runs of the `steps` example workflow and returns their ids.
func startStepsRuns(t *testing.T, d *daemon, n int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for i := range n {
		out := d.mustDo("POST", "/v1/workflows/steps/runs", map[string]any{
			"input": map[string]any{"n": crashSteps, "sleepMs": crashSleep, "tag": i},
		}, 201)
		var r runView
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("decode run: %v: %s", err, out)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

func liveRuns(t *testing.T, conn *pgx.Conn, schema string) int {
	t.Helper()
	var n int
	err := conn.QueryRow(context.Background(),
		"SELECT count(*) FROM "+pgx.Identifier{schema, "runs"}.Sanitize()+" WHERE status IN ('pending','running')").Scan(&n)
	if err != nil {
		t.Fatalf("count live runs: %v", err)
	}
	return n
}

// awaitAllTerminal waits until no run of the schema is live.
func awaitAllTerminal(t *testing.T, conn *pgx.Conn, schema string, timeout time.Duration, ds ...*daemon) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for liveRuns(t, conn, schema) > 0 {
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("%d runs still live after %v", liveRuns(t, conn, schema), timeout)
			for _, d := range ds {
				msg += "\n--- " + d.name + " ---\n" + d.logTail(3000)
			}
			t.Fatal(msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkStepsJournals asserts, straight from Postgres, that every run completed with the right
// output and that its journal holds each boundary exactly once, in order.
func checkStepsJournals(t *testing.T, conn *pgx.Conn, schema string, ids []string) (rows int) {
	t.Helper()
	ctx := context.Background()
	wantSum := 0
	for i := range crashSteps {
		wantSum += i
	}
	for _, id := range ids {
		var status string
		var output []byte
		err := conn.QueryRow(ctx, "SELECT status, coalesce(output::text,'') FROM "+pgx.Identifier{schema, "runs"}.Sanitize()+" WHERE id = $1", id).Scan(&status, &output)
		if err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		if status != "completed" {
			t.Fatalf("run %s is %s, want completed", id, status)
		}
		var out struct{ Sum int }
		if err := json.Unmarshal(output, &out); err != nil || out.Sum != wantSum {
			t.Fatalf("run %s output %s, want sum %d", id, output, wantSum)
		}
		q := "SELECT seq, key, kind, status FROM " + pgx.Identifier{schema, "steps"}.Sanitize() + " WHERE run_id = $1 ORDER BY seq"
		r, err := conn.Query(ctx, q, id)
		if err != nil {
			t.Fatalf("steps of %s: %v", id, err)
		}
		var want []string
		for i := range crashSteps {
			key := "s"
			if i > 0 {
				key = fmt.Sprintf("s#%d", i)
			}
			want = append(want, "run "+key)
			if i < crashSteps-1 {
				pause := "pause"
				if i > 0 {
					pause = fmt.Sprintf("pause#%d", i)
				}
				want = append(want, "sleep "+pause)
			}
		}
		seq := 0
		for r.Next() {
			var s int
			var key, kind, st string
			if err := r.Scan(&s, &key, &kind, &st); err != nil {
				t.Fatal(err)
			}
			if s != seq {
				t.Fatalf("run %s: journal seq %d where %d was expected (a gap or a duplicate)", id, s, seq)
			}
			if seq >= len(want) || kind+" "+key != want[seq] {
				t.Fatalf("run %s: journal entry %d is %s %s, want %s", id, seq, kind, key, want[min(seq, len(want)-1)])
			}
			if st != "completed" {
				t.Fatalf("run %s: step %s is %s", id, key, st)
			}
			seq++
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		if seq != len(want) {
			t.Fatalf("run %s: journal has %d entries, want %d", id, seq, len(want))
		}
		rows += seq
	}
	return rows
}

// callbackRuns counts, from the daemons' logs, how often each (run, step index) callback ran.
func callbackRuns(ds ...*daemon) map[string]int {
	counts := map[string]int{}
	for _, d := range ds {
		// The `steps` example's callbacks log "step ran index=N"; the host adds the run id.
		for _, rec := range d.logRecords("step ran") {
			run, _ := rec["run"].(string)
			msg, _ := rec["msg"].(string)
			if m := stepIndex.FindStringSubmatch(msg); m != nil {
				counts[run+"/"+m[1]]++
			}
		}
	}
	return counts
}

func checkCallbacks(t *testing.T, ids []string, ds ...*daemon) (reran int) {
	t.Helper()
	counts := callbackRuns(ds...)
	for _, id := range ids {
		for i := range crashSteps {
			c := counts[fmt.Sprintf("%s/%d", id, i)]
			if c < 1 {
				t.Fatalf("run %s step %d: no log shows its callback ran", id, i)
			}
			reran += c - 1
		}
	}
	return reran
}

func TestCrashRecoverySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crash test")
	}
	schema := freshSchema(t)
	d := newDaemon(t, "crash", schema, "--deploy", "../testdata/examples.wasm")
	d.start()
	ids := startStepsRuns(t, d, crashRuns)

	conn, err := pgx.Connect(context.Background(), databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	kills := 0
	for kills < crashKills {
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		live := liveRuns(t, conn, schema)
		if live == 0 {
			break
		}
		d.kill()
		kills++
		t.Logf("kill %d: SIGKILL with %d runs mid-flight", kills, live)
		d.start()
	}
	if kills < crashKills {
		t.Fatalf("only %d kills landed while runs were mid-flight; the workload is too short", kills)
	}
	awaitAllTerminal(t, conn, schema, stepsFinish, d)
	rows := checkStepsJournals(t, conn, schema, ids)
	reran := checkCallbacks(t, ids, d)
	t.Logf("%d runs completed after %d SIGKILLs; %d journal rows checked exactly once; %d step callbacks ran more than once (at-least-once)", len(ids), kills, rows, reran)
}

func TestTwoDaemonsOneKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crash test")
	}
	schema := freshSchema(t)
	a := newDaemon(t, "daemon-a", schema, "--deploy", "../testdata/examples.wasm")
	a.start()
	b := newDaemon(t, "daemon-b", schema)
	b.start()
	ids := startStepsRuns(t, a, crashRuns)

	conn, err := pgx.Connect(context.Background(), databaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	time.Sleep(800 * time.Millisecond)
	live := liveRuns(t, conn, schema)
	if live == 0 {
		t.Fatal("every run finished before the kill; the workload is too short")
	}
	a.kill()
	t.Logf("SIGKILLed daemon-a with %d runs mid-flight; daemon-b carries on alone", live)
	awaitAllTerminal(t, conn, schema, stepsFinish, a, b)
	rows := checkStepsJournals(t, conn, schema, ids)
	reran := checkCallbacks(t, ids, a, b)

	// A run's terminal status is committed once: the fenced Finish logs "run ended" only when it
	// wins, so across both daemons each run has exactly one such record.
	ended := map[string]int{}
	for _, d := range []*daemon{a, b} {
		for _, rec := range d.logRecords("run ended") {
			run, _ := rec["run"].(string)
			ended[run]++
		}
	}
	for _, id := range ids {
		if ended[id] != 1 {
			t.Fatalf("run %s recorded its end %d times across both daemons", id, ended[id])
		}
	}
	t.Logf("%d runs completed; %d journal rows checked; %d callbacks re-ran after the kill", len(ids), rows, reran)
}
