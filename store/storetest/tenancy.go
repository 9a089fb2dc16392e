package storetest

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

var tenancyTests = []test{
	{"TenantsAndTokens", testTenantsAndTokens},
	{"TokensAreScopedToTheirTenant", testTokensAreScopedToTheirTenant},
	{"ClaimsRespectTenantConcurrency", testClaimsRespectTenantConcurrency},
	{"SweepDeletesOnlyExpiredTerminalRuns", testSweepDeletesOnlyExpiredTerminalRuns},
	{"ListRunsByInputAndTime", testListRunsByInputAndTime},
	{"TriggeredRunsAndIdempotentEvents", testTriggeredRunsAndIdempotentEvents},
}

func hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

func testTenantsAndTokens(t *testing.T, f *fixture) {
	id := "acme-" + randomHex(4)
	limits := store.Limits{Concurrency: 3, MaxInputBytes: 1000, AllowedHosts: []string{"api.example.com", "*.stripe.com"}}
	created, err := f.s.CreateTenant(f.ctx, store.Tenant{ID: id, Limits: limits}, store.Token{ID: "tok-" + id, Name: "first", Hash: hash(id + "-secret")})
	ok(t, err)
	equal(t, "tenant id", created.ID, id)
	deepEqual(t, "limits", created.Limits, limits)
	check(t, !created.CreatedAt.IsZero(), "created tenant has no creation time")

	_, err = f.s.CreateTenant(f.ctx, store.Tenant{ID: id}, store.Token{ID: "tok2-" + id, Hash: hash(id + "-other")})
	isErr(t, "second create", err, store.ErrConflict)

	got, err := f.s.Authenticate(f.ctx, hash(id+"-secret"))
	ok(t, err)
	equal(t, "authenticated tenant", got.TenantID, id)
	equal(t, "authenticated token", got.ID, "tok-"+id)
	equal(t, "authenticated token's name", got.Name, "first")
	_, err = f.s.Authenticate(f.ctx, hash("nobody"))
	isErr(t, "unknown token", err, store.ErrNotFound)

	second, err := f.s.CreateToken(f.ctx, store.Token{ID: "tok3-" + id, TenantID: id, Name: "ci", Hash: hash(id + "-ci")})
	ok(t, err)
	equal(t, "token name", second.Name, "ci")
	_, err = f.s.CreateToken(f.ctx, store.Token{ID: "tok4-" + id, TenantID: id, Hash: hash(id + "-ci")})
	isErr(t, "same secret twice", err, store.ErrConflict)
	_, err = f.s.CreateToken(f.ctx, store.Token{ID: "tok5-" + id, TenantID: "no-such-tenant", Hash: hash(id + "-x")})
	isErr(t, "token for a missing tenant", err, store.ErrNotFound)

	revoked, err := f.s.RevokeToken(f.ctx, id, second.ID)
	ok(t, err)
	check(t, revoked.RevokedAt != nil, "revoked token has no revocation time")
	again, err := f.s.RevokeToken(f.ctx, id, second.ID)
	ok(t, err)
	check(t, again.RevokedAt.Equal(*revoked.RevokedAt), "revoking twice moved the revocation time")
	_, err = f.s.Authenticate(f.ctx, hash(id+"-ci"))
	isErr(t, "revoked token", err, store.ErrNotFound)

	tokens, err := f.s.ListTokens(f.ctx, id)
	ok(t, err)
	equal(t, "tokens listed", len(tokens), 2)
	for _, tok := range tokens {
		check(t, len(tok.Hash) == 0, "ListTokens returned a hash")
	}

	updated, err := f.s.SetTenantLimits(f.ctx, id, store.Limits{MemoryPages: 64})
	ok(t, err)
	deepEqual(t, "replaced limits", updated.Limits, store.Limits{MemoryPages: 64})
	read, err := f.s.GetTenant(f.ctx, id)
	ok(t, err)
	deepEqual(t, "limits read back", read.Limits, store.Limits{MemoryPages: 64})
	_, err = f.s.GetTenant(f.ctx, "no-such-tenant")
	isErr(t, "missing tenant", err, store.ErrNotFound)
	_, err = f.s.SetTenantLimits(f.ctx, "no-such-tenant", store.Limits{})
	isErr(t, "limits of a missing tenant", err, store.ErrNotFound)

	all, err := f.s.ListTenants(f.ctx)
	ok(t, err)
	var ids []string
	for _, tn := range all {
		ids = append(ids, tn.ID)
	}
	check(t, slices.Contains(ids, id) && slices.Contains(ids, f.tenant), "ListTenants = %v, missing %s or %s", ids, id, f.tenant)
}

