package embedded

import "context"

// CutJournal is the storetest.JournalCutter hook, in the test build only: it cuts a journal
// back under a snapshot, as a future "restart from step i" would.
func (s *Store) CutJournal(ctx context.Context, runID string, from int) error {
	return s.write(ctx, "cut journal", func(w *wtx) error {
		_, err := w.tx.ExecContext(w.ctx, `DELETE FROM steps WHERE run_id = ?1 AND seq >= ?2`, runID, from)
		return err
	})
}
