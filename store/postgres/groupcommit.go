package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// Group commit. Every fenced write of an activation (a step commit, a suspension, a finish) is
// one statement that returns the run's id when its lease epoch still holds. Concurrent
// activations' writes that are ready together are sent as one batch: a batch is one implicit
// transaction, so N step commits cost one round trip and one commit (one WAL flush) instead of
// N, and each statement is still fenced on its own (a stale lease matches no row in its
// statement and only its caller hears ErrLeaseLost).
//
// Writers queue their statements; a few committers each take whatever is queued (up to
// maxGroup) and send it. With no contention a write goes out at once, alone, so an idle system
// pays no latency for the batching; under load the queue fills while batches are in flight,
// and that is when grouping pays.
//
// Urgent writes (store.Urgent: a quiet tenant's, while another keeps the committers busy)
// have a queue and a committer of their own. Queued behind a busy tenant's batches, a quiet
// tenant's commit waited for one batch to finish and then went out in the next: 2.7 ms at the
// median where it took 0.35 ms alone, ten times per 10-step run (engine/fairness.go).
//
// If any statement of a batch fails (not a fence miss: an error), Postgres rolls the whole
// batch back, and each of its statements is retried alone so that one bad write cannot fail
// its neighbours.
//
// Lock order. A batch holds the row of every run it has written until it commits, so it is one
// of the transactions that lock many runs: it takes them in run id order, as broadcasts and
// hotfix deploys do (broadcast.sql, move_live_runs.sql). The lease heartbeat, the other one,
// never waits for a row lock at all (extend_leases.sql). Claims skip locked rows, and cancels,
// signals and the wait statements lock one run. So no two transactions can each hold a run row
// the other waits for; before this, a batch and the heartbeat deadlocked under load (40P01).

const (
	maxGroup   = 64
	committers = 2
	// groupTimeout bounds one batch; callers' own contexts bound their waiting.
	groupTimeout = 30 * time.Second
)

// errClosed is what writes get once Close has begun.
var errClosed = errors.New("the store is closed")

type fencedWrite struct {
	run   string // the run whose row the statement locks
	what  string
	query string
	args  []any
	done  chan error // buffered: the committer never blocks on a caller that gave up
}

type groupCommitter struct {
	s      *Store
	queue  chan *fencedWrite
	urgent chan *fencedWrite
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newGroupCommitter(s *Store) *groupCommitter {
	g := &groupCommitter{s: s, queue: make(chan *fencedWrite, 1024), urgent: make(chan *fencedWrite, 64), stop: make(chan struct{})}
	g.wg.Add(committers + 1)
	for range committers {
		go g.loop(g.queue)
	}
	go g.loop(g.urgent)
	return g
}

func (g *groupCommitter) close() {
	close(g.stop)
	g.wg.Wait()
}

// write queues one fenced statement and waits for its outcome.
func (g *groupCommitter) write(ctx context.Context, runID, what, query string, args ...any) error {
	w := &fencedWrite{run: runID, what: what, query: query, args: args, done: make(chan error, 1)}
	queue := g.queue
	if store.IsUrgent(ctx) {
		queue = g.urgent
	}
	select {
	case queue <- w:
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case <-g.stop:
		return fmt.Errorf("%s: %w", what, errClosed)
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		// The write may still commit; the caller treats it like any interrupted write.
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
}

// loop commits what queue holds, in groups, until close.
func (g *groupCommitter) loop(queue chan *fencedWrite) {
	defer g.wg.Done()
	group := make([]*fencedWrite, 0, maxGroup)
	for {
		select {
		case <-g.stop:
			return
		case w := <-queue:
			group = append(group[:0], w)
		}
	fill:
		for len(group) < maxGroup {
			select {
			case w := <-queue:
				group = append(group, w)
			default:
				break fill
			}
		}
		g.send(group)
	}
}

// send commits a group as one batch, or each write alone if the batch failed.
func (g *groupCommitter) send(group []*fencedWrite) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	if len(group) == 1 {
		group[0].done <- g.s.fencedNow(ctx, group[0].what, group[0].query, group[0].args...)
		return
	}
	// Every statement locks its run's row until the batch commits: taking them in run id
	// order, the order broadcasts and hotfix deploys lock runs in too, no two of these
	// transactions can each hold a row the other waits for.
	slices.SortFunc(group, func(a, b *fencedWrite) int { return strings.Compare(a.run, b.run) })
	b := &pgx.Batch{}
	for _, w := range group {
		b.Queue(w.query, w.args...)
	}
	results := make([]error, len(group))
	failed := false
	br := g.s.pool.SendBatch(ctx, b)
	for i, w := range group {
		var id string
		err := br.QueryRow().Scan(&id)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			results[i] = fmt.Errorf("%s: %w", w.what, store.ErrLeaseLost)
		case err != nil:
			failed = true
		}
	}
	if err := br.Close(); err != nil {
		failed = true
	}
	if failed {
		// The batch's transaction rolled back as a whole: retry each write alone.
		for _, w := range group {
			w.done <- g.s.fencedNow(ctx, w.what, w.query, w.args...)
		}
		return
	}
	for i, w := range group {
		w.done <- results[i]
	}
}