func testTokensAreScopedToTheirTenant(t *testing.T, f *fixture) {
	a, b := "a-"+randomHex(4), "b-"+randomHex(4)
	_, err := f.s.CreateTenant(f.ctx, store.Tenant{ID: a}, store.Token{ID: "tok-" + a, Hash: hash(a)})
	ok(t, err)
	_, err = f.s.CreateTenant(f.ctx, store.Tenant{ID: b}, store.Token{ID: "tok-" + b, Hash: hash(b)})
	ok(t, err)
	_, err = f.s.RevokeToken(f.ctx, b, "tok-"+a)
	isErr(t, "revoking another tenant's token", err, store.ErrNotFound)
	got, err := f.s.Authenticate(f.ctx, hash(a))
	ok(t, err)
	equal(t, "a's token still works", got.TenantID, a)
	tokens, err := f.s.ListTokens(f.ctx, b)
	ok(t, err)
	equal(t, "b sees only its token", len(tokens), 1)
	equal(t, "b's token", tokens[0].ID, "tok-"+b)
}

func testClaimsRespectTenantConcurrency(t *testing.T, f *fixture) {
	capped := "capped-" + randomHex(4)
	_, err := f.s.CreateTenant(f.ctx, store.Tenant{ID: capped, Limits: store.Limits{Concurrency: 2}}, store.Token{ID: "tok-" + capped, Hash: hash(capped)})
	ok(t, err)
	digest := f.putModule(capped, []byte("capped-module"), false, wf(wfName, "v1")).Digest
	for range 5 {
		f.runOf(capped, wfName, "v1", digest, "")
	}
	for range 5 {
		f.run()
	}
	// The fixture's tenant has no cap of its own, so the default cap of 4 applies to it.
	p := store.ClaimParams{Owner: "test", Limit: 20, LeaseFor: longLease, TenantConcurrency: 4}
	first, err := f.s.ClaimRuns(f.ctx, p)
	ok(t, err)
	count := func(claims []store.Claim) map[string]int {
		n := map[string]int{}
		for _, c := range claims {
			n[c.Run.TenantID]++
		}
		return n
	}
	deepEqual(t, "first claim", count(first), map[string]int{capped: 2, f.tenant: 4})
	second, err := f.s.ClaimRuns(f.ctx, p)
	ok(t, err)
	equal(t, "claims while every slot is held", len(second), 0)

	// Letting one run of each tenant go frees one slot each.
	var relCapped, relOwn bool
	for _, c := range first {
		if c.Run.TenantID == capped && !relCapped {
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
			relCapped = true
		}
		if c.Run.TenantID == f.tenant && !relOwn {
			ok(t, f.s.Suspend(f.ctx, c.Lease, nil, ptr(f.now().Add(time.Hour))))
			relOwn = true
		}
	}
	third, err := f.s.ClaimRuns(f.ctx, p)
	ok(t, err)
	deepEqual(t, "claim after one run each let go", count(third), map[string]int{capped: 1, f.tenant: 1})

	// Without a default cap the capped tenant still holds its own 2, and nothing else is runnable.
	p.TenantConcurrency = 0
	fourth, err := f.s.ClaimRuns(f.ctx, p)
	ok(t, err)
	deepEqual(t, "claim with no default cap", count(fourth), map[string]int{})
	equal(t, "nothing else runnable", len(fourth), 0)
}

