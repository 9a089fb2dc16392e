package workflows

import (
	"errors"
	"fmt"

	"github.com/wfhost/wfhost/store"
)

// NotFound is the error of resolving a workflow that has no binding: name, and version when
// one was asked for ("" means the latest).
func NotFound(name, version string) error {
	if version == "" {
		return fmt.Errorf("workflow %q: %w", name, store.ErrNotFound)
	}
	return fmt.Errorf("workflow %q version %q: %w", name, version, store.ErrNotFound)
}

// ResolveError is ResolveWorkflow's error for the error of its query, which the store has
// already mapped to store.ErrNotFound when no row matched.
func ResolveError(name, version string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return NotFound(name, version)
	}
	return fmt.Errorf("resolve workflow: %w", err)
}

// Rows is what both drivers' result sets offer (pgx.Rows, *sql.Rows); the caller closes them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Summaries groups rows of (name, version), in binding order, into one summary per name: its
// versions, the last bound one as the latest, and empty run counts.
func Summaries(versions Rows) ([]store.WorkflowSummary, error) {
	var out []store.WorkflowSummary
	index := map[string]int{}
	for versions.Next() {
		var name, version string
		if err := versions.Scan(&name, &version); err != nil {
			return nil, fmt.Errorf("list workflows: %w", err)
		}
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, store.WorkflowSummary{Name: name, RunCounts: map[store.RunStatus]int{}})
		}
		out[i].Versions = append(out[i].Versions, version)
		out[i].LatestVersion = version
	}
	if err := versions.Err(); err != nil {
		return nil, fmt.Errorf("list workflows: %w", err)
	}
	return out, nil
}

// AddRunCounts adds rows of (workflow, status, count) to the summaries of those workflows.
func AddRunCounts(summaries []store.WorkflowSummary, counts Rows) error {
	index := make(map[string]int, len(summaries))
	for i, s := range summaries {
		index[s.Name] = i
	}
	for counts.Next() {
		var (
			wf, status string
			n          int
		)
		if err := counts.Scan(&wf, &status, &n); err != nil {
			return fmt.Errorf("count runs: %w", err)
		}
		if i, ok := index[wf]; ok {
			summaries[i].RunCounts[store.RunStatus(status)] = n
		}
	}
	if err := counts.Err(); err != nil {
		return fmt.Errorf("count runs: %w", err)
	}
	return nil
}
