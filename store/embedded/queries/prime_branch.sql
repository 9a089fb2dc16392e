-- ForkBranches: branch ?1's activations start at 1 (a claim reads the journal of a run past
-- its first activation only, and a branch has one from the start); unless ?2 (live), it is
-- held: not claimable (available_at null, as a suspended run's) until a slot frees.
UPDATE runs SET activations = 1, available_at = CASE WHEN ?2 THEN available_at END WHERE id = ?1
