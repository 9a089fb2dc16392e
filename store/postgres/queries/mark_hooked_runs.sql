-- Marks hooked the open runs a hook just set names, so that it fires for every run that ends
-- after it is set (runs.hooked is the end trigger's gate, 025/026). Locked in id order, as a
-- group commit locks the runs it ends, so the two cannot deadlock. Returns how many it marked.
-- $1 tenant, $2 workflow ('' every one), $3 version ('' every one).
WITH open AS (
    SELECT id FROM runs
    WHERE tenant_id = $1 AND ($2 = '' OR workflow = $2) AND ($3 = '' OR version = $3)
      AND status IN ('pending', 'running', 'paused', 'nondeterministic') AND NOT hooked
    ORDER BY id
    FOR NO KEY UPDATE
), marked AS (
    UPDATE runs SET hooked = true FROM open WHERE runs.id = open.id AND NOT runs.hooked
    RETURNING 1
)
SELECT count(*) FROM marked
