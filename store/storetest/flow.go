package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// Flow control (store/flow.go): concurrency, rate, debounce and priority of a workflow's runs,
// however they are started (a client's CreateLeasedRun; flow_starts.go: the others).
var flowTests = []test{
	{"ConcurrencyHoldsRunsPastTheLimit", testFlowConcurrencyHolds},
	{"ConcurrencyKeyUnderConcurrentStarts", func(t *testing.T, f *fixture) { flowSharedKey(t, f, 1, f.s, f.s) }},
	{"ConcurrencyKeysUnderConcurrentStarts", func(t *testing.T, f *fixture) { flowSharedKey(t, f, 8, f.s, f.s) }},
	{"HeldRunCancelledLeavesTheQueue", testFlowHeldRunCancelled},
	{"ContinuationKeepsTheSlot", testFlowContinuationKeepsTheSlot},
	{"RateStartsAtMostLimitPerPeriod", testFlowRate},
	{"DebounceLeavesOneRunWithTheLastInput", testFlowDebounce},
	{"PriorityOrdersTheClaim", testFlowPriority},
	{"HostileKeysAreRefused", testFlowHostileKeys},
	{"WithoutFlowNothingChanges", testFlowNone},
	{"EveryWayOfStartingObeysIt", testFlowEveryStart},
	{"DebouncesTriggeredStarts", testFlowTriggerDebounced},
}

// flowWorkflow binds a workflow named name with flow to a module of its own, and returns the
// module's digest.
func (f *fixture) flowWorkflow(name string, flow abi.Flow) string {
	f.t.Helper()
	return f.putModule(f.tenant, []byte("flow module "+name), false, store.Workflow{Name: name, Version: "v1", Flow: &flow}).Digest
}

// startFlow starts a run of workflow name, as a client's start does, with no host to lease it.
func startFlow(t *testing.T, f *fixture, s store.Store, name, input string, priority *int) (store.Run, bool) {
	t.Helper()
	c, created, err := s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: name,
		Input: json.RawMessage(input), Priority: priority, DefaultRetentionDays: 7}, store.LeaseTo{})
	ok(t, err)
	equal(t, "lease of a run under flow control", c.Lease, store.Lease{})
	return c.Run, created
}

// claimAll claims every runnable run.
func (f *fixture) claimAll() []store.Claim {
	f.t.Helper()
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 100, LeaseFor: longLease})
	ok(f.t, err)
	return claims
}

func (f *fixture) flowOf(runID string) store.RunFlow {
	f.t.Helper()
	fl, found, err := f.s.RunFlow(f.ctx, f.tenant, runID)
	ok(f.t, err)
	check(f.t, found, "run %s has no flow state", runID)
	return fl
}

func testFlowConcurrencyHolds(t *testing.T, f *fixture) {
	f.flowWorkflow("fc", abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.customer", Limit: 2}})
	var a []store.Run
	for i := range 4 {
		r, created := startFlow(t, f, f.s, "fc", fmt.Sprintf(`{"customer":"a","i":%d}`, i), nil)
		check(t, created, "start %d was not created", i)
		equal(t, "status", r.Status, store.StatusPending)
		a = append(a, r)
	}
	b, _ := startFlow(t, f, f.s, "fc", `{"customer":"b"}`, nil)
	check(t, a[2].AvailableAt == nil && a[3].AvailableAt == nil, "runs past the limit are claimable")

	claims := f.claimAll()
	got := claimIDs(claims)
	slices.Sort(got)
	want := []string{a[0].ID, a[1].ID, b.ID}
	slices.Sort(want)
	equal(t, "claimed", strings.Join(got, ","), strings.Join(want, ","))

	held := f.flowOf(a[2].ID)
	check(t, held.Concurrency != nil && held.Concurrency.Held, "run past the limit is not shown held: %+v", held.Concurrency)
	equal(t, "key", held.Concurrency.Key, "a")
	equal(t, "limit", held.Concurrency.Limit, 2)
	equal(t, "active", held.Concurrency.Active, 2)
	check(t, !f.flowOf(a[0].ID).Concurrency.Held, "a running run is shown held")

	// An end hands its slot to the oldest waiting run of its key, and only one.
	var first store.Claim
	for _, c := range claims {
		if c.Run.ID == a[0].ID {
			first = c
		}
	}
	ok(t, f.s.Finish(f.ctx, first.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
	next := f.claimAll()
	equal(t, "claimed after an end", strings.Join(claimIDs(next), ","), a[2].ID)
	f.noClaim()
	equal(t, "active after the hand-over", f.flowOf(a[3].ID).Concurrency.Active, 2)

	// A failed run frees its slot too.
	for _, c := range claims {
		if c.Run.ID == a[1].ID {
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, &abi.ErrorInfo{Code: "boom", Message: "boom"}, nil))
		}
	}
	last := f.claimAll()
	equal(t, "claimed after a failure", strings.Join(claimIDs(last), ","), a[3].ID)
	ok(t, f.s.Finish(f.ctx, next[0].Lease, store.StatusCompleted, nil, nil, nil))
	ok(t, f.s.Finish(f.ctx, last[0].Lease, store.StatusCompleted, nil, nil, nil))
	// With no run of the key left, the next start of it runs at once.
	again, _ := startFlow(t, f, f.s, "fc", `{"customer":"a"}`, nil)
	check(t, again.AvailableAt != nil, "a start of a free key is held")
	equal(t, "active of a fresh key", f.flowOf(again.ID).Concurrency.Active, 1)
}

func testFlowHeldRunCancelled(t *testing.T, f *fixture) {
	f.flowWorkflow("fx", abi.Flow{Concurrency: &abi.FlowConcurrency{Limit: 1}})
	running, _ := startFlow(t, f, f.s, "fx", `{}`, nil)
	waiting, _ := startFlow(t, f, f.s, "fx", `{}`, nil)
	behind, _ := startFlow(t, f, f.s, "fx", `{}`, nil)
	c := f.claim(running.ID, longLease)
	_, err := f.s.CancelRun(f.ctx, f.tenant, waiting.ID)
	ok(t, err)
	// Cancelling a waiting run frees no slot.
	f.noClaim()
	check(t, !f.flowOf(waiting.ID).Concurrency.Held, "a cancelled run still waits")
	ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, nil, nil, nil))
	f.claim(behind.ID, longLease)
}

