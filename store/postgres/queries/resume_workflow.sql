-- Lifts a workflow's (or version's) pause and resumes its paused runs that no other pause
-- covers, waking the hosts; runs still pausing have their ask withdrawn. No row from the
-- first part: it was not paused so. Run under pause_workflow_lock.sql.
-- $1 tenant, $2 workflow, $3 version or '', $4 wake channel.
WITH lifted AS (
    DELETE FROM workflow_pauses WHERE tenant_id = $1 AND workflow = $2 AND version = $3
    RETURNING 1
), resumed AS (
    UPDATE runs r
    SET status = CASE WHEN r.status <> 'paused' THEN r.status WHEN r.activations > 0 THEN 'running' ELSE 'pending' END,
        paused_at = NULL, updated_at = now()
    FROM lifted
    WHERE r.tenant_id = $1 AND r.workflow = $2 AND ($3 = '' OR r.version = $3)
      AND (r.status = 'paused' OR r.status IN ('pending', 'running') AND r.paused_at IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM workflow_pauses p
                      WHERE p.tenant_id = r.tenant_id AND p.workflow = r.workflow AND p.version IN ('', r.version)
                        AND p.version <> $3)
    RETURNING r.id
)
SELECT (SELECT count(*) FROM lifted), (SELECT count(*) FROM resumed),
       (SELECT count(pg_notify($4, current_setting('application_name'))) FROM (SELECT 1 FROM resumed LIMIT 1) w)
