package postgres

import (
	"context"
	"fmt"
)

// AutovacuumOff reports whether the server's autovacuum is off, for the daemon to warn at
// startup. The claim, due-timer and journal plans depend on fresh statistics and on dead
// tuples being reclaimed (migration 010 tunes the thresholds of the busiest tables, which
// only autovacuum reads). A million sleeping runs on a server with autovacuum off measured
// one claim of 32 at 6.36 ms (BENCHMARKS.md, "1M sleeping runs"), over the 5 ms target. The
// daemon does not vacuum for the server, whose operator turned it off for a reason of theirs;
// the warning makes the cost visible.
func (s *Store) AutovacuumOff(ctx context.Context) (bool, error) {
	var setting string
	if err := s.pool.QueryRow(ctx, "SHOW autovacuum").Scan(&setting); err != nil {
		return false, fmt.Errorf("show autovacuum: %w", err)
	}
	return setting == "off", nil
}