func testSweepDeletesOnlyExpiredTerminalRuns(t *testing.T, f *fixture) {
	create := func(retention int) store.Run {
		r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(`{}`), RetentionDays: retention})
		ok(t, err)
		return r
	}
	// Retention 0 expires the moment the run ends; 7 days keeps it.
	expiredDone, expiredFailed, expiredCancelled := create(0), create(0), create(0)
	kept, live, nondet := create(7), create(0), create(0)
	claims, err := f.s.ClaimRuns(f.ctx, store.ClaimParams{Owner: "test", Limit: 10, LeaseFor: longLease})
	ok(t, err)
	equal(t, "claimed", len(claims), 6)
	sig := f.sendSignal(expiredDone.ID)
	for _, c := range claims {
		switch c.Run.ID {
		case expiredDone.ID, kept.ID:
			ok(t, f.s.CommitStep(f.ctx, c.Lease, store.Step{RunID: c.Run.ID, Key: "s", Kind: store.KindRun, Status: store.StepCompleted,
				Output: json.RawMessage(`1`), Attempt: 1, StartedAt: f.now(), CompletedAt: ptr(f.now())}, longLease))
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusCompleted, json.RawMessage(`1`), nil, nil))
		case expiredFailed.ID:
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusFailed, nil, errInfo("boom"), nil))
		case nondet.ID:
			ok(t, f.s.Finish(f.ctx, c.Lease, store.StatusNondeterministic, nil, errInfo("replay diverged"), nil))
		}
	}
	_, err = f.s.CancelRun(f.ctx, f.tenant, expiredCancelled.ID)
	ok(t, err)
	f.pass(2 * time.Millisecond) // expiry is "before now": let now move past it

	n, err := f.s.SweepExpired(f.ctx, 2)
	ok(t, err)
	equal(t, "first batch", n, 2)
	n, err = f.s.SweepExpired(f.ctx, 1000)
	ok(t, err)
	equal(t, "second batch", n, 1)
	n, err = f.s.SweepExpired(f.ctx, 1000)
	ok(t, err)
	equal(t, "nothing left to sweep", n, 0)

	for _, id := range []string{expiredDone.ID, expiredFailed.ID, expiredCancelled.ID} {
		_, err := f.s.GetRun(f.ctx, f.tenant, id)
		isErr(t, "swept run", err, store.ErrNotFound)
		_, err = f.s.ListSteps(f.ctx, f.tenant, id)
		isErr(t, "swept run's journal", err, store.ErrNotFound)
	}
	for _, id := range []string{kept.ID, live.ID, nondet.ID} {
		f.getRun(id)
	}
	equal(t, "kept run's journal", len(f.steps(kept.ID)), 1)
	_ = sig
}

// sendSignal buffers an event for the run, so that sweeping it must take the event too.
func (f *fixture) sendSignal(runID string) bool {
	f.t.Helper()
	delivered, err := deliveredOf(f.s.Signal(f.ctx, store.SignalParams{TenantID: f.tenant, RunID: runID, Event: "ping", Payload: json.RawMessage(`{}`), MaxBuffered: 10}))
	ok(f.t, err)
	return delivered
}