func testFlowContinuationKeepsTheSlot(t *testing.T, f *fixture) {
	f.flowWorkflow("fcont", abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.k", Limit: 1}})
	first, _ := startFlow(t, f, f.s, "fcont", `{"k":1}`, nil)
	waiting, _ := startFlow(t, f, f.s, "fcont", `{"k":1}`, nil)
	c := f.claim(first.ID, longLease)
	next, err := f.s.FinishAndContinue(f.ctx, c.Lease, nil, store.StatusContinued, nil, nil, store.NewRun{
		TenantID: f.tenant, Workflow: "fcont", Version: "v1", Digest: first.Digest, Input: json.RawMessage(`{"k":1}`), RetentionDays: 7}, nil)

	ok(t, err)
	// The continuation runs in its predecessor's slot; the waiting run still waits.
	cn := f.claim(next.ID, longLease)
	check(t, f.flowOf(waiting.ID).Concurrency.Held, "the continuation's start let a waiting run in")
	ok(t, f.s.Finish(f.ctx, cn.Lease, store.StatusCompleted, nil, nil, nil))
	f.claim(waiting.ID, longLease)
}

// FlowSharedKey is the conformance test of a concurrency key under concurrent starts and
// claims: 100 runs of one key with limit 2 started at once through the given stores (two
// Postgres stores on one schema are two hosts), claimed and finished by claimers on each, are
// never more than 2 claimed at once.
func FlowSharedKey(t *testing.T, stores ...store.Store) {
	f := &fixture{t: t, ctx: t.Context(), s: stores[0], tenant: "tenant-" + randomHex(4)}
	ok(t, f.s.EnsureTenant(f.ctx, f.tenant))
	flowSharedKey(t, f, 1, stores...)
	flowSharedKey(t, f, 8, stores...)
}

// flowSharedKey runs 100 runs spread over keys keys; with one key, a claimer holds its run
// until a second runs beside it, so the limit must be reached. With many, the runs of several
// keys end together (a group commit ends them in one transaction on Postgres).
func flowSharedKey(t *testing.T, f *fixture, keys int, stores ...store.Store) {
	const runs, limit = 100, 2
	name := fmt.Sprintf("fshared-%d", keys)
	f.flowWorkflow(name, abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.customerId", Limit: limit}})
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			s := stores[i%len(stores)]
			_, _, err := s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: name,
				Input: json.RawMessage(fmt.Sprintf(`{"customerId":"c-%d","i":%d}`, i%keys, i)), DefaultRetentionDays: 7}, store.LeaseTo{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		ok(t, err)
	}
	var (
		inFlight, most, done atomic.Int64
		mu                   sync.Mutex
		seen                 = map[string]bool{}
		perKey               = map[string]int{}
		over                 []string
	)
	claimers := 4
	for c := range claimers {
		wg.Go(func() {
			s := stores[c%len(stores)]
			owner := fmt.Sprintf("claimer-%d", c)
			for done.Load() < runs {
				claims, err := s.ClaimRuns(f.ctx, store.ClaimParams{Owner: owner, Limit: 3, LeaseFor: longLease})
				if err != nil {
					t.Error(err)
					return
				}
				for _, cl := range claims {
					mu.Lock()
					if seen[cl.Run.ID] {
						t.Errorf("run %s claimed twice", cl.Run.ID)
					}
					seen[cl.Run.ID] = true
					var in struct{ CustomerID string }
					if err := json.Unmarshal(cl.Run.Input, &in); err != nil {
						t.Error(err)
					}
					key := in.CustomerID
					perKey[key]++
					if perKey[key] > limit {
						over = append(over, fmt.Sprintf("%s: %d", key, perKey[key]))
					}
					n := int64(perKey[key])
					mu.Unlock()
					inFlight.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					// With one key, hold the run until a second one runs beside it (while two
					// can), so the test sees the limit reached, not merely never passed.
					for i := 0; keys == 1 && i < 2000 && inFlight.Load() < limit && runs-done.Load() >= limit; i++ {
						time.Sleep(time.Millisecond)
					}
					inFlight.Add(-1)
					mu.Lock()
					perKey[key]--
					mu.Unlock()
					if err := s.Finish(f.ctx, cl.Lease, store.StatusCompleted, nil, nil, nil); err != nil {
						t.Error(err)
						return
					}
					done.Add(1)
				}
				if len(claims) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	equal(t, "runs finished", done.Load(), int64(runs))
	check(t, len(over) == 0 && most.Load() <= limit, "runs of one key ran at once past the limit of %d: %v", limit, over)
	if keys == 1 {
		equal(t, "most runs of the key at once", most.Load(), int64(limit))
	}
}

func testFlowRate(t *testing.T, f *fixture) {
	const limit, period = 3, 2 * time.Second
	f.flowWorkflow("frate", abi.Flow{Rate: &abi.FlowRate{Key: "$.k", Limit: limit, PeriodMs: period.Milliseconds()}})
	var at []time.Time
	for i := range 10 {
		r, created := startFlow(t, f, f.s, "frate", `{"k":"x"}`, nil)
		check(t, created, "start %d was refused", i)
		check(t, r.AvailableAt != nil, "a throttled run has no start")
		at = append(at, *r.AvailableAt)
		fl := f.flowOf(r.ID)
		check(t, fl.Rate != nil && fl.Rate.Key == "x" && fl.Rate.Limit == limit && fl.Rate.Period == period, "rate state %+v", fl.Rate)
	}
	other, _ := startFlow(t, f, f.s, "frate", `{"k":"y"}`, nil)
	// Whatever the clock: no window of the period holds more than limit starts.
	for i := limit; i < len(at); i++ {
		check(t, at[i].Sub(at[i-limit]) >= period, "starts %d and %d are %v apart; %d per %v allowed",
			i-limit, i, at[i].Sub(at[i-limit]), limit, period)
	}
	check(t, !other.AvailableAt.After(other.CreatedAt), "another key was throttled with this one: available at %v, created %v", other.AvailableAt, other.CreatedAt)
	if f.clk == nil {
		return
	}
	// On a clock the test moves: limit runs of the key are claimable per period, not more.
	claims := f.claimAll()
	equal(t, "claimable at once", len(claims), limit+1) // and the other key's
	for range 2 {
		f.noClaim()
		f.pass(period)
		equal(t, "claimable a period later", len(f.claimAll()), limit)
	}
}

func testFlowDebounce(t *testing.T, f *fixture) {
	const period = time.Hour
	f.flowWorkflow("fdeb", abi.Flow{Debounce: &abi.FlowDebounce{Key: "$.user", PeriodMs: period.Milliseconds()}})
	before := f.now()
	first, created := startFlow(t, f, f.s, "fdeb", `{"user":"u","v":1}`, nil)
	check(t, created, "the first start was not created")
	check(t, first.AvailableAt != nil && !first.AvailableAt.Before(before.Add(period)), "a debounced run starts at %v", first.AvailableAt)
	f.noClaim()
	second, created := startFlow(t, f, f.s, "fdeb", `{"user":"u","v":2}`, nil)
	check(t, !created, "a debounced start created a run")
	equal(t, "run of the second start", second.ID, first.ID)
	third, _ := startFlow(t, f, f.s, "fdeb", `{"user":"u","v":3}`, nil)
	equal(t, "run of the third start", third.ID, first.ID)
	check(t, third.AvailableAt.After(*first.AvailableAt), "a later start did not push the run's start")
	otherUser, created := startFlow(t, f, f.s, "fdeb", `{"user":"w","v":9}`, nil)
	check(t, created && otherUser.ID != first.ID, "another key's start joined this key's run")
	equalJSON(t, "input of the debounced run", f.getRun(first.ID).Input, `{"user":"u","v":3}`)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Workflow: "fdeb"})
	ok(t, err)
	equal(t, "runs", len(runs), 2)
	equal(t, "debounce key", f.flowOf(first.ID).Debounce.Key, "u")
	if f.clk == nil {
		return
	}
	f.pass(period + time.Second)
	claims := f.claimAll()
	equal(t, "claimed after the window", len(claims), 2)
	// Once the run began, a start of its key is a new run.
	fresh, created := startFlow(t, f, f.s, "fdeb", `{"user":"u","v":4}`, nil)
	check(t, created && fresh.ID != first.ID, "a start after the run began joined it")
}

func testFlowPriority(t *testing.T, f *fixture) {
	f.flowWorkflow("fprio", abi.Flow{Priority: 5, Concurrency: &abi.FlowConcurrency{Limit: 1000}})
	low, _ := startFlow(t, f, f.s, "fprio", `{"n":"low"}`, ptr(0))
	deflt, _ := startFlow(t, f, f.s, "fprio", `{"n":"default"}`, nil)
	high, _ := startFlow(t, f, f.s, "fprio", `{"n":"high"}`, ptr(60))
	later, _ := startFlow(t, f, f.s, "fprio", `{"n":"later"}`, ptr(-600))
	equal(t, "default priority", f.flowOf(deflt.ID).Priority, 5)
	// Without flow control, a start's priority orders its run the same way.
	plain, _, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName,
		Input: json.RawMessage(`{}`), Priority: ptr(30), DefaultRetentionDays: 7}, store.LeaseTo{})
	ok(t, err)
	var order []string
	for {
		claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 1, LeaseFor: longLease})
		ok(t, err)
		if len(claims) == 0 {
			break
		}
		order = append(order, claims[0].Run.ID)
	}
	equal(t, "claim order", strings.Join(order, ","), strings.Join([]string{high.ID, plain.Run.ID, deflt.ID, low.ID}, ","))
	check(t, f.getRun(later.ID).AvailableAt.After(f.now()), "a negative priority did not delay its run")
}

