package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/journals"
)

// ClaimRuns leases runnable runs and loads their journals: two round trips for any number, one
// when no claimed run has a journal to read (store.Run.ClaimReadsJournal).
func (s *Store) ClaimRuns(ctx context.Context, p store.ClaimParams) (_ []store.Claim, err error) {
	defer classify(&err)
	if p.Limit < 1 {
		return nil, nil
	}
	rows, err := s.on("claim_runs").Query(ctx, s.q("claim_runs"), p.Limit, p.Owner, millis(p.LeaseFor), p.TenantConcurrency)
	if err != nil {
		return nil, fmt.Errorf("claim runs: %w", err)
	}
	claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Claim, error) {
		var c store.Claim
		c.Run, err = scanRun(r, &c.Lease.Epoch, &c.Faults, &c.LastFault)
		c.Lease.RunID = c.Run.ID
		return c, err
	})
	if err != nil || len(claims) == 0 {
		if err != nil {
			err = fmt.Errorf("claim runs: %w", err)
		}
		return nil, err
	}
	ids := make([]string, 0, len(claims))
	byID := make(map[string]int, len(claims))
	for i, c := range claims {
		if c.Run.ClaimReadsJournal() {
			ids = append(ids, c.Run.ID)
			byID[c.Run.ID] = i
		}
	}
	if len(ids) == 0 {
		return claims, nil
	}
	srows, err := s.on("load_journals").Query(ctx, s.q("load_journals"), ids, windowLimit(p.JournalWindow))
	if err != nil {
		return nil, fmt.Errorf("claim runs: load journals: %w", err)
	}
	entries, err := pgx.CollectRows(srows, func(r pgx.CollectableRow) (journalEntry, error) { return scanJournalEntry(r) })
	if err != nil {
		return nil, fmt.Errorf("claim runs: load journals: %w", err)
	}
	for _, e := range entries {
		c := &claims[byID[e.runID]]
		if e.snapshot != nil {
			// The snapshot comes before the run's entries, which start at its seq.
			c.Snapshot, c.JournalFrom = e.snapshot, e.snapshot.Seq
			continue
		}
		c.Journal = append(c.Journal, e.step)
	}
	for i := range claims {
		c := &claims[i]
		c.Journal, c.JournalMore = journals.Trim(c.Journal, p.JournalWindow)
	}
	return claims, nil
}

// windowLimit is journals.Limit as a statement's argument: NULL (no limit) for no window.
func windowLimit(window int) any {
	if limit, ok := journals.Limit(window); ok {
		return limit
	}
	return nil
}

// ReleaseOwned hands back the owner's leases on runs not in keep.
func (s *Store) ReleaseOwned(ctx context.Context, owner string, keep []string) (_ int, err error) {
	defer classify(&err)
	if keep == nil {
		keep = []string{}
	}
	tag, err := s.pool.Exec(ctx, s.q("release_owned"), owner, keep)
	if err != nil {
		return 0, fmt.Errorf("release leases of %s: %w", owner, err)
	}
	return int(tag.RowsAffected()), nil
}

// NextWakeup is when the earliest live run becomes claimable.
func (s *Store) NextWakeup(ctx context.Context) (_ time.Time, _ bool, err error) {
	defer classify(&err)
	var at *time.Time
	if err := s.on("next_wakeup").QueryRow(ctx, s.q("next_wakeup")).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next wakeup: %w", err)
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return *at, true, nil
}

// ExtendLeases renews leases and returns those still held.
func (s *Store) ExtendLeases(ctx context.Context, leases []store.Lease, leaseFor time.Duration) (_ []store.Lease, err error) {
	defer classify(&err)
	// In run id order, as the group commit's batches, broadcasts and hotfix deploys lock runs.
	// The renewal skips a locked row, but Postgres does not skip one whose newer version it
	// must follow (a row a batch updated just now: "while locking updated version"): it waits
	// for that batch. Waiting in id order, it cannot close a cycle with the others (one in
	// about 15 runs of TestNoDeadlocksUnderLoad did, while the heartbeat went in its caller's
	// order).
	sorted := slices.SortedFunc(slices.Values(leases), func(a, b store.Lease) int { return strings.Compare(a.RunID, b.RunID) })
	ids := make([]string, len(sorted))
	epochs := make([]int64, len(sorted))
	for i, l := range sorted {
		ids[i], epochs[i] = l.RunID, l.Epoch
	}
	rows, err := s.on("extend_leases").Query(ctx, s.q("extend_leases"), ids, epochs, millis(leaseFor))
	if err != nil {
		return nil, fmt.Errorf("extend leases: %w", err)
	}
	held, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Lease, error) {
		var l store.Lease
		err := r.Scan(&l.RunID, &l.Epoch)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("extend leases: %w", err)
	}
	return held, nil
}

