-- ForkBranches: the join of the parallel step $2 of run $1: $3 join, $4 branches.
INSERT INTO run_forks (parent_run_id, fork_key, join_mode, branches) VALUES ($1, $2, $3, $4)
