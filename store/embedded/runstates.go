package embedded

import (
	"context"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// CountRunStates counts the live runs of every tenant by state.
func (s *Store) CountRunStates(ctx context.Context) (_ []store.RunStateCount, err error) {
	defer classify(&err)
	rows, err := s.rdb.QueryContext(ctx, s.q("count_run_states"), micros(s.now()))
	if err != nil {
		return nil, fmt.Errorf("count run states: %w", err)
	}
	defer rows.Close()
	var out []store.RunStateCount
	for rows.Next() {
		var c store.RunStateCount
		if err := rows.Scan(&c.TenantID, &c.State, &c.Runs); err != nil {
			return nil, fmt.Errorf("count run states: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
