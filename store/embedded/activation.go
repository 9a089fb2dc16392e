package embedded

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/wfhost/wfhost/abi"
	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/journals"
)

// ClaimRuns leases runnable runs, shared fairly between the tenants that have any and a free
// slot under their concurrency cap, exactly as store/postgres's claim_runs.sql: each tenant
// offers its oldest min(ceil(limit / tenants), free slots) runs and the claim takes them
// round-robin, so one tenant's backlog cannot delay another tenant's new run. The writer runs
// one transaction at a time, so nothing else can claim the same run meanwhile.
func (s *Store) ClaimRuns(ctx context.Context, p store.ClaimParams) (_ []store.Claim, err error) {
	defer classify(&err)
	if p.Limit < 1 {
		return nil, nil
	}
	var claims []store.Claim
	err = s.write(ctx, "claim runs", func(w *wtx) error {
		var err error
		claims, err = w.claim(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

func (w *wtx) claim(p store.ClaimParams) ([]store.Claim, error) {
	nowUs := micros(w.now)
	type slot struct {
		tenant string
		free   int
		held   int
	}
	rows, err := w.query("claim_tenants", nowUs, p.TenantConcurrency)
	if err != nil {
		return nil, err
	}
	var slots []slot
	for rows.Next() {
		var (
			sl        slot
			cap, held int
		)
		if err := rows.Scan(&sl.tenant, &cap, &held); err != nil {
			rows.Close()
			return nil, err
		}
		sl.free, sl.held = p.Limit, held
		if cap > 0 {
			sl.free = cap - held
		}
		if sl.free > 0 {
			slots = append(slots, sl)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(slots) == 0 {
		return nil, nil
	}
	share := (p.Limit + len(slots) - 1) / len(slots)
	type offer struct {
		id        string
		available int64
		turn      int
		held      int // its tenant's runs in flight
	}
	var offered []offer
	for _, sl := range slots {
		rows, err := w.query("claim_candidates", sl.tenant, nowUs, min(share, sl.free))
		if err != nil {
			return nil, err
		}
		turn := 0
		for rows.Next() {
			var o offer
			if err := rows.Scan(&o.id, &o.available); err != nil {
				rows.Close()
				return nil, err
			}
			o.turn, o.held = turn, sl.held
			turn++
			offered = append(offered, o)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	// Round-robin by turn; within a turn, the tenant with the fewest runs in flight first, so
	// that a claim of one slot, the usual claim under a backlog, goes to the tenant with one
	// run waiting, not to the tenant whose backlog is older (claim_runs.sql).
	sort.SliceStable(offered, func(i, j int) bool {
		if offered[i].turn != offered[j].turn {
			return offered[i].turn < offered[j].turn
		}
		if offered[i].held != offered[j].held {
			return offered[i].held < offered[j].held
		}
		return offered[i].available < offered[j].available
	})
	if len(offered) > p.Limit {
		offered = offered[:p.Limit]
	}
	// A leased run may next be claimed when its lease, as granted now, runs out: available_at
	// says so, as in store/postgres, so the claim range skips held runs.
	until := nowUs + p.LeaseFor.Microseconds()
	claims := make([]store.Claim, 0, len(offered))
	for _, o := range offered {
		var c store.Claim
		run, err := scanRun(w.queryRow("claim_run", o.id, p.Owner, until, nowUs), &c.Lease.Epoch, &c.Faults, &c.LastFault)
		if err != nil {
			return nil, fmt.Errorf("claim run %s: %w", o.id, err)
		}
		c.Run, c.Lease.RunID = run, run.ID
		if run.ClaimReadsJournal() {
			if err := w.loadJournal(&c, p.JournalWindow); err != nil {
				return nil, err
			}
		}
		claims = append(claims, c)
	}
	return claims, nil
}

// loadJournal fills a claim's snapshot, when the run has one, and its journal from the
// snapshot's seq on (the whole journal without one), at most window entries of it (0: all).
// A snapshot whose journal no longer holds the entry it was taken after is deleted, not
// returned: a journal grown back past it must not make it look whole again.
func (w *wtx) loadJournal(c *store.Claim, window int) error {
	snap, whole, err := scanSnapshot(c.Run.ID, w.queryRow("get_snapshot", c.Run.ID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	case !whole:
		if _, err := w.exec("delete_snapshot", c.Run.ID); err != nil {
			return err
		}
	default:
		c.Snapshot, c.JournalFrom = &snap, snap.Seq
	}
	return w.loadTail(c, c.JournalFrom, window)
}

// loadTail fills a claim's journal from entry from on, at most window entries of it (0: all),
// and JournalMore when more follow them.
func (w *wtx) loadTail(c *store.Claim, from, window int) error {
	rows, err := w.query("load_journal_tail", c.Run.ID, from, windowLimit(window))
	if err != nil {
		return err
	}
	steps, err := collect(rows, scanStep)
	if err != nil {
		return err
	}
	c.Journal, c.JournalMore = journals.Trim(steps, window)
	return nil
}

// windowLimit is journals.Limit as SQLite's LIMIT: -1 (no limit) for no window.
func windowLimit(window int) int64 {
	if limit, ok := journals.Limit(window); ok {
		return limit
	}
	return -1
}

// ReleaseOwned hands back the owner's leases on runs not in keep.
func (s *Store) ReleaseOwned(ctx context.Context, owner string, keep []string) (_ int, err error) {
	defer classify(&err)
	kept := make(map[string]bool, len(keep))
	for _, id := range keep {
		kept[id] = true
	}
	var released int
	err = s.write(ctx, "release leases of "+owner, func(w *wtx) error {
		released = 0
		rows, err := w.query("release_owned", owner, micros(w.now))
		if err != nil {
			return err
		}
		ids, err := collect(rows, func(r scanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if kept[id] {
				continue
			}
			if _, err := w.exec("release_run", id, micros(w.now)); err != nil {
				return err
			}
			released++
		}
		return nil
	})
	return released, err
}

// NextWakeup is when the earliest live run becomes claimable: its available_at, or its lease
// expiry when a live lease holds it.
func (s *Store) NextWakeup(ctx context.Context) (_ time.Time, _ bool, err error) {
	defer classify(&err)
	var at sql.NullInt64
	if err := s.rdb.QueryRowContext(ctx, s.q("next_wakeup"), micros(s.now())).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next wakeup: %w", err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(at.Int64), true, nil
}

// ExtendLeases renews leases and returns those still held.
func (s *Store) ExtendLeases(ctx context.Context, leases []store.Lease, leaseFor time.Duration) (_ []store.Lease, err error) {
	defer classify(&err)
	if len(leases) == 0 {
		return nil, nil
	}
	var held []store.Lease
	err = s.write(ctx, "extend leases", func(w *wtx) error {
		held = held[:0]
		until := micros(w.now) + leaseFor.Microseconds()
		for _, l := range leases {
			n, err := w.affected("extend_lease", l.RunID, l.Epoch, until)
			if err != nil {
				return err
			}
			if n == 1 {
				held = append(held, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return held, nil
}

// fence runs a fenced statement that returns the run's tenant when the lease holds, and
// ErrLeaseLost when it does not.
func (w *wtx) fence(name string, args ...any) (tenant string, err error) {
	err = w.queryRow(name, args...).Scan(&tenant)
	if err == sql.ErrNoRows {
		return "", store.ErrLeaseLost
	}
	return tenant, err
}

// fenceGet returns the run's tenant and creation time when the lease holds, and ErrLeaseLost
// when it does not.
func (w *wtx) fenceGet(l store.Lease) (tenant string, created int64, err error) {
	err = w.queryRow("fence_get", l.RunID, l.Epoch).Scan(&tenant, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, store.ErrLeaseLost
	}
	return tenant, created, err
}

func (w *wtx) upsertStep(runID, tenant string, st store.Step) error {
	args, err := stepArgs(st)
	if err != nil {
		return err
	}
	_, err = w.exec("upsert_step", append([]any{runID, tenant}, args...)...)
	return err
}

// CommitStep writes a journal row and renews the lease.
func (s *Store) CommitStep(ctx context.Context, l store.Lease, st store.Step, leaseFor time.Duration) (err error) {
	defer classify(&err)
	return s.write(ctx, "commit step "+st.Key, func(w *wtx) error {
		tenant, err := w.fence("renew_lease", l.RunID, l.Epoch, micros(w.now)+leaseFor.Microseconds(), micros(w.now))
		if err != nil {
			return err
		}
		return w.upsertStep(l.RunID, tenant, st)
	})
}

// Suspend releases the run until wakeAt, journaling st first if given.
func (s *Store) Suspend(ctx context.Context, l store.Lease, st *store.Step, wakeAt *time.Time) (err error) {
	defer classify(&err)
	return s.write(ctx, "suspend", func(w *wtx) error {
		if st == nil {
			_, err := w.fence("suspend", l.RunID, l.Epoch, timeArg(wakeAt), micros(w.now))
			return err
		}
		return w.suspendAt(l, wakeAt, *st)
	})
}

// suspendAt journals steps, then releases the lease with the run available at wakeAt: in
// this order, unlike a finish, so that the lifecycle log's trigger on runs (017_run_log.sql)
// sees the entry the run suspends at and says why. The fence is read first; nothing else
// writes between the read and the update (one writer).
func (w *wtx) suspendAt(l store.Lease, wakeAt *time.Time, steps ...store.Step) error {
	tenant, _, err := w.fenceGet(l)
	if err != nil {
		return err
	}
	for _, st := range steps {
		if err := w.upsertStep(l.RunID, tenant, st); err != nil {
			return err
		}
	}
	_, err = w.fence("suspend_progressed", l.RunID, l.Epoch, timeArg(wakeAt), micros(w.now))
	return err
}

// finish records a run's end; fenced.
func (w *wtx) finish(l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) (tenant string, child bool, err error) {
	if status != store.StatusNondeterministic && !status.Terminal() {
		return "", false, fmt.Errorf("finish run: status %q is not an end", status)
	}
	out, err := jsonArg(output)
	if err != nil {
		return "", false, fmt.Errorf("output: %w", err)
	}
	var completed any
	if status.Terminal() {
		completed = micros(w.now)
	}
	err = w.queryRow("finish", l.RunID, l.Epoch, string(status), out, errorArg(info), completed, micros(w.now), day).Scan(&tenant, &child)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, store.ErrLeaseLost
	} else if err != nil {
		return "", false, err
	}
	// A finished run never resumes from its snapshot.
	if _, err = w.exec("delete_snapshot", l.RunID); err != nil {
		return "", false, err
	}
	_, err = w.keepGuestLog(tenant, l.RunID, guestLog)
	return tenant, child, err
}

// SaveSnapshot journals the held step, when there is one, and replaces the run's snapshot,
// renewing the lease as CommitStep does, in one transaction.
func (s *Store) SaveSnapshot(ctx context.Context, l store.Lease, held *store.Step, snap store.Snapshot, leaseFor time.Duration) (err error) {
	defer classify(&err)
	what := fmt.Sprintf("save snapshot at %d", snap.Seq)
	if held != nil {
		what = "commit " + held.Key + " and " + what
	}
	if err := journals.CheckSnapshot(snap); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	data := snap.Data
	if data == nil {
		data = []byte{}
	}
	return s.write(ctx, what, func(w *wtx) error {
		// A held step is journal progress and clears the fault count, as CommitStep does; a
		// snapshot alone is not (store/postgres's save_snapshot.sql).
		fence := "snapshot_fence"
		if held != nil {
			fence = "renew_lease"
		}
		tenant, err := w.fence(fence, l.RunID, l.Epoch, micros(w.now)+leaseFor.Microseconds(), micros(w.now))
		if err != nil {
			return err
		}
		if held != nil {
			if err := w.upsertStep(l.RunID, tenant, *held); err != nil {
				return err
			}
		}
		_, err = w.exec("save_snapshot", l.RunID, tenant, snap.Seq, snap.LastKey, snap.Code, data, micros(w.now))
		return err
	})
}

// JournalPage reads up to limit entries of the run's journal from entry from on, under the
// lease: the fence and the read in one read transaction, reading one more entry to tell
// whether more follow.
func (s *Store) JournalPage(ctx context.Context, l store.Lease, from, limit int) (_ []store.Step, _ bool, err error) {
	defer classify(&err)
	what := fmt.Sprintf("journal of run %s from %d", l.RunID, from)
	if limit <= 0 {
		return nil, false, fmt.Errorf("%s: a page of %d entries", what, limit)
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	defer func() { _ = tx.Rollback() }()
	var (
		tenant  string
		created int64
	)
	err = tx.QueryRowContext(ctx, s.q("fence_get"), l.RunID, l.Epoch).Scan(&tenant, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, fmt.Errorf("%s: %w", what, store.ErrLeaseLost)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	rows, err := tx.QueryContext(ctx, s.q("journal_page"), l.RunID, from, windowLimit(limit))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	steps, err := collect(rows, scanStep)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", what, err)
	}
	if steps == nil {
		steps = []store.Step{}
	}
	page, more := journals.Trim(steps, limit)
	return page, more, nil
}

// Finish records a run's end.
func (s *Store) Finish(ctx context.Context, l store.Lease, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) (err error) {
	defer classify(&err)
	return s.write(ctx, "finish run", func(w *wtx) error {
		_, child, err := w.finish(l, status, output, info, guestLog)
		if err != nil {
			return err
		}
		return w.ended(l.RunID, child)
	})
}

// CommitAndSuspend journals the held step and the step that suspends the run, and suspends
// it, in one transaction.
func (s *Store) CommitAndSuspend(ctx context.Context, l store.Lease, held, st store.Step, wakeAt *time.Time) (err error) {
	defer classify(&err)
	return s.write(ctx, "commit "+held.Key+" and suspend at "+st.Key, func(w *wtx) error {
		return w.suspendAt(l, wakeAt, held, st)
	})
}

// CommitAndFinish journals the run's last step and records its end, in one transaction.
func (s *Store) CommitAndFinish(ctx context.Context, l store.Lease, st store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, guestLog []store.GuestLogLine) (err error) {
	defer classify(&err)
	return s.write(ctx, "commit "+st.Key+" and finish run", func(w *wtx) error {
		tenant, child, err := w.finish(l, status, output, info, guestLog)
		if err != nil {
			return err
		}
		if err := w.upsertStep(l.RunID, tenant, st); err != nil {
			return err
		}
		return w.ended(l.RunID, child)
	})
}

// FinishAndContinue ends the run, with its last step when held is set, and creates the run
// that continues it, in one transaction (store.Store.FinishAndContinue).
func (s *Store) FinishAndContinue(ctx context.Context, l store.Lease, held *store.Step, status store.RunStatus, output json.RawMessage, info *abi.ErrorInfo, next store.NewRun, guestLog []store.GuestLogLine) (run store.Run, err error) {
	defer classify(&err)
	if !status.Terminal() {
		return store.Run{}, fmt.Errorf("finish and continue run: status %q is not an end", status)
	}
	input, err := jsonOrNull(next.Input)
	if err != nil {
		return store.Run{}, fmt.Errorf("finish and continue run: input: %w", err)
	}
	err = s.write(ctx, "finish and continue run", func(w *wtx) error {
		tenant, child, err := w.finish(l, status, output, info, guestLog)
		if err != nil {
			return err
		}
		if held != nil {
			if err := w.upsertStep(l.RunID, tenant, *held); err != nil {
				return err
			}
		}
		var key string
		if err := w.queryRow("run_key", l.RunID).Scan(&key); err != nil {
			return err
		}
		if _, err := w.exec("unkey_run", l.RunID); err != nil {
			return err
		}
		at := w.now
		if next.NotBefore != nil && next.NotBefore.After(at) {
			at = *next.NotBefore
		}
		run, err = scanRun(w.queryRow("continue_run", newUUID(), next.TenantID, next.Workflow, next.Version, next.Digest,
			input, nullIfEmpty(key), next.RetentionDays, micros(at), micros(w.now), timeArg(next.Deadline),
			retryArg(next.Retry), next.Attempt, l.RunID))
		if err != nil {
			return err
		}
		if _, err := w.exec("link_continued", l.RunID, run.ID); err != nil {
			return err
		}
		if _, err := w.exec("move_run_events", l.RunID, run.ID); err != nil {
			return err
		}
		if child {
			if err := w.childContinued(l.RunID, run.ID); err != nil {
				return err
			}
		}
		if err := w.flowEnded(l.RunID); err != nil {
			return err
		}
		w.wake()
		return nil
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("finish and continue run %s: %w", l.RunID, err)
	}
	return run, nil
}

// Fault hands the run back after a faulted activation and counts the fault.
func (s *Store) Fault(ctx context.Context, l store.Lease, reason string, retryAt time.Time) (err error) {
	defer classify(&err)
	return s.write(ctx, "hand back faulted run", func(w *wtx) error {
		_, err := w.fence("fault", l.RunID, l.Epoch, micros(retryAt), reason, micros(w.now))
		return err
	})
}

// Release hands the run back, runnable now.
func (s *Store) Release(ctx context.Context, l store.Lease) (err error) {
	defer classify(&err)
	return s.write(ctx, "release run", func(w *wtx) error {
		_, err := w.fence("suspend", l.RunID, l.Epoch, micros(w.now), micros(w.now))
		return err
	})
}
