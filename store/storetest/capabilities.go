package storetest

import (
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

var capabilityTests = []test{
	{"Secrets", testSecrets},
	{"OutboundAuditTrail", testOutboundAuditTrail},
}

func testSecrets(t *testing.T, f *fixture) {
	first, err := f.s.PutSecret(f.ctx, f.tenant, "stripe", []byte("sk_1"))
	ok(t, err)
	equal(t, "name", first.Name, "stripe")
	check(t, len(first.Value) == 0, "PutSecret returned the value")
	time.Sleep(2 * time.Millisecond)
	second, err := f.s.PutSecret(f.ctx, f.tenant, "stripe", []byte("sk_2"))
	ok(t, err)
	check(t, second.UpdatedAt.After(first.UpdatedAt) && second.CreatedAt.Equal(first.CreatedAt), "replacing a secret: %+v after %+v", second, first)
	v, found, err := f.s.GetSecret(f.ctx, f.tenant, "stripe")
	ok(t, err)
	check(t, found && string(v) == "sk_2", "GetSecret = %q, %v", v, found)

	other := "other-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	_, found, err = f.s.GetSecret(f.ctx, other, "stripe")
	ok(t, err)
	check(t, !found, "another tenant reads the secret")
	_, err = f.s.PutSecret(f.ctx, "no-such-tenant", "x", []byte("y"))
	wantErr(t, err, store.ErrNotFound)

	_, err = f.s.PutSecret(f.ctx, f.tenant, "db", []byte("pw"))
	ok(t, err)
	list, err := f.s.ListSecrets(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "secrets", len(list), 2)
	equal(t, "sorted by name", list[0].Name, "db")
	for _, s := range list {
		check(t, len(s.Value) == 0, "ListSecrets returned a value")
	}
	none, err := f.s.ListSecrets(f.ctx, other)
	ok(t, err)
	equal(t, "another tenant's list", len(none), 0)

	wantErr(t, f.s.DeleteSecret(f.ctx, other, "db"), store.ErrNotFound)
	ok(t, f.s.DeleteSecret(f.ctx, f.tenant, "db"))
	wantErr(t, f.s.DeleteSecret(f.ctx, f.tenant, "db"), store.ErrNotFound)
	_, found, err = f.s.GetSecret(f.ctx, f.tenant, "db")
	ok(t, err)
	check(t, !found, "a deleted secret is still there")
}

func testOutboundAuditTrail(t *testing.T, f *fixture) {
	r := f.run()
	at := now()
	// A request redirected once (two hops sharing a request id), and one refused outside any
	// step.
	recs := []store.OutboundRecord{
		{TenantID: f.tenant, RunID: r.ID, Step: "charge", RequestID: "a1b2c3d4e5f60718", Hop: 0, Method: "POST", Scheme: "https",
			Host: "api.stripe.com", Port: 443, Path: "/v1/charges", Status: 307, BytesOut: 120, DurationMs: 81.5, At: at},
		{TenantID: f.tenant, RunID: r.ID, Step: "charge", RequestID: "a1b2c3d4e5f60718", Hop: 1, Method: "POST", Scheme: "https",
			Host: "api2.stripe.com", Port: 8443, Path: "/v1/charges", Status: 200, BytesOut: 120, BytesIn: 900, DurationMs: 12,
			At: at.Add(time.Millisecond)},
		{TenantID: f.tenant, RunID: r.ID, RequestID: "0000000000000001", Method: "GET", Scheme: "http", Host: "evil.example.net",
			Port: 80, Path: "/", Error: "outside_step", At: at.Add(2 * time.Millisecond)},
	}
	for _, rec := range recs {
		ok(t, f.s.RecordOutbound(f.ctx, rec))
	}
	// A record naming another tenant's run is not written.
	ok(t, f.s.EnsureTenant(f.ctx, "other-"+f.tenant))
	ok(t, f.s.RecordOutbound(f.ctx, store.OutboundRecord{TenantID: "other-" + f.tenant, RunID: r.ID, Step: "x", Method: "GET", Host: "h", Path: "/", At: at}))

	got, err := f.s.ListOutbound(f.ctx, f.tenant, r.ID)
	ok(t, err)
	equal(t, "records", len(got), len(recs))
	for i, g := range got {
		w := recs[i]
		check(t, g.ID != 0 && g.Step == w.Step && g.RequestID == w.RequestID && g.Hop == w.Hop && g.Method == w.Method &&
			g.Scheme == w.Scheme && g.Host == w.Host && g.Port == w.Port && g.Path == w.Path && g.Status == w.Status && g.Error == w.Error && g.BytesOut == w.BytesOut && g.BytesIn == w.BytesIn &&
			g.DurationMs == w.DurationMs && g.At.Equal(w.At), "record %d: got %+v, want %+v", i, g, w)
	}
	_, err = f.s.ListOutbound(f.ctx, "other-"+f.tenant, r.ID)
	wantErr(t, err, store.ErrNotFound)
	_, err = f.s.ListOutbound(f.ctx, f.tenant, "00000000-0000-0000-0000-000000000000")
	wantErr(t, err, store.ErrNotFound)
}
