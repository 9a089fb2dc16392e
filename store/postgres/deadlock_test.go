package postgres

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
)

// freshStore opens a store with maxConns connections on a schema of its own, dropped with the
// store when the test ends.
func freshStore(t *testing.T, maxConns int) *Store {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	url := cmp.Or(os.Getenv("TEST_DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/test")
	var b [6]byte
	_, _ = crand.Read(b[:])
	schema := "wfhost_test_" + hex.EncodeToString(b[:])
	s, err := Open(ctx, Config{URL: url, Schema: schema, MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = conn.Close(ctx)
		}
	})
	return s
}

// leasedRuns makes n runs in a fresh schema, claimed by one host, and returns the store and
// their leases in the order the runs were created.
func leasedRuns(t *testing.T, n int) (*Store, []store.Lease) {
	t.Helper()
	s := freshStore(t, 8)
	ctx := t.Context()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTenant(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("m"))
	digest := hex.EncodeToString(sum[:])
	if _, err := s.PutModule(ctx, store.Module{TenantID: "t", Digest: digest, Size: 1, ABIVersion: abi.Version, Bytes: []byte("m")},
		[]store.Workflow{{TenantID: "t", Name: "wf", Version: "v1", Digest: digest}}, false); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, _, err := s.CreateRun(ctx, store.NewRun{TenantID: "t", Workflow: "wf", Version: "v1", Digest: digest,
			Input: json.RawMessage(fmt.Sprint(i)), RetentionDays: 1}); err != nil {
			t.Fatal(err)
		}
		// One run per claim, so the claims' order is the creation order.
		claims, err := s.ClaimRuns(ctx, store.ClaimParams{Owner: "h", Limit: 1, LeaseFor: time.Hour})
		if err != nil || len(claims) != 1 {
			t.Fatalf("claim run %d: %v (%d claims)", i, err, len(claims))
		}
	}
	rows, err := s.pool.Query(ctx, "SELECT id::text, lease_epoch FROM runs ORDER BY created_at, id")
	if err != nil {
		t.Fatal(err)
	}
	leases, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Lease, error) {
		var l store.Lease
		return l, r.Scan(&l.RunID, &l.Epoch)
	})
	if err != nil || len(leases) != n {
		t.Fatalf("leases: %v (%d)", err, len(leases))
	}
	return s, leases
}

func isDeadlock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}

// stepFor is a completed step row for run l at position seq, as an activation commits it.
func stepFor(l store.Lease, seq int, key string) store.Step {
	at := time.Now().UTC().Truncate(time.Microsecond)
	return store.Step{RunID: l.RunID, Seq: seq, Key: key, Kind: store.KindRun, Status: store.StepCompleted,
		Output: json.RawMessage(`1`), Attempt: 1, StartedAt: at, CompletedAt: &at}
}

