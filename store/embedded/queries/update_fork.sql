-- A parallel step's first completed branch and whether its join is decided. ?1 parent, ?2 key,
-- ?3 first branch, ?4 decided.
UPDATE run_forks SET first_branch = ?3, decided = ?4 WHERE parent_run_id = ?1 AND fork_key = ?2