func testListRunsByInputAndTime(t *testing.T, f *fixture) {
	mk := func(input string) store.Run {
		r, _, err := f.s.CreateRun(f.ctx, store.NewRun{TenantID: f.tenant, Workflow: wfName, Version: "v1", Digest: f.digest,
			Input: json.RawMessage(input), RetentionDays: 7})
		ok(t, err)
		return r
	}
	a := mk(`{"customer":{"id":"c1","tier":"gold"},"amount":10}`)
	b := mk(`{"customer":{"id":"c2"},"amount":10}`)
	f.pass(5 * time.Millisecond)
	mid := f.now()
	f.pass(5 * time.Millisecond)
	c := mk(`{"customer":{"id":"c1"},"amount":20}`)

	ids := func(f2 store.RunFilter) []string {
		t.Helper()
		runs, _, err := f.s.ListRuns(f.ctx, f.tenant, f2)
		ok(t, err)
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	deepEqual(t, "input customer c1", ids(store.RunFilter{Input: json.RawMessage(`{"customer":{"id":"c1"}}`)}), []string{c.ID, a.ID})
	deepEqual(t, "input amount 10", ids(store.RunFilter{Input: json.RawMessage(`{"amount":10}`)}), []string{b.ID, a.ID})
	equal(t, "input matching nothing", len(ids(store.RunFilter{Input: json.RawMessage(`{"amount":"10"}`)})), 0)
	deepEqual(t, "since", ids(store.RunFilter{Since: mid}), []string{c.ID})
	deepEqual(t, "until", ids(store.RunFilter{Until: mid}), []string{b.ID, a.ID})
	deepEqual(t, "since and input", ids(store.RunFilter{Since: mid, Input: json.RawMessage(`{"amount":10}`)}), []string(nil))

	// Paging through a filtered list visits each match once.
	var paged []string
	cursor := ""
	for {
		runs, next, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Input: json.RawMessage(`{"customer":{"id":"c1"}}`), Limit: 1, Cursor: cursor})
		ok(t, err)
		for _, r := range runs {
			paged = append(paged, r.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	deepEqual(t, "paged", paged, []string{c.ID, a.ID})
}

func testTriggeredRunsAndIdempotentEvents(t *testing.T, f *fixture) {
	trig := func(name, version string, triggers ...string) store.Workflow {
		w := wf(name, version)
		w.Triggers = triggers
		return w
	}
	f.putModule(f.tenant, []byte("triggered-v1"), false, trig("on-signup", "1", "user.created"), trig("on-other", "1", "other"))
	// A later version that no longer declares the trigger takes its workflow out.
	f.putModule(f.tenant, []byte("triggered-v2"), false, trig("was-triggered", "1", "user.created"))
	f.putModule(f.tenant, []byte("triggered-v3"), false, trig("was-triggered", "2"))

	wfs, err := f.s.TriggeredBy(f.ctx, f.tenant, "user.created")
	ok(t, err)
	equal(t, "triggered workflows", len(wfs), 1)
	equal(t, "triggered workflow", wfs[0].Name, "on-signup")
	none, err := f.s.TriggeredBy(f.ctx, "other-tenant", "user.created")
	ok(t, err)
	equal(t, "another tenant's triggers", len(none), 0)

	waiting := f.parkedRun(f.tenant, f.digest, "user.created", `{"plan":"pro"}`)
	payload := json.RawMessage(`{"plan":"pro","user":"u1"}`)
	params := store.BroadcastParams{TenantID: f.tenant, Event: "user.created", Payload: payload, EventID: "evt-1",
		Start: []store.NewRun{{TenantID: f.tenant, Workflow: wfs[0].Name, Version: wfs[0].Version, Digest: wfs[0].Digest,
			Input: payload, IdempotencyKey: "event:user.created:evt-1", RetentionDays: 7}}}
	first, err := f.s.Broadcast(f.ctx, params)
	ok(t, err)
	equal(t, "resolved", first.Resolved, 1)
	check(t, !first.Duplicate, "the first sending is a duplicate")
	equal(t, "started", len(first.Started), 1)
	started := first.Started[0]
	equal(t, "started workflow", started.Workflow, "on-signup")
	equal(t, "started status", started.Status, store.StatusPending)
	equalJSON(t, "started input", started.Input, string(payload))
	equal(t, "waiting run resolved", f.step(waiting.ID, "w").Status, store.StepCompleted)

	again, err := f.s.Broadcast(f.ctx, params)
	ok(t, err)
	check(t, again.Duplicate, "the same event id twice is not a duplicate")
	equal(t, "duplicate resolves nothing", again.Resolved, 0)
	equal(t, "duplicate reports the first run", len(again.Started), 1)
	equal(t, "duplicate's run", again.Started[0].ID, started.ID)
	runs, _, err := f.s.ListRuns(f.ctx, f.tenant, store.RunFilter{Workflow: "on-signup"})
	ok(t, err)
	equal(t, "runs of the triggered workflow", len(runs), 1)

	// The same id under another event name, or without an id, is a new event.
	other, err := f.s.Broadcast(f.ctx, store.BroadcastParams{TenantID: f.tenant, Event: "other", Payload: payload, EventID: "evt-1"})
	ok(t, err)
	check(t, !other.Duplicate, "an event id is scoped by event name")
}

func isErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

func deepEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func errInfo(msg string) *abi.ErrorInfo { return &abi.ErrorInfo{Code: "test", Message: msg} }
