package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/store"
)

// Exercise runs the whole suite against the stores newStore makes. newStore is called once
// per subtest and must return an empty, migrated store that the test owns; it registers its
// own cleanup with t.Cleanup. Where the suite needs time to pass (a lease to run out, a
// retention to pass, two instants to differ) it sleeps: the store keeps real time, as
// Postgres does with its own clock, which no test can move.
func Exercise(t *testing.T, newStore func(t *testing.T) store.Store) {
	exercise(t, func(t *testing.T) (store.Store, *clock.Fake) { return newStore(t), nil })
}

// ExerciseOnClock is Exercise for a store that reads the clock it is given (the embedded
// store): each subtest gets a clock.Fake, set to the time it starts, and where the suite
// needs time to pass it moves that clock instead of sleeping. The store reads it through
// ticking, so two reads in a row never give one instant, as no real clock would for two
// writes in a row (the suite's ordering checks rely on that).
func ExerciseOnClock(t *testing.T, newStore func(t *testing.T, clk clock.Clock) store.Store) {
	exercise(t, func(t *testing.T) (store.Store, *clock.Fake) {
		clk := clock.NewFake(time.Now())
		return newStore(t, ticking{clk}), clk
	})
}

// ticking is a Fake that moves a microsecond, the stores' precision, each time it is read.
type ticking struct{ *clock.Fake }

func (c ticking) Now() time.Time {
	c.Advance(time.Microsecond)
	return c.Fake.Now()
}

func exercise(t *testing.T, newStore func(t *testing.T) (store.Store, *clock.Fake)) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Modules", moduleTests},
		{"Runs", runTests},
		{"Claims", claimTests},
		{"Resume", resumeTests},
		{"Leased", leasedTests},
		{"Fencing", fencingTests},
		{"Waits", waitTests},
		{"SignalWithStart", signalWithStartTests},
		{"Continuation", continuationTests},
		{"Cancel", cancelTests},
		{"Restart", restartTests},
		{"Broadcast", broadcastTests},
		{"RunStates", runStateTests},
		{"Notices", noticeTests},
		{"Tenancy", tenancyTests},
		{"Capabilities", capabilityTests},
		{"Matching", matchingTests},
		{"Retention", retentionTests},
		{"Races", raceTests},
		{"Faults", faultTests},
		{"Snapshots", snapshotTests},
		{"JournalWindow", windowTests},
		{"Schedules", scheduleTests},
		{"Console", consoleTests},
		{"Upgrades", upgradeTests},
		{"Children", childTests},
		{"Parallel", parallelTests},
		{"Pause", pauseTests},
		{"RunLog", runLogTests},
		{"Flow", flowTests},
		{"Hooks", hookTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, setup(t, newStore))
				})
			}
		})
	}
}

// test is one subtest; it gets a fixture of its own.
type test struct {
	name string
	run  func(t *testing.T, f *fixture)
}

// fixture is one subtest's store with a tenant and a deployed module.
type fixture struct {
	t   *testing.T
	ctx context.Context
	s   store.Store
	// clk is the store's clock when the test may move it; nil for a store on real time.
	clk    *clock.Fake
	tenant string
	// digest is the module that binds workflow wfName version "v1", which run() starts.
	digest string
}

const (
	longLease = time.Hour
	wfName    = "wf"
)

func setup(t *testing.T, newStore func(*testing.T) (store.Store, *clock.Fake)) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: t.Context(), tenant: "tenant-" + randomHex(4)}
	f.s, f.clk = newStore(t)
	ok(t, f.s.EnsureTenant(f.ctx, f.tenant))
	ok(t, f.s.EnsureTenant(f.ctx, f.tenant)) // idempotent
	f.digest = f.putModule(f.tenant, []byte("module-v1"), false, wf(wfName, "v1")).Digest
	return f
}

// module makes a module record from its bytes.
func module(tenant string, b []byte) store.Module {
	sum := sha256.Sum256(b)
	return store.Module{TenantID: tenant, Digest: hex.EncodeToString(sum[:]), Size: len(b), ABIVersion: abi.Version, Bytes: b}
}

