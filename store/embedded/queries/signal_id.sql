-- The first sending's outcome of a signal id sent to a run, if it was sent before.
-- ?1 run, ?2 signal id.
SELECT delivered FROM signal_ids WHERE run_id = ?1 AND signal_id = ?2
