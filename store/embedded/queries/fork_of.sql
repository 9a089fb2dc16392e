-- A parallel step's join. ?1 parent, ?2 step key.
SELECT join_mode, branches, first_branch, decided FROM run_forks WHERE parent_run_id = ?1 AND fork_key = ?2
