-- Holds a run that is to pause, as store/postgres's hold_paused.sql; the held step is written
-- after (upsert_step). ?1 run, ?2 epoch, ?3 always, ?4 now, ?5 whether a step is written
-- (journal progress: the fault count is cleared).
UPDATE runs
SET status = 'paused', paused_at = coalesce(paused_at, ?4), lease_owner = NULL, lease_expires_at = NULL,
    available_at = ?4, updated_at = ?4,
    faults = CASE WHEN ?5 THEN 0 ELSE faults END,
    last_fault = CASE WHEN ?5 THEN NULL ELSE last_fault END
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running' AND (paused_at IS NOT NULL OR ?3)
RETURNING tenant_id