// TestLeaseRenewalNeverWaitsForAWriter reproduces the heartbeat's deadlock deterministically.
// A group-commit batch is one transaction holding the rows of the runs it has committed so
// far; ExtendLeases renews many runs in one statement. If the renewal locks run A and then
// waits for run B, which the batch holds, while the batch's next statement waits for A, each
// waits for the other: Postgres aborts one with 40P01 after deadlock_timeout. The renewal must
// never wait for a row a writer holds (a writer renews or releases the lease itself), so
// neither side may fail.
func TestLeaseRenewalNeverWaitsForAWriter(t *testing.T) {
	t.Parallel()
	const n = 40
	s, leases := leasedRuns(t, n)
	ctx := t.Context()
	// The batch holds the last run (last in the array and on disk: whatever order the renewal
	// walks in, it reaches that row after locking others).
	last := leases[n-1]
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	commit := func(l store.Lease, key string) error {
		var id string
		args := append([]any{l.RunID, l.Epoch, int64(3_600_000)}, stepArgs(stepFor(l, 0, key))...)
		return tx.QueryRow(ctx, s.q("commit_step"), args...).Scan(&id)
	}
	if err := commit(last, "batch-first"); err != nil {
		t.Fatal(err)
	}

	renewed := make(chan error, 1)
	var held []store.Lease
	go func() {
		var err error
		held, err = s.ExtendLeases(ctx, leases, time.Hour)
		renewed <- err
	}()
	// Give the renewal time to lock what it can and, before the fix, start waiting for the
	// batch's row.
	time.Sleep(300 * time.Millisecond)

	// The batch goes on to commit the other runs, as a batch of many activations' writes does.
	for i, l := range leases[:n-1] {
		if err := commit(l, "batch-next"); err != nil {
			if isDeadlock(err) {
				t.Fatalf("the batch's commit of run %d deadlocked with the lease renewal: %v", i, err)
			}
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-renewed:
		if isDeadlock(err) {
			t.Fatalf("the lease renewal deadlocked with a commit batch: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the lease renewal did not return")
	}
	// A run whose row a writer held may be left unrenewed this once, never reported lost.
	if len(held) != n {
		t.Fatalf("ExtendLeases reported %d of %d held leases as held", len(held), n)
	}
}

// TestNoDeadlocksUnderLoad runs the lease heartbeat of two hosts, group-committed step
// commits and broadcasts on the same runs at once, through the store's own methods, and
// requires that none of them ever fails with a deadlock. Every run waits for an event the
// broadcasts resolve and its writer puts back, so each broadcast locks many of the runs the
// batches write. Before lease renewals skipped locked rows this failed within seconds with the
// heartbeat's deadlock, and before batches locked runs in id order with the broadcast's.
func TestNoDeadlocksUnderLoad(t *testing.T) {
	t.Parallel()
	const n = 64
	s, leases := leasedRuns(t, n)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()

	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		deadlocks []string
	)
	report := func(what string, err error) bool {
		switch {
		case ctx.Err() != nil:
			return false
		case isDeadlock(err):
			mu.Lock()
			deadlocks = append(deadlocks, what+": "+err.Error())
			mu.Unlock()
		case err != nil:
			t.Errorf("%s: %v", what, err)
			return false
		}
		return true
	}
	// Writers: each owns a share of the runs and commits steps on them (every fourth with a
	// snapshot) as fast as it can, so the group committer sends batches holding many runs in no
	// particular order.
	const writers = 16
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; ; i++ {
				l := leases[w+writers*rng.IntN(n/writers)]
				st := stepFor(l, i, fmt.Sprint("w", i))
				if i%2 == 0 {
					// The run waits again for the event a broadcast resolved.
					st = store.Step{RunID: l.RunID, Seq: 1 << 20, Key: "wait", Kind: store.KindWait, Status: store.StepWaiting,
						Event: "e", StartedAt: st.StartedAt}
				}
				var err error
				if i%4 == 1 {
					// A step committed with a snapshot: the same fence, in the same batches.
					err = s.SaveSnapshot(ctx, l, &st, store.Snapshot{RunID: l.RunID, Seq: i, LastKey: st.Key, Code: "c", Data: []byte("snapshot")}, time.Hour)
				} else {
					err = s.CommitStep(ctx, l, st, time.Hour)
				}
				if !report("commit step", err) {
					return
				}
			}
		})
	}
	// Two hosts' heartbeats renew every lease, in an order of their own.
	for h := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(h), 9))
			mine := append([]store.Lease(nil), leases...)
			for {
				rng.Shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
				_, err := s.ExtendLeases(ctx, mine, time.Hour)
				if !report("extend leases", err) {
					return
				}
			}
		})
	}
	wg.Go(func() {
		for {
			_, err := s.Broadcast(ctx, store.BroadcastParams{TenantID: "t", Event: "e", Payload: json.RawMessage(`{}`)})
			if !report("broadcast", err) {
				return
			}
		}
	})
	wg.Wait()
	if len(deadlocks) > 0 {
		t.Fatalf("%d deadlocks, the first: %s", len(deadlocks), deadlocks[0])
	}
}
