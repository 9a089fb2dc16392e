package embedded

import (
	"context"

	"github.com/wfhost/wfhost/store"
)

// ResumeRun leases a run a host parked, when a claim could take it now, and reads its
// journal's tail, in one write transaction. See store.Store.
func (s *Store) ResumeRun(ctx context.Context, p store.ResumeParams) (_ store.Claim, _ bool, err error) {
	defer classify(&err)
	var (
		c  store.Claim
		ok bool
	)
	err = s.write(ctx, "resume run "+p.RunID, func(w *wtx) error {
		c, ok = store.Claim{}, false
		nowUs := micros(w.now)
		var n int
		if err := w.queryRow("resume_check", p.RunID, nowUs, p.TenantConcurrency).Scan(&n); err != nil || n == 0 {
			return err
		}
		run, err := scanRun(w.queryRow("claim_run", p.RunID, p.Owner, nowUs+p.LeaseFor.Microseconds(), nowUs), &c.Lease.Epoch, &c.Faults, &c.LastFault)
		if err != nil {
			return err
		}
		c.Run, c.Lease.RunID = run, run.ID
		if _, err := w.exec("elapse_sleep", p.RunID, p.FromSeq, nowUs); err != nil {
			return err
		}
		if err := w.loadTail(&c, p.FromSeq, p.JournalWindow); err != nil {
			return err
		}
		c.JournalFrom, ok = p.FromSeq, true
		return nil
	})
	if err != nil {
		return store.Claim{}, false, err
	}
	return c, ok, nil
}
