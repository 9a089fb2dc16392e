-- The run that continues a child (a retry, continue-as-new) is its parent's child in its place.
-- ?1 ended child, ?2 its successor, ?3 now.
INSERT INTO run_parents (run_id, parent_run_id, parent_key, parent_close, awaited, created_at)
SELECT ?2, parent_run_id, parent_key, parent_close, awaited, ?3 FROM run_parents WHERE run_id = ?1
ON CONFLICT (run_id) DO NOTHING
