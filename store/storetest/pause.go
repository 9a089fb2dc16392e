package storetest

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var pauseTests = []test{
	{"PauseASuspendedRunAtOnce", testPauseSuspended},
	{"PauseAHeldRunAtItsNextCall", testPauseHeld},
	{"AWithdrawnPauseIsNotHeld", testPauseWithdrawn},
	{"APauseOutlivesItsHost", testPauseOutlivesHost},
	{"ExhaustedStepHoldsWithoutAsk", testHoldAlways},
	{"PauseOfEndedAndUnknownRuns", testPauseEnded},
	{"CancelAPausedRun", testCancelPaused},
	{"PauseAWorkflow", testPauseWorkflow},
	{"PauseAVersion", testPauseVersion},
	{"RunsOfAPausedWorkflowAreCreatedPaused", testCreatedPaused},
	{"ResumeOntoAnotherVersion", testUnpauseMove},
	{"PausedRunsAreCounted", testPausedCounted},
	{"NoRunSlipsPastAWorkflowPause", testPauseRace},
}

// A run no host holds (here: suspended until later) pauses at once, keeps its wake time,
// is not claimable while paused, and is claimable again at that wake time once resumed.
func testPauseSuspended(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	soon := f.now().Add(50 * time.Millisecond)
	ok(t, f.s.Suspend(f.ctx, c.Lease, nil, &soon))
	got, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	equal(t, "status", got.Status, store.StatusPaused)
	check(t, got.PausedAt != nil, "a paused run has no PausedAt")
	again, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	check(t, again.PausedAt.Equal(*got.PausedAt), "a second pause changed PausedAt: %v, then %v", got.PausedAt, again.PausedAt)
	f.pass(100 * time.Millisecond)
	f.noClaim()
	filtered, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Status: store.StatusPaused})
	ok(t, err)
	equal(t, "paused runs listed", len(filtered), 1)

	resumed, err := f.s.UnpauseRun(f.ctx, f.tenant, r.ID, nil)
	ok(t, err)
	equal(t, "status after resume", resumed.Status, store.StatusRunning)
	check(t, resumed.PausedAt == nil, "a resumed run keeps PausedAt %v", resumed.PausedAt)
	equalTime(t, "wake time after resume", resumed.AvailableAt, &soon)
	f.claim(r.ID, longLease)

	// A pending run pauses too, and resumes pending.
	p := f.run()
	got, err = f.s.PauseRun(f.ctx, f.tenant, p.ID)
	ok(t, err)
	equal(t, "a pending run paused", got.Status, store.StatusPaused)
	resumed, err = f.s.UnpauseRun(f.ctx, f.tenant, p.ID, nil)
	ok(t, err)
	equal(t, "a pending run resumed", resumed.Status, store.StatusPending)
	// Resuming a run that is not paused changes nothing.
	same, err := f.s.UnpauseRun(f.ctx, f.tenant, p.ID, nil)
	ok(t, err)
	equal(t, "a live run resumed again", same.Status, store.StatusPending)
}

// A run a host holds is only asked: it stays running, its host is told, and HoldPaused at its
// next durable call writes the held step and pauses it, the lease released.
func testPauseHeld(t *testing.T, f *fixture) {
	notices := f.listener()
	r := f.run()
	c := f.claim(r.ID, longLease)
	got, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	equal(t, "status of a held run asked to pause", got.Status, store.StatusRunning)
	check(t, got.PausedAt != nil, "the ask is not kept")
	f.expect(notices, store.NoticePauseRequested, r.ID, "PauseRun")
	held := f.runStep(r.ID, 0, "a")
	paused, err := f.s.HoldPaused(f.ctx, c.Lease, &held, false)
	ok(t, err)
	check(t, paused, "HoldPaused did not hold a run asked to pause")
	equal(t, "status", f.getRun(r.ID).Status, store.StatusPaused)
	equal(t, "held step written", f.step(r.ID, "a").Status, store.StepCompleted)
	err = f.s.CommitStep(f.ctx, c.Lease, f.runStep(r.ID, 1, "b"), longLease)
	check(t, errors.Is(err, store.ErrLeaseLost), "a write after the hold: %v, want ErrLeaseLost", err)
	f.noClaim()
	_, err = f.s.UnpauseRun(f.ctx, f.tenant, r.ID, nil)
	ok(t, err)
	c = f.claim(r.ID, longLease)
	equal(t, "journal after resume", len(c.Journal), 1)
	check(t, c.Run.PausedAt == nil, "the claim after a resume carries a pause")
}

