package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/wfhost/wfhost/store"
)

// Every write goes through one goroutine that owns the one write connection: SQLite takes one
// writer at a time anyway, and queueing in Go instead of on SQLite's lock means no
// SQLITE_BUSY, no retries, and transactions that read then write without a race (a claim, a
// signal against a wait, a broadcast against a wait see a database nobody else changes).
//
// Group commit: the writer takes whatever is queued (up to maxGroup) and runs it in one
// transaction, each write inside its own savepoint, then commits once. With
// synchronous=FULL a commit is an fsync, the dominant cost; concurrent activations share it.
// A write that fails rolls back to its savepoint and fails alone; if the commit itself fails,
// each write is retried in a transaction of its own. Notices are published only after the
// commit that made them true.

const (
	maxGroup = 64
	// groupTimeout bounds one transaction; callers' own contexts bound their waiting.
	groupTimeout = 30 * time.Second
)

var errClosed = errors.New("the store is closed")

type job struct {
	what string
	fn   func(w *wtx) error
	done chan error // buffered: the writer never blocks on a caller that gave up
	// state is jobQueued until the writer takes the job (jobTaken) or its caller gives up on
	// it first (jobAbandoned), whichever comes first: a caller whose context ends returns at
	// once only for a job the writer will never run; otherwise it waits for the job's end,
	// because fn fills in the caller's results and must not write them after it returned.
	state atomic.Int32
}

const (
	jobQueued int32 = iota
	jobTaken
	jobAbandoned
)

// take says whether the writer may run the job: its caller has not given up on it. A job
// taken once stays taken (a group that failed runs its jobs again one by one).
func (j *job) take() bool {
	return j.state.CompareAndSwap(jobQueued, jobTaken) || j.state.Load() == jobTaken
}

type writer struct {
	s     *Store
	queue chan *job
	stop  chan struct{}
	done  chan struct{}
}