// fenced runs a statement on run runID that returns a row only when the lease still holds.
func (s *Store) fenced(ctx context.Context, runID, what, query string, args ...any) error {
	return s.commits.write(ctx, runID, what, query, args...)
}

// fencedNow runs one fenced statement on its own.
func (s *Store) fencedNow(ctx context.Context, what, query string, args ...any) error {
	var id string
	err := s.pool.QueryRow(ctx, query, args...).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// CommitStep writes a journal row and renews the lease: one statement, one round trip.
func (s *Store) CommitStep(ctx context.Context, l store.Lease, st store.Step, leaseFor time.Duration) (err error) {
	defer classify(&err)
	args := append([]any{l.RunID, l.Epoch, millis(leaseFor)}, stepArgs(st)...)
	return s.fenced(ctx, l.RunID, "commit step "+st.Key, s.q("commit_step"), args...)
}

// Suspend releases the run until wakeAt, journaling st first if given.
func (s *Store) Suspend(ctx context.Context, l store.Lease, st *store.Step, wakeAt *time.Time) (err error) {
	defer classify(&err)
	if st == nil {
		return s.fenced(ctx, l.RunID, "suspend", s.q("suspend"), l.RunID, l.Epoch, wakeAt)
	}
	args := append([]any{l.RunID, l.Epoch, wakeAt}, stepArgs(*st)...)
	return s.fenced(ctx, l.RunID, "suspend at "+st.Key, s.q("suspend_step"), args...)
}

// CommitAndSuspend journals the held step and the step that suspends the run, and suspends
// it: one statement.
func (s *Store) CommitAndSuspend(ctx context.Context, l store.Lease, held, st store.Step, wakeAt *time.Time) (err error) {
	defer classify(&err)
	args := append(append([]any{l.RunID, l.Epoch, wakeAt}, stepArgs(st)...), stepArgs(held)...)
	return s.fenced(ctx, l.RunID, "commit "+held.Key+" and suspend at "+st.Key, s.q("commit_and_suspend"), args...)
}

// SaveSnapshot journals the held step, when there is one, and replaces the run's snapshot,
// renewing the lease as CommitStep does: one statement, one round trip, in the group commit.
func (s *Store) SaveSnapshot(ctx context.Context, l store.Lease, held *store.Step, snap store.Snapshot, leaseFor time.Duration) (err error) {
	defer classify(&err)
	what := fmt.Sprintf("save snapshot at %d", snap.Seq)
	if err := journals.CheckSnapshot(snap); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	step := make([]any, 13) // nulls without a held step
	if held != nil {
		what = "commit " + held.Key + " and " + what
		step = stepArgs(*held)
	}
	data := snap.Data
	if data == nil {
		data = []byte{}
	}
	args := append([]any{l.RunID, l.Epoch, millis(leaseFor), snap.Seq, snap.LastKey, snap.Code, data, held != nil}, step...)
	return s.fenced(ctx, l.RunID, what, s.q("save_snapshot"), args...)
}

// JournalPage reads up to limit entries of the run's journal from entry from on, under the
// lease: one statement that reads one more to tell whether more follow, and returns no row when
// the lease does not hold.
func (s *Store) JournalPage(ctx context.Context, l store.Lease, from, limit int) (_ []store.Step, _ bool, err error) {
	defer classify(&err)
	what := fmt.Sprintf("journal of run %s from %d", l.RunID, from)
	if limit <= 0 {
		return nil, false, fmt.Errorf("%s: a page of %d entries", what, limit)
	}
	if !validUUID(l.RunID) {
		return nil, false, fmt.Errorf("%s: %w", what, store.ErrLeaseLost)
	}
	rows, err := s.on("journal_page").Query(ctx, s.q("journal_page"), l.RunID, l.Epoch, from, windowLimit(limit))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	held := false
	steps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Step, error) {
		held = true
		return scanStepOrNone(r)
	})
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	if !held {
		return nil, false, fmt.Errorf("%s: %w", what, store.ErrLeaseLost)
	}
	out := make([]store.Step, 0, len(steps))
	for _, st := range steps {
		if st != nil {
			out = append(out, *st)
		}
	}
	page, more := journals.Trim(out, limit)
	return page, more, nil
}