func wf(name, version string) store.Workflow {
	return store.Workflow{Name: name, Version: version}
}

// putModule stores b for tenant, binding workflows, and fails the test on error.
func (f *fixture) putModule(tenant string, b []byte, replace bool, workflows ...store.Workflow) store.Module {
	f.t.Helper()
	m := module(tenant, b)
	for i := range workflows {
		workflows[i].TenantID, workflows[i].Digest = tenant, m.Digest
	}
	_, err := f.s.PutModule(f.ctx, m, workflows, replace)
	ok(f.t, err)
	return m
}

// run creates a run of workflow wfName v1 for the fixture's tenant.
func (f *fixture) run() store.Run {
	f.t.Helper()
	return f.runOf(f.tenant, wfName, "v1", f.digest, "")
}

func (f *fixture) runOf(tenant, workflow, version, digest, key string) store.Run {
	f.t.Helper()
	r, created, err := f.s.CreateRun(f.ctx, store.NewRun{
		TenantID: tenant, Workflow: workflow, Version: version, Digest: digest,
		Input: json.RawMessage(`{"n":1}`), IdempotencyKey: key, RetentionDays: 7,
	})
	ok(f.t, err)
	if !created {
		f.t.Fatalf("create run: created = false for a new run")
	}
	return r
}

// claim claims the one runnable run, which must be runID.
func (f *fixture) claim(runID string, leaseFor time.Duration) store.Claim {
	f.t.Helper()
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: leaseFor})
	ok(f.t, err)
	if len(claims) != 1 || claims[0].Run.ID != runID {
		f.t.Fatalf("claim: got %d claims %v, want exactly run %s", len(claims), claimIDs(claims), runID)
	}
	return claims[0]
}

// noClaim checks that nothing is runnable now.
func (f *fixture) noClaim() {
	f.t.Helper()
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(f.t, err)
	if len(claims) != 0 {
		f.t.Fatalf("claim: got runs %v, want none runnable", claimIDs(claims))
	}
}

func (f *fixture) getRun(id string) store.Run {
	f.t.Helper()
	r, err := f.s.GetRun(f.ctx, f.tenant, id)
	ok(f.t, err)
	return r
}

func (f *fixture) steps(runID string) []store.Step {
	f.t.Helper()
	steps, err := f.s.ListSteps(f.ctx, f.tenant, runID)
	ok(f.t, err)
	return steps
}

// step returns the journal row key of the run; fails when there is none.
func (f *fixture) step(runID, key string) store.Step {
	f.t.Helper()
	for _, s := range f.steps(runID) {
		if s.Key == key {
			return s
		}
	}
	f.t.Fatalf("run %s has no step %q", runID, key)
	return store.Step{}
}

func claimIDs(claims []store.Claim) []string {
	ids := make([]string, len(claims))
	for i, c := range claims {
		ids[i] = c.Run.ID
	}
	return ids
}

// now is the current time at the precision stores keep (microseconds), in UTC.
// now is the store's time, at the precision the stores keep (microseconds).
func (f *fixture) now() time.Time {
	if f.clk != nil {
		return ticking{f.clk}.Now().UTC().Truncate(time.Microsecond)
	}
	return time.Now().UTC().Truncate(time.Microsecond)
}

// pass lets d of the store's time go by: a fake clock is moved, real time is slept through.
func (f *fixture) pass(d time.Duration) {
	if f.clk != nil {
		f.clk.Advance(d)
		return
	}
	time.Sleep(d)
}

func ptr[T any](v T) *T { return &v }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// waitStep is a freshly reached wait step, the way the engine hands it to ReachWait.
func (f *fixture) waitStep(runID string, seq int, key, event, match string, timeout *time.Time) store.Step {
	s := store.Step{RunID: runID, Seq: seq, Key: key, Kind: store.KindWait, Status: store.StepWaiting,
		Event: event, WakeAt: timeout, StartedAt: f.now()}
	if match != "" {
		s.Match = json.RawMessage(match)
	}
	return s
}
