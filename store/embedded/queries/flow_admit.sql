-- Hands a concurrency slot to a waiting run: claimable at ?2. ?1 run, ?2 available at, ?3 now.
UPDATE runs SET available_at = ?2, updated_at = ?3 WHERE id = ?1