// A pause withdrawn (resumed) before the host held it is not held: HoldPaused writes nothing
// and says so, and the pass goes on under its lease.
func testPauseWithdrawn(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	_, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	got, err := f.s.UnpauseRun(f.ctx, f.tenant, r.ID, nil)
	ok(t, err)
	check(t, got.PausedAt == nil && got.Status == store.StatusRunning, "withdrawn: %s %v", got.Status, got.PausedAt)
	held := f.runStep(r.ID, 0, "a")
	paused, err := f.s.HoldPaused(f.ctx, c.Lease, &held, false)
	ok(t, err)
	check(t, !paused, "a withdrawn pause was held")
	equal(t, "journal", len(f.steps(r.ID)), 0)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, held, longLease))
	stale := c.Lease
	stale.Epoch++
	_, err = f.s.HoldPaused(f.ctx, stale, nil, true)
	check(t, errors.Is(err, store.ErrLeaseLost), "a stale lease: %v, want ErrLeaseLost", err)
}

// A host that dies between the ask and the hold leaves no run unclaimable: once its lease
// runs out the run is claimable, and the claim carries the ask, for the new host to hold; a
// pause asked again then pauses it at once.
func testPauseOutlivesHost(t *testing.T, f *fixture) {
	r := f.run()
	f.claim(r.ID, 300*time.Millisecond)
	asked, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	f.pass(400 * time.Millisecond)
	if asked.Status == store.StatusRunning {
		c := f.claim(r.ID, longLease)
		check(t, c.Run.PausedAt != nil, "the claim of a run asked to pause does not say so")
		paused, err := f.s.HoldPaused(f.ctx, c.Lease, nil, false)
		ok(t, err)
		check(t, paused, "the new host could not hold it")
	} // else the lease ran out before the ask (a slow machine): the ask paused it at once
	equal(t, "status", f.getRun(r.ID).Status, store.StatusPaused)

	r2 := f.run()
	f.claim(r2.ID, 300*time.Millisecond)
	_, err = f.s.PauseRun(f.ctx, f.tenant, r2.ID)
	ok(t, err)
	f.pass(400 * time.Millisecond)
	got, err := f.s.PauseRun(f.ctx, f.tenant, r2.ID)
	ok(t, err)
	equal(t, "a run whose holder's lease ran out, asked again", got.Status, store.StatusPaused)
}

// A step whose attempts ran out under onExhausted "pause" holds the run with no ask, its step
// kept retrying for the resume to try once more.
func testHoldAlways(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	now := f.now()
	row := store.Step{RunID: r.ID, Seq: 0, Key: "charge", Kind: store.KindRun, Status: store.StepRetrying,
		Error: &abi.ErrorInfo{Code: "declined", Message: "card declined"}, Attempt: 3, WakeAt: &now, StartedAt: now}
	paused, err := f.s.HoldPaused(f.ctx, c.Lease, &row, true)
	ok(t, err)
	check(t, paused, "not held")
	got := f.getRun(r.ID)
	equal(t, "status", got.Status, store.StatusPaused)
	check(t, got.PausedAt != nil, "no PausedAt")
	equal(t, "step", f.step(r.ID, "charge").Status, store.StepRetrying)
	_, err = f.s.UnpauseRun(f.ctx, f.tenant, r.ID, nil)
	ok(t, err)
	c = f.claim(r.ID, longLease)
	equal(t, "attempts so far", c.Journal[0].Attempt, 3)
}

