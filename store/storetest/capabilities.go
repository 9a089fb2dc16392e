package storetest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wfhost/wfhost/store"
)

var capabilityTests = []test{
	{"Secrets", testSecrets},
	{"SecretsResealed", testSecretsResealed},
	{"OutboundAuditTrail", testOutboundAuditTrail},
}

// sealed is a stand-in for a sealed value: the store keeps and returns the bytes, whatever
// they are.
func sealed(key, tag string) store.SecretValue {
	return store.SecretValue{KeyID: key, DataKey: []byte("wrapped data key " + tag), Ciphertext: []byte("ciphertext " + tag)}
}

func sameValue(a, b store.SecretValue) bool {
	return a.KeyID == b.KeyID && bytes.Equal(a.DataKey, b.DataKey) && bytes.Equal(a.Ciphertext, b.Ciphertext) && bytes.Equal(a.Plaintext, b.Plaintext)
}

func testSecrets(t *testing.T, f *fixture) {
	first, err := f.s.PutSecret(f.ctx, f.tenant, "stripe", sealed("k1", "1"))
	ok(t, err)
	equal(t, "name", first.Name, "stripe")
	f.pass(2 * time.Millisecond)
	second, err := f.s.PutSecret(f.ctx, f.tenant, "stripe", sealed("k2", "2"))
	ok(t, err)
	check(t, second.UpdatedAt.After(first.UpdatedAt) && second.CreatedAt.Equal(first.CreatedAt), "replacing a secret: %+v after %+v", second, first)
	v, found, err := f.s.GetSecret(f.ctx, f.tenant, "stripe")
	ok(t, err)
	check(t, found && sameValue(v, sealed("k2", "2")), "GetSecret = %+v, %v", v, found)

	other := "other-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	_, found, err = f.s.GetSecret(f.ctx, other, "stripe")
	ok(t, err)
	check(t, !found, "another tenant reads the secret")
	_, err = f.s.PutSecret(f.ctx, "no-such-tenant", "x", sealed("k1", "y"))
	wantErr(t, err, store.ErrNotFound)

	_, err = f.s.PutSecret(f.ctx, f.tenant, "db", sealed("k1", "pw"))
	ok(t, err)
	list, err := f.s.ListSecrets(f.ctx, f.tenant)
	ok(t, err)
	equal(t, "secrets", len(list), 2)
	equal(t, "sorted by name", list[0].Name, "db")
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

// testSecretsResealed: the engine finds the values not under the primary key and replaces each
// with its rewrapped value only if nobody wrote the secret in between.
func testSecretsResealed(t *testing.T, f *fixture) {
	for name, key := range map[string]string{"a": "old", "b": "new", "c": "old", "d": "older"} {
		_, err := f.s.PutSecret(f.ctx, f.tenant, name, sealed(key, name))
		ok(t, err)
	}
	other := "other-" + f.tenant
	ok(t, f.s.EnsureTenant(f.ctx, other))
	_, err := f.s.PutSecret(f.ctx, other, "a", sealed("old", "theirs"))
	ok(t, err)

	stale, err := f.s.SecretsNotUnder(f.ctx, f.tenant, "new")
	ok(t, err)
	var names []string
	for _, n := range stale {
		names = append(names, n.Name)
		check(t, sameValue(n.Value, sealed(n.Value.KeyID, n.Name)), "value of %s: %+v", n.Name, n.Value)
	}
	equal(t, "secrets not under the key, by name", strings.Join(names, ","), "a,c,d")

	before, _, err := f.s.GetSecret(f.ctx, f.tenant, "a")
	ok(t, err)
	listed, err := f.s.ListSecrets(f.ctx, f.tenant)
	ok(t, err)
	replaced, err := f.s.ReplaceSecretValue(f.ctx, f.tenant, "a", before, sealed("new", "a"))
	ok(t, err)
	check(t, replaced, "replacing a value still as read")
	after, _, err := f.s.GetSecret(f.ctx, f.tenant, "a")
	ok(t, err)
	check(t, sameValue(after, sealed("new", "a")), "after the replacement: %+v", after)
	relisted, err := f.s.ListSecrets(f.ctx, f.tenant)
	ok(t, err)
	check(t, relisted[0].UpdatedAt.Equal(listed[0].UpdatedAt), "a reseal changed the secret's time: %v, was %v", relisted[0].UpdatedAt, listed[0].UpdatedAt)

	// A write between the read and the replacement wins.
	read, _, err := f.s.GetSecret(f.ctx, f.tenant, "c")
	ok(t, err)
	_, err = f.s.PutSecret(f.ctx, f.tenant, "c", sealed("new", "written meanwhile"))
	ok(t, err)
	replaced, err = f.s.ReplaceSecretValue(f.ctx, f.tenant, "c", read, sealed("new", "c"))
	ok(t, err)
	check(t, !replaced, "a reseal overwrote a newer value")
	now, _, _ := f.s.GetSecret(f.ctx, f.tenant, "c")
	check(t, sameValue(now, sealed("new", "written meanwhile")), "value after a lost reseal: %+v", now)
	// So does a delete; and another tenant's secret of the same name is not touched.
	ok(t, f.s.DeleteSecret(f.ctx, f.tenant, "d"))
	replaced, err = f.s.ReplaceSecretValue(f.ctx, f.tenant, "d", sealed("older", "d"), sealed("new", "d"))
	ok(t, err)
	check(t, !replaced, "a reseal brought back a deleted secret")
	theirs, _, _ := f.s.GetSecret(f.ctx, other, "a")
	check(t, sameValue(theirs, sealed("old", "theirs")), "another tenant's secret changed: %+v", theirs)
	left, err := f.s.SecretsNotUnder(f.ctx, f.tenant, "new")
	ok(t, err)
	equal(t, "secrets left to reseal", len(left), 0)
}

func testOutboundAuditTrail(t *testing.T, f *fixture) {
	r := f.run()
	at := f.now()
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
