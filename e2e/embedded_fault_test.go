package e2e_test

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/api/wire"
)

// The embedded store's faults: a full disk, and a process killed in the middle of writes. What
// was acknowledged (a start answered 201, a result a client read) must be there afterwards.

// setFileSizeLimit sets the soft RLIMIT_FSIZE of the daemon process, as a full disk would look
// to it: writes past bytes fail (EFBIG; the Go runtime ignores the SIGXFSZ that comes with
// them). "unlimited" lifts it; the hard limit stays unlimited, so no privilege is needed.
func (d *daemon) setFileSizeLimit(bytes string) {
	d.t.Helper()
	if out, err := exec.Command("prlimit", "--pid", strconv.Itoa(d.cmd.Process.Pid), "--fsize="+bytes+":unlimited").CombinedOutput(); err != nil {
		d.t.Fatalf("prlimit: %v\n%s", err, out)
	}
}

// alive reports whether the daemon process is still running.
func (d *daemon) alive() bool {
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// TestEmbeddedStoreFullDisk fills the disk under the embedded store (RLIMIT_FSIZE on the
// daemon: no write may grow a file) while runs are in flight. The daemon must stay up and
// answer the requests that need a write 503 with Retry-After, never 500, and once there is
// room again every run completes and every start it acknowledged is there.
func TestEmbeddedStoreFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end fault test")
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	b := newEmbeddedBackend(t)
	d := newDaemon(t, "full", b, "--deploy", "../testdata/examples_rust.wasm", "--lease", faultLease.String(), "--log-level", "info")
	d.start()
	ids := startLoad(t, d, 100)

	// Full: no file may grow past a byte, so any write that extends the database or its WAL
	// fails.
	d.setFileSizeLimit("1")
	full := time.Now()
	var (
		unavailable, created int
		fullIDs              []string
	)
	for time.Since(full) < 3*time.Second {
		code, out, err := d.do("POST", "/v1/workflows/steps/runs", map[string]any{"input": map[string]any{"n": 1, "sleepMs": 0}})
		switch {
		case err != nil:
			t.Fatalf("start while the disk is full: no answer: %v\n%s", err, d.logTail(3000))
		case code == http.StatusServiceUnavailable || code == http.StatusInsufficientStorage:
			unavailable++
		case code == http.StatusCreated:
			// A write that fitted in the WAL's pages already on disk.
			created++
			var r wire.Run
			_ = json.Unmarshal(out, &r)
			fullIDs = append(fullIDs, r.ID)
		default:
			t.Fatalf("start while the disk is full: %d %s, want 503", code, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if unavailable == 0 {
		t.Fatalf("no start was refused while the disk was full (%d created): the fault did not bite", created)
	}
	if !d.alive() {
		t.Fatalf("the daemon died when the disk filled:\n%s", d.logTail(3000))
	}
	if code, _, err := d.do("GET", "/v1/workflows/steps/runs/"+ids[0], nil); err != nil || code != http.StatusOK {
		t.Fatalf("reading a run while the disk is full: %d %v", code, err)
	}
	t.Logf("disk full for 3s: %d starts answered 503, %d fitted", unavailable, created)

	d.setFileSizeLimit("unlimited")
	ids = append(ids, fullIDs...)
	ids = append(ids, startLoad(t, d, 20)...)
	awaitAllTerminal(t, b, faultFinish, d)
	rows := checkFaultJournals(t, b, ids[:100], faultSteps)
	rows += checkFaultJournals(t, b, fullIDs, 1)
	rows += checkFaultJournals(t, b, ids[len(ids)-20:], faultSteps)
	logSummary(t, d)
	t.Logf("%d runs completed after the disk had room again; %d journal rows each written once", len(ids), rows)
}

// TestKilledMidWriteLosesNothingAcknowledged SIGKILLs the daemon again and again while clients
// start runs and read results: every start answered 201 and every result a client read before
// a kill must be there after it, and every run completes with each boundary journaled once.
func TestKilledMidWriteLosesNothingAcknowledged(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end crash test")
	}
	eachStore(t, testKilledMidWrite)
}

func testKilledMidWrite(t *testing.T, b backend) {
	d := newDaemon(t, "killed", b, "--deploy", "../testdata/examples_rust.wasm", "--log-level", "info")
	d.start()
	var (
		mu     sync.Mutex
		acked  []string
		seen   = map[string]string{} // run -> output a client read as completed
		stop   = make(chan struct{})
		wg     sync.WaitGroup
		starts = 0
	)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, out, err := d.do("POST", "/v1/workflows/steps/runs", map[string]any{"input": map[string]any{"n": 3, "sleepMs": 100}})
				mu.Lock()
				starts++
				if err == nil && code == http.StatusCreated {
					var r wire.Run
					_ = json.Unmarshal(out, &r)
					acked = append(acked, r.ID)
				}
				mu.Unlock()
				if err != nil || code != http.StatusCreated {
					time.Sleep(20 * time.Millisecond) // the daemon is down or restarting
				}
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			mu.Lock()
			if len(acked) == 0 {
				mu.Unlock()
				continue
			}
			id := acked[rand.IntN(len(acked))]
			mu.Unlock()
			code, out, err := d.do("GET", "/v1/workflows/steps/runs/"+id, nil)
			var r wire.Run
			if err == nil && code == http.StatusOK && json.Unmarshal(out, &r) == nil && r.Status == "completed" {
				mu.Lock()
				seen[id] = string(r.Output)
				mu.Unlock()
			}
		}
	})

	const kills = 5
	for k := range kills {
		time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
		d.kill()
		d.start()
		mu.Lock()
		t.Logf("kill %d: %d starts acknowledged so far", k+1, len(acked))
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
	awaitAllTerminal(t, b, faultFinish, d)
	rows := checkFaultJournals(t, b, acked, 3)
	for id, output := range seen {
		status, now := b.runResult(t, id)
		var a, c any
		_ = json.Unmarshal([]byte(output), &a)
		_ = json.Unmarshal(now, &c)
		if status != "completed" || !jsonEqual(a, c) {
			t.Fatalf("run %s was read completed with %s before a kill; now %s %s", id, output, status, now)
		}
	}
	t.Logf("%d SIGKILLs; %d of %d starts acknowledged, each there and completed; %d results read before a kill still there; %d journal rows each written once",
		kills, len(acked), starts, len(seen), rows)
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