func testPauseEnded(t *testing.T, f *fixture) {
	r := f.run()
	c := f.claim(r.ID, longLease)
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, []byte(`1`), nil, nil))
	_, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	check(t, errors.Is(err, store.ErrConflict), "pause an ended run: %v, want ErrConflict", err)
	_, err = f.s.UnpauseRun(f.ctx, f.tenant, r.ID, nil)
	check(t, errors.Is(err, store.ErrConflict), "resume an ended run: %v, want ErrConflict", err)
	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-a-uuid", "\xff\xfe"} {
		_, err = f.s.PauseRun(f.ctx, f.tenant, id)
		check(t, errors.Is(err, store.ErrNotFound), "pause %q: %v, want ErrNotFound", id, err)
		_, err = f.s.UnpauseRun(f.ctx, f.tenant, id, nil)
		check(t, errors.Is(err, store.ErrNotFound), "resume %q: %v, want ErrNotFound", id, err)
	}
	p := f.run()
	_, err = f.s.PauseRun(f.ctx, "someone-else", p.ID)
	check(t, errors.Is(err, store.ErrNotFound), "another tenant's run: %v, want ErrNotFound", err)
	_, err = f.s.ResumeWorkflow(f.ctx, f.tenant, wfName, "")
	check(t, errors.Is(err, store.ErrNotFound), "resume a workflow not paused: %v, want ErrNotFound", err)
}

func testCancelPaused(t *testing.T, f *fixture) {
	r := f.run()
	_, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	got, err := f.s.CancelRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	equal(t, "status", got.Status, store.StatusCancelled)
	_, err = f.s.UnpauseRun(f.ctx, f.tenant, r.ID, nil)
	check(t, errors.Is(err, store.ErrConflict), "resume a cancelled run: %v, want ErrConflict", err)
}

// A workflow's pause pauses its live runs (held ones asked), keeps them from a single resume,
// and its resume releases them all, each to where it stood.
func testPauseWorkflow(t *testing.T, f *fixture) {
	notices := f.listener()
	b := f.run()
	cb := f.claim(b.ID, longLease)
	a := f.run()
	n, err := f.s.PauseWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "runs paused or asked", n, 2)
	equal(t, "unheld run", f.getRun(a.ID).Status, store.StatusPaused)
	equal(t, "held run", f.getRun(b.ID).Status, store.StatusRunning)
	f.expect(notices, store.NoticePauseRequested, b.ID, "PauseWorkflow")
	paused, err := f.s.HoldPaused(f.ctx, cb.Lease, nil, false)
	ok(t, err)
	check(t, paused, "the held run was not held")
	again, err := f.s.PauseWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "paused again", again, 0)
	_, err = f.s.UnpauseRun(f.ctx, f.tenant, a.ID, nil)
	check(t, errors.Is(err, store.ErrConflict), "resume one run of a paused workflow: %v, want ErrConflict", err)
	pauses, err := f.s.ListWorkflowPauses(f.ctx, f.tenant)
	ok(t, err)
	check(t, len(pauses) == 1 && pauses[0].Workflow == wfName && pauses[0].Version == "", "pauses %+v", pauses)
	f.noClaim()
	n, err = f.s.ResumeWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "runs resumed", n, 2)
	equal(t, "a never ran", f.getRun(a.ID).Status, store.StatusPending)
	equal(t, "b ran", f.getRun(b.ID).Status, store.StatusRunning)
	pauses, err = f.s.ListWorkflowPauses(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "pauses left", len(pauses), 0)
}

// A version's pause holds that version's runs only; lifting the whole workflow's pause does
// not resume runs a version's pause still covers.
func testPauseVersion(t *testing.T, f *fixture) {
	m2 := f.putModule(f.tenant, []byte("module-v2"), false, wf(wfName, "v2"))
	v1 := f.run()
	v2 := f.runOf(f.tenant, wfName, "v2", m2.Digest, "")
	_, err := f.s.PauseWorkflow(f.ctx, f.tenant, wfName, "v1")
	ok(t, err)
	equal(t, "v1 run", f.getRun(v1.ID).Status, store.StatusPaused)
	equal(t, "v2 run", f.getRun(v2.ID).Status, store.StatusPending)
	_, err = f.s.PauseWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "v2 run under the workflow's pause", f.getRun(v2.ID).Status, store.StatusPaused)
	n, err := f.s.ResumeWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "resumed (v2 only)", n, 1)
	equal(t, "v1 run", f.getRun(v1.ID).Status, store.StatusPaused)
	equal(t, "v2 run", f.getRun(v2.ID).Status, store.StatusPending)
	n, err = f.s.ResumeWorkflow(f.ctx, f.tenant, wfName, "v1")
	ok(t, err)
	equal(t, "resumed (v1)", n, 1)
}

