package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/internal/clock"
	"github.com/wfhost/wfhost/internal/testenv"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/embedded"
	"github.com/wfhost/wfhost/store/postgres"
)

// authCounter is a real store that counts its token lookups.
type authCounter struct {
	store.Store
	n atomic.Int64
}

func (c *authCounter) Authenticate(ctx context.Context, hash []byte) (store.Token, error) {
	c.n.Add(1)
	return c.Store.Authenticate(ctx, hash)
}

// tokenEngine is an engine, not started, on a store of the kind whose token lookups are
// counted, with a fake clock for the cache's time.
func tokenEngine(t *testing.T, kind string) (*engine.Engine, *authCounter, *clock.Fake) {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	var st store.Store
	switch kind {
	case "postgres":
		pg, err := postgres.Open(ctx, postgres.Config{URL: testenv.DatabaseURL(), Schema: testenv.Schema(t, "wfhost_engine"), MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := pg.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		st = pg
	default:
		em, err := embedded.Open(ctx, embedded.Config{Dir: t.TempDir(), Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		st = em
	}
	t.Cleanup(st.Close)
	counted := &authCounter{Store: st}
	eng, err := engine.New(engine.Config{Store: counted, Runtime: runtimeForTests(t), Clock: clk, Rand: clock.Seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	return eng, counted, clk
}

// TestTokenCache: a known token is read from the store once per engine.TokenTTL; one revoked
// through this engine is refused at once while the tenant's other tokens still work; one
// revoked through another daemon (the store directly) is refused within TokenTTL; unknown and
// hostile tokens are refused and never kept, so a new token works at once. On both stores.
func TestTokenCache(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"postgres", "embedded"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			eng, st, clk := tokenEngine(t, kind)
			_, first, secret, err := eng.CreateTenant(ctx, "acme", store.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			authAs := func(secret, want string) {
				t.Helper()
				tok, err := eng.Authenticate(ctx, secret)
				got := tok.TenantID
				if want == "" {
					if !errors.Is(err, store.ErrNotFound) {
						t.Fatalf("token %.20q: tenant %q, %v; want store.ErrNotFound", secret, got, err)
					}
					return
				}
				if err != nil || got != want {
					t.Fatalf("token %.20q: tenant %q, %v; want %s", secret, got, err, want)
				}
			}
			reads := func(want int64) {
				t.Helper()
				if n := st.n.Swap(0); n != want {
					t.Fatalf("%d store lookups, want %d", n, want)
				}
			}

			for range 10 {
				authAs(secret, "acme")
			}
			reads(1)
			clk.Advance(engine.TokenTTL - time.Millisecond)
			authAs(secret, "acme")
			reads(0)
			clk.Advance(time.Millisecond)
			authAs(secret, "acme")
			reads(1)

			// Revoked through this engine: refused at once; the tenant's other token still
			// works (read again: revoking forgets the tenant's tokens).
			_, other, err := eng.CreateToken(ctx, "acme", "ci")
			if err != nil {
				t.Fatal(err)
			}
			authAs(other, "acme")
			reads(1)
			if _, err := eng.RevokeToken(ctx, "acme", first.ID); err != nil {
				t.Fatal(err)
			}
			authAs(secret, "")
			authAs(other, "acme")
			reads(2)

			// Revoked through another daemon: this one still trusts it until TokenTTL has
			// passed since it read it, then refuses it.
			tokens, err := st.ListTokens(ctx, "acme")
			if err != nil {
				t.Fatal(err)
			}
			var otherID string
			for _, tok := range tokens {
				if tok.Name == "ci" {
					otherID = tok.ID
				}
			}
			if _, err := st.Store.RevokeToken(ctx, "acme", otherID); err != nil {
				t.Fatal(err)
			}
			authAs(other, "acme")
			clk.Advance(engine.TokenTTL)
			authAs(other, "")
			authAs(other, "")
			reads(2) // a refusal is never kept

			// Unknown and hostile tokens: refused, never kept. Over 512 bytes, the store is
			// not asked.
			_, made, err := eng.CreateToken(ctx, "acme", "made later")
			if err != nil {
				t.Fatal(err)
			}
			unknown := made + "x"
			for _, bad := range []string{unknown, "wfh_\xff\xfe\x00", "\x00", "' OR 1=1 --", strings.Repeat("a", 512)} {
				authAs(bad, "")
				authAs(bad, "")
			}
			reads(10)
			for _, bad := range []string{"", strings.Repeat("a", 513), strings.Repeat("\xff", 1<<20)} {
				authAs(bad, "")
			}
			reads(0)
			authAs(made, "acme")
			reads(1)

			// Another tenant's token is its own tenant's, cached or not.
			_, _, globex, err := eng.CreateTenant(ctx, "globex", store.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			authAs(globex, "globex")
			authAs(made, "acme")
			authAs(globex, "globex")
			reads(1)
		})
	}
}

// TestEnsureTokenForgetsTheToken: a secret made a token again through EnsureToken is read
// again, not answered from what the cache kept.
func TestEnsureTokenForgetsTheToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, st, _ := tokenEngine(t, "embedded")
	const secret = "fixed-secret-for-run---token"
	if err := eng.EnsureToken(ctx, "acme", secret, "run"); err != nil {
		t.Fatal(err)
	}
	if got, err := eng.Authenticate(ctx, secret); err != nil || got.TenantID != "acme" {
		t.Fatalf("authenticate: %q %v", got, err)
	}
	st.n.Store(0)
	if err := eng.EnsureToken(ctx, "acme", secret, "run"); err != nil {
		t.Fatal(err)
	}
	if got, err := eng.Authenticate(ctx, secret); err != nil || got.TenantID != "acme" {
		t.Fatalf("authenticate again: %q %v", got, err)
	}
	if n := st.n.Load(); n != 2 { // EnsureToken's own lookup, then Authenticate's
		t.Fatalf("%d store lookups, want 2", n)
	}
}