func testFlowHostileKeys(t *testing.T, f *fixture) {
	f.flowWorkflow("fhost", abi.Flow{Concurrency: &abi.FlowConcurrency{Key: "$.c.id", Limit: 2},
		Rate: &abi.FlowRate{Key: "$.c.id", Limit: abi.MaxFlowRate, PeriodMs: abi.MaxFlowPeriod.Milliseconds()}})
	for name, input := range map[string]string{
		"missing":     `{"x":1}`,
		"null":        `{"c":{"id":null}}`,
		"object":      `{"c":{"id":{}}}`,
		"not object":  `{"c":[1]}`,
		"absurd":      `{"c":{"id":"` + strings.Repeat("k", 100_000) + `"}}`,
		"NUL":         `{"c":{"id":"a\u0000b"}}`,
		"not JSON":    `{"c":`,
		"input array": `[1,2]`,
	} {
		_, _, err := f.s.CreateLeasedRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: "fhost",
			Input: json.RawMessage(input), DefaultRetentionDays: 7}, store.LeaseTo{Owner: "here", LeaseFor: longLease})
		// An input with a NUL, or no JSON, is not storable at all (the engine refuses it
		// first, abi.CheckJSON); the store refuses it either way.
		unstorable := name == "NUL" || name == "not JSON"
		check(t, errors.Is(err, abi.ErrFlowKey) || unstorable && errors.Is(err, store.ErrRefused),
			"%s key: err = %v, want abi.ErrFlowKey", name, err)
	}
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Workflow: "fhost"})
	ok(t, err)
	equal(t, "runs created by refused starts", len(runs), 0)
	// Keys that are odd but fine: unicode, a number past float64, the longest allowed.
	for _, input := range []string{`{"c":{"id":"客户-ü"}}`, `{"c":{"id":1e400}}`, `{"c":{"id":"` + strings.Repeat("k", abi.MaxFlowKeyLen) + `"}}`} {
		_, created := startFlow(t, f, f.s, "fhost", input, nil)
		check(t, created, "start with key %.40s was not created", input)
	}
}

func testFlowNone(t *testing.T, f *fixture) {
	c, created := f.leased("", store.LeaseTo{})
	check(t, created && c.Lease.Epoch == 1, "a run without flow control was not leased to its host")
	_, found, err := f.s.RunFlow(f.ctx, f.tenant, c.Run.ID)
	ok(t, err)
	check(t, !found, "a run without flow control has flow state")
	_, found, err = f.s.RunFlow(f.ctx, f.tenant, "not-a-run")
	ok(t, err)
	check(t, !found, "an unknown run has flow state")
}