// Finish records a run's end.
func (s *Store) Finish(ctx context.Context, l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) (err error) {
	defer classify(&err)
	if status != store.StatusNondeterministic && !status.Terminal() {
		return fmt.Errorf("finish run: status %q is not an end", status)
	}
	args, err := endArgs(l, status, output, info, guestLog)
	if err != nil {
		return fmt.Errorf("finish run %s: %w", l.RunID, err)
	}
	return s.fenced(ctx, l.RunID, "finish run", s.q("finish"), args...)
}

// endArgs are the parameters finish.sql and finish_step.sql begin with: the run's end and the
// lines its guest logged, with the guest log's bounds.
func endArgs(l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) ([]any, error) {
	doc, err := guestLogDoc(guestLog)
	if err != nil {
		return nil, err
	}
	return []any{l.RunID, l.Epoch, string(status), jsonArg(output), errorArg(info), jsonArg(doc), store.MaxGuestLogLines, store.MaxGuestLogBytes}, nil
}

// CommitAndFinish journals the run's last step and records its end: one statement.
func (s *Store) CommitAndFinish(ctx context.Context, l store.Lease, st store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) (err error) {
	defer classify(&err)
	if status != store.StatusNondeterministic && !status.Terminal() {
		return fmt.Errorf("finish run: status %q is not an end", status)
	}
	args, err := endArgs(l, status, output, info, guestLog)
	if err != nil {
		return fmt.Errorf("commit %s and finish run %s: %w", st.Key, l.RunID, err)
	}
	return s.fenced(ctx, l.RunID, "commit "+st.Key+" and finish run", s.q("finish_step"), append(args, stepArgs(st)...)...)
}

// FinishAndContinue ends the run, with its last step when held is set, and creates the run
// that continues it, in one transaction (store.Store.FinishAndContinue).
func (s *Store) FinishAndContinue(ctx context.Context, l store.Lease, held *store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, next store.NewRun, guestLog []store.GuestLogLine) (_ store.Run, err error) {
	defer classify(&err)
	if !status.Terminal() {
		return store.Run{}, fmt.Errorf("finish and continue run: status %q is not an end", status)
	}
	args, err := endArgs(l, status, output, info, guestLog)
	if err != nil {
		return store.Run{}, fmt.Errorf("finish and continue run %s: %w", l.RunID, err)
	}
	var run store.Run
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		query := s.q("finish")
		if held != nil {
			query, args = s.q("finish_step"), append(args, stepArgs(*held)...)
		}
		var id string
		if err := tx.QueryRow(ctx, query, args...).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
			return store.ErrLeaseLost
		} else if err != nil {
			return err
		}
		var key string
		if err := tx.QueryRow(ctx, s.q("unkey_run"), l.RunID).Scan(&key); err != nil {
			return err
		}
		var err error
		run, err = scanRun(tx.QueryRow(ctx, s.q("continue_run"), l.RunID, next.TenantID, next.Workflow, next.Version,
			next.Digest, jsonOrNull(next.Input), key, next.NotBefore, next.RetentionDays, next.Deadline,
			retryArg(next.Retry), next.Attempt, s.wakeChannel))
		return err
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("finish and continue run %s: %w", l.RunID, err)
	}
	return run, nil
}

// Fault hands the run back after a faulted activation and counts the fault.
func (s *Store) Fault(ctx context.Context, l store.Lease, reason string, retryAt time.Time) (err error) {
	defer classify(&err)
	return s.fenced(ctx, l.RunID, "hand back faulted run", s.q("fault"), l.RunID, l.Epoch, retryAt, reason)
}

// Release hands the run back, runnable now.
func (s *Store) Release(ctx context.Context, l store.Lease) (err error) {
	defer classify(&err)
	return s.fenced(ctx, l.RunID, "release run", s.q("release"), l.RunID, l.Epoch)
}
