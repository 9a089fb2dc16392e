-- A parallel step's branches, in branch order. ?1 parent, ?2 key.
SELECT run_id, branch, status, output, error FROM run_branches WHERE parent_run_id = ?1 AND fork_key = ?2 ORDER BY branch
