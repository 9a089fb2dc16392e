-- A run's place in a fork, if it is a branch. ?1 run.
SELECT parent_run_id, fork_key, branch, status FROM run_branches WHERE run_id = ?1
