package embedded

import (
	"database/sql"
	"strings"
	"testing"
)

// TestPlans reads SQLite's plans (EXPLAIN QUERY PLAN; the store never runs ANALYZE, so they do
// not depend on the data) of the statements a claim and a signal run, and fails on a full scan
// of runs or steps, or on a wake-up query that reads the leased runs through runs_claimable,
// every live run with an available_at (issue 13: 15 ms a call at 100,000 waiting runs).
func TestPlans(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	run, tenant := "00000000-0000-4000-8000-000000000000", "default"
	cases := []struct {
		query string
		args  []any
		avoid []string // index names the plan must not use
	}{
		{"next_wakeup", []any{int64(1)}, nil},
		{"claim_tenants", []any{int64(1), 0}, nil},
		{"claim_candidates", []any{tenant, int64(1), 32}, nil},
		{"count_held", []any{tenant, int64(1)}, nil},
		{"get_snapshot", []any{run}, nil},
		{"load_journal_tail", []any{run, 3, int64(-1)}, nil},
		{"load_journal_tail", []any{run, 3, int64(9)}, nil},
		{"journal_page", []any{run, 3, int64(9)}, nil},
		{"fence_get", []any{run, 1}, nil},
		{"run_status", []any{tenant, run}, nil},
		{"waiting_steps_of_run", []any{run, "verify"}, []string{"steps_waiting"}},
		{"deliver_signal", []any{run, "k", "{}", int64(1)}, nil},
		{"wake_run", []any{run, int64(1)}, nil},
		{"extend_lease", []any{run, 1, int64(1)}, nil},
	}
	for _, c := range cases {
		rows, err := s.rdb.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+s.q(c.query), c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		plan, err := planLines(rows)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		for _, line := range plan {
			if strings.HasPrefix(line, "SCAN runs") || strings.HasPrefix(line, "SCAN steps") {
				t.Errorf("%s reads a whole table: %q in\n%s", c.query, line, strings.Join(plan, "\n"))
			}
			for _, index := range c.avoid {
				if strings.Contains(line, "INDEX "+index+" ") || strings.HasSuffix(line, "INDEX "+index) {
					t.Errorf("%s uses %s:\n%s", c.query, index, strings.Join(plan, "\n"))
				}
			}
		}
		if c.query == "next_wakeup" && !strings.Contains(strings.Join(plan, "\n"), "USING INDEX runs_held") {
			t.Errorf("next_wakeup does not read leased runs through runs_held:\n%s", strings.Join(plan, "\n"))
		}
	}
}

// planLines returns the detail column of EXPLAIN QUERY PLAN's rows.
func planLines(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}
