package postgres

import "context"

// CutJournal is the storetest.JournalCutter hook, in the test build only: it cuts a journal
// back under a snapshot, as a future "restart from step i" would.
func (s *Store) CutJournal(ctx context.Context, runID string, from int) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM steps WHERE run_id = $1 AND seq >= $2`, runID, from)
	return err
}
