-- ForkBranches: branch ?1's activations start at 1 (a claim reads the journal of a run past
-- its first activation only, and a branch has one from the start); unless ?2 (live), it is
-- held: not claimable (available_at null, as a suspended run's) until a slot frees. It is a
-- child (runs.is_child), so its end takes the finish's child path, which decides the join.
UPDATE runs SET activations = 1, available_at = CASE WHEN ?2 THEN available_at END, is_child = 1 WHERE id = ?1
