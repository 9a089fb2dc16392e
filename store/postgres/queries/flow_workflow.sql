-- A start's workflow with its flow, as create_leased_run.sql resolves it ($3 '': the most
-- recently bound version), and the transaction's time, which every flow decision reads.
-- $1 tenant, $2 workflow, $3 version.
SELECT name, version, digest, retention_days, flow, now()
FROM workflows
WHERE tenant_id = $1 AND name = $2 AND ($3 = '' OR version = $3)
ORDER BY bound_seq DESC
LIMIT 1