func newWriter(s *Store) *writer {
	w := &writer{s: s, queue: make(chan *job, 1024), stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *writer) close() {
	close(w.stop)
	<-w.done
}

// wtx is one write's view of the group's transaction.
type wtx struct {
	s       *Store
	ctx     context.Context
	tx      *sql.Tx
	now     time.Time // the write's clock: every "now" it stores is this instant
	notices []store.Notice
}

func (w *wtx) exec(name string, args ...any) (sql.Result, error) {
	return w.tx.ExecContext(w.ctx, w.s.q(name), args...)
}

// affected runs a statement and returns how many rows it changed.
func (w *wtx) affected(name string, args ...any) (int64, error) {
	res, err := w.exec(name, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (w *wtx) query(name string, args ...any) (*sql.Rows, error) {
	return w.tx.QueryContext(w.ctx, w.s.q(name), args...)
}

func (w *wtx) queryRow(name string, args ...any) *sql.Row {
	return w.tx.QueryRowContext(w.ctx, w.s.q(name), args...)
}

// wake announces runnable work once the write commits. Every write comes through this Store,
// so every wake notice is Self.
func (w *wtx) wake() { w.notices = append(w.notices, store.Notice{Kind: store.NoticeWake, Self: true}) }

func (w *wtx) cancelled(runID string) {
	w.notices = append(w.notices, store.Notice{Kind: store.NoticeCancel, RunID: runID})
}

func (w *wtx) cancelRequested(runID string) {
	w.notices = append(w.notices, store.Notice{Kind: store.NoticeCancelRequested, RunID: runID})
}

// write queues fn and waits for its transaction to commit. fn may run more than once (a failed
// group commit retries each write alone), so it must set its results afresh each time.
func (s *Store) write(ctx context.Context, what string, fn func(w *wtx) error) error {
	if s.faults != nil {
		if err := s.faults(what, false); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		err := s.writeJob(ctx, what, fn)
		if err == nil {
			if err := s.faults(what, true); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		return err
	}
	return s.writeJob(ctx, what, fn)
}

func (s *Store) writeJob(ctx context.Context, what string, fn func(w *wtx) error) error {
	j := &job{what: what, fn: fn, done: make(chan error, 1)}
	select {
	case s.w.queue <- j:
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case <-s.w.stop:
		return fmt.Errorf("%s: %w", what, errClosed)
	}
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
			// The writer will skip it: nothing was or will be written.
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		// The writer is running it: its end is a transaction away (groupTimeout at most),
		// and returning before it would race fn's writes to the caller's results (found
		// with PruneBroadcasts when an engine stops mid-sweep).
		select {
		case err := <-j.done:
			return err
		case <-s.w.done:
			select {
			case err := <-j.done:
				return err
			default:
				return fmt.Errorf("%s: %w", what, errClosed)
			}
		}
	case <-s.w.done:
		// The writer has exited: it answered the job while draining, or (queued after the
		// drain, as Close raced this call) never will.
		select {
		case err := <-j.done:
			return err
		default:
			return fmt.Errorf("%s: %w", what, errClosed)
		}
	}
}

func (w *writer) loop() {
	defer close(w.done)
	group := make([]*job, 0, maxGroup)
	for {
		select {
		case <-w.stop:
			for {
				select {
				case j := <-w.queue:
					j.done <- fmt.Errorf("%s: %w", j.what, errClosed)
				default:
					return
				}
			}
		case j := <-w.queue:
			group = append(group[:0], j)
		}
	fill:
		for len(group) < maxGroup {
			select {
			case j := <-w.queue:
				group = append(group, j)
			default:
				break fill
			}
		}
		w.run(group)
	}
}

// run commits a group in one transaction, or each of its writes alone when that fails.
func (w *writer) run(group []*job) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	results, notices, err := w.attempt(ctx, group)
	if err != nil && len(group) > 1 {
		for _, j := range group {
			w.run([]*job{j})
		}
		return
	}
	if err != nil {
		group[0].done <- fmt.Errorf("%s: %w", group[0].what, err)
		return
	}
	// Notices only after the commit: a host woken by one must find the work.
	for _, n := range notices {
		w.s.hub.publish(n)
	}
	for i, j := range group {
		j.done <- results[i]
	}
}

// attempt runs the group in one transaction. It returns an error only when the transaction
// as a whole failed (nothing committed); a write's own failure is in its result.
func (w *writer) attempt(ctx context.Context, group []*job) (results []error, notices []store.Notice, err error) {
	tx, err := w.s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	single := len(group) == 1
	results = make([]error, len(group))
	for i, j := range group {
		if !j.take() {
			// Its caller gave up before it began: skipped, as if never queued.
			if single {
				_ = tx.Rollback()
				return []error{fmt.Errorf("%s: %w", j.what, context.Canceled)}, nil, nil
			}
			results[i] = fmt.Errorf("%s: %w", j.what, context.Canceled)
			continue
		}
		wt := &wtx{s: w.s, ctx: ctx, tx: tx, now: w.s.now()}
		if !single {
			if _, err := wt.exec("savepoint"); err != nil {
				return nil, nil, err
			}
		}
		if ferr := call(j.fn, wt); ferr != nil {
			if single {
				// Nothing else shares the transaction: roll it back and report.
				_ = tx.Rollback()
				return []error{ferr}, nil, nil
			}
			if _, err := wt.exec("rollback_savepoint"); err != nil {
				return nil, nil, err
			}
			results[i] = ferr
		} else {
			notices = append(notices, wt.notices...)
		}
		if !single {
			if _, err := wt.exec("release_savepoint"); err != nil {
				return nil, nil, err
			}
		}
	}
	if single && results[0] != nil {
		return results, nil, nil
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, err
	}
	return results, notices, nil
}

// call runs a write, turning a panic into its error so that one bad write cannot stop the
// writer (and with it every other write).
func call(fn func(*wtx) error, w *wtx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("write panicked: %v", r)
		}
	}()
	return fn(w)
}

func (w *wtx) pauseRequested(runID string) {
	w.notices = append(w.notices, store.Notice{Kind: store.NoticePauseRequested, RunID: runID})
}
