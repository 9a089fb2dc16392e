-- Sets the gate flags (026_run_gate.sql) of the tenant's workflow versions that a pause, a hook
-- or a binding may have changed, from what workflow_pauses and hooks now hold; a row whose
-- flags stand is not rewritten. $1 tenant, $2 workflow ('' every one), $3 version ('' every one).
WITH g AS (
    SELECT w.tenant_id, w.name, w.version,
        EXISTS (SELECT 1 FROM workflow_pauses p
                WHERE p.tenant_id = w.tenant_id AND p.workflow = w.name AND p.version IN ('', w.version)) AS paused,
        EXISTS (SELECT 1 FROM hooks h
                WHERE h.tenant_id = w.tenant_id AND h.workflow IN ('', w.name) AND h.version IN ('', w.version)) AS hooked
    FROM workflows w
    WHERE w.tenant_id = $1 AND ($2 = '' OR w.name = $2) AND ($3 = '' OR w.version = $3)
)
UPDATE workflows w
SET paused = g.paused, hooked = g.hooked
FROM g
WHERE w.tenant_id = g.tenant_id AND w.name = g.name AND w.version = g.version
  AND (w.paused <> g.paused OR w.hooked <> g.hooked)
