-- A resume's second pass (021_pause.sql): resumes the runs of the workflow ($3 '') or version
-- that were created paused (paused_at is their creation time) by starts that still saw the pause
-- while it was lifted, unless another pause covers them now, and wakes the hosts. Run under
-- pause_workflow_lock.sql. $1 tenant, $2 workflow, $3 version or '', $4 wake channel.
WITH resumed AS (
    UPDATE runs r
    SET status = 'pending', paused_at = NULL, updated_at = now()
    WHERE r.tenant_id = $1 AND r.workflow = $2 AND ($3 = '' OR r.version = $3)
      AND r.status = 'paused' AND r.activations = 0 AND r.paused_at = r.created_at
      AND NOT EXISTS (SELECT 1 FROM workflow_pauses p
                      WHERE p.tenant_id = r.tenant_id AND p.workflow = r.workflow AND p.version IN ('', r.version))
    RETURNING r.id
)
SELECT (SELECT count(*) FROM resumed),
       (SELECT count(pg_notify($4, current_setting('application_name'))) FROM (SELECT 1 FROM resumed LIMIT 1) w)
