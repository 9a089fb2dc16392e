package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
	"github.com/wfhost/wfhost/store/internal/journals"
)

// ResumeRun leases a run a host parked and reads its journal's tail, in one round trip: the
// lease and the read are two statements of one batch (the read sees the journal as the lease
// found it: nothing writes a run's steps without its lease but a signal, and a signal that
// lands between the two is seen by the pass's own wait, which reads the row again before it
// parks: pass.go). See store.Store.
func (s *Store) ResumeRun(ctx context.Context, p store.ResumeParams) (_ store.Claim, _ bool, err error) {
	defer classify(&err)
	if !validUUID(p.RunID) {
		return store.Claim{}, false, nil
	}
	b := &pgx.Batch{}
	b.Queue(s.q("resume_run"), p.RunID, p.Owner, millis(p.LeaseFor), p.TenantConcurrency, p.FromSeq)
	b.Queue(s.q("load_journal_tail"), p.RunID, p.FromSeq, windowLimit(p.JournalWindow))
	var (
		c  store.Claim
		ok bool
	)
	err = func() (err error) {
		br := s.on("resume_run").SendBatch(ctx, b)
		defer func() {
			if cerr := br.Close(); err == nil && cerr != nil {
				err = cerr
			}
		}()
		rows, err := br.Query()
		if err != nil {
			return err
		}
		claims, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Claim, error) {
			var c store.Claim
			c.Run, err = scanRun(r, &c.Lease.Epoch, &c.Faults, &c.LastFault)
			c.Lease.RunID = c.Run.ID
			return c, err
		})
		if err != nil {
			return err
		}
		srows, err := br.Query()
		if err != nil {
			return err
		}
		steps, err := pgx.CollectRows(srows, func(r pgx.CollectableRow) (store.Step, error) { return scanStep(r) })
		if err != nil || len(claims) == 0 {
			return err
		}
		c, ok = claims[0], true
		c.Journal, c.JournalMore = journals.Trim(steps, p.JournalWindow)
		c.JournalFrom = p.FromSeq
		return nil
	}()
	if err != nil {
		return store.Claim{}, false, fmt.Errorf("resume run %s: %w", p.RunID, err)
	}
	return c, ok, nil
}
