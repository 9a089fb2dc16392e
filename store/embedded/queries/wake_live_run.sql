-- Makes a live run available now. ?1 run, ?2 now.
UPDATE runs SET available_at = ?2, updated_at = ?2 WHERE id = ?1 AND status IN ('pending', 'running')
