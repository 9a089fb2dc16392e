-- ForkBranches: run ?1 is branch ?4 of the parallel step ?3 of run ?2, ?5 held or live.
INSERT INTO run_branches (run_id, parent_run_id, fork_key, branch, status) VALUES (?1, ?2, ?3, ?4, ?5)