// Every way a run is created makes it paused while its workflow is: a start, a leased start
// (not leased), a signal-with-start and continue-as-new.
func testCreatedPaused(t *testing.T, f *fixture) {
	prev := f.run()
	c := f.claim(prev.ID, longLease)
	_, err := f.s.PauseWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	r := f.run()
	equal(t, "a start", r.Status, store.StatusPaused)
	check(t, r.PausedAt != nil, "no PausedAt")
	lc, _ := f.leased("", store.LeaseTo{})
	equal(t, "a leased start", lc.Run.Status, store.StatusPaused)
	equal(t, "its lease", lc.Lease, store.Lease{})
	sw := f.signalWithStart("k1", "go", `{}`, "")
	equal(t, "a signal-with-start", sw.Run.Status, store.StatusPaused)
	next, err := f.s.FinishAndContinue(f.ctx, c.Lease, nil, store.StatusContinued, json.RawMessage(`1`), nil, f.next(prev, `{"n":2}`, 1), nil)
	ok(t, err)
	equal(t, "a continue-as-new", next.Status, store.StatusPaused)
	f.noClaim()
	n, err := f.s.ResumeWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	equal(t, "runs resumed", n, 4)
}

// A resume may move the run to another version when it is still what was checked.
func testUnpauseMove(t *testing.T, f *fixture) {
	m2 := f.putModule(f.tenant, []byte("module-v2"), false, wf(wfName, "v2"))
	r := f.run()
	c := f.claim(r.ID, longLease)
	ok(t, f.s.CommitStep(f.ctx, c.Lease, f.runStep(r.ID, 0, "a"), longLease))
	paused, err := f.s.HoldPaused(f.ctx, c.Lease, nil, true)
	ok(t, err)
	check(t, paused, "not held")
	_, err = f.s.UnpauseRun(f.ctx, f.tenant, r.ID, &store.RunMove{RunID: r.ID, From: f.digest, Entries: 2, Version: "v2", Digest: m2.Digest})
	check(t, errors.Is(err, store.ErrConflict), "a move of a run not as checked: %v, want ErrConflict", err)
	equal(t, "still paused", f.getRun(r.ID).Status, store.StatusPaused)
	got, err := f.s.UnpauseRun(f.ctx, f.tenant, r.ID, &store.RunMove{RunID: r.ID, From: f.digest, Entries: 1, Version: "v2", Digest: m2.Digest})
	ok(t, err)
	equal(t, "version", got.Version, "v2")
	equal(t, "digest", got.Digest, m2.Digest)
	equal(t, "status", got.Status, store.StatusRunning)
}

// The runs gauge counts paused runs as paused.
func testPausedCounted(t *testing.T, f *fixture) {
	r := f.run()
	_, err := f.s.PauseRun(f.ctx, f.tenant, r.ID)
	ok(t, err)
	counts, err := f.s.CountRunStates(f.ctx)
	ok(t, err)
	var paused, queued int
	for _, c := range counts {
		if c.TenantID != f.tenant {
			continue
		}
		switch c.State {
		case store.StatePaused:
			paused = c.Runs
		case store.StateQueued:
			queued = c.Runs
		}
	}
	equal(t, "paused", paused, 1)
	equal(t, "queued", queued, 0)
}

// Runs created while their workflow is being paused are either paused by the pause or created
// paused: once both are done, none is left to run.
func testPauseRace(t *testing.T, f *fixture) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 5 {
				_, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1",
					Digest: f.digest, Input: json.RawMessage(`{}`), RetentionDays: 1})
				if err != nil {
					t.Errorf("create run: %v", err)
				}
			}
		}()
	}
	close(start)
	_, err := f.s.PauseWorkflow(f.ctx, f.tenant, wfName, "")
	ok(t, err)
	wg.Wait()
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Limit: 100})
	ok(t, err)
	equal(t, "runs", len(runs), 40)
	for _, r := range runs {
		equal(t, "status of "+r.ID, r.Status, store.StatusPaused)
	}
	f.noClaim()
}
