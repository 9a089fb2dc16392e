-- Leases the one run a host parked (engine/parking.go), when a claim could take it now: it is
-- live and due, no live lease holds it, and its tenant is under its concurrency cap (its
-- limits' "concurrency", else $4; 0: none). The same lease as claim_runs grants, in one index
-- lookup by id instead of a walk of the due runs. No row: not claimable, nothing changed.
-- When the entry the pass suspended at ($5) is a sleep that is due, it is marked elapsed here,
-- under the new lease, as the pass would mark it (pass.go): one write fewer per wake-up.
-- $1 run, $2 owner, $3 lease ms, $4 default tenant cap, $5 the parked entry.
WITH leased AS (
UPDATE runs r
SET status = 'running',
    available_at = now() + $3 * interval '1 millisecond',
    lease_owner = $2,
    lease_epoch = r.lease_epoch + 1,
    lease_expires_at = now() + $3 * interval '1 millisecond',
    started_at = coalesce(r.started_at, now()),
    activations = r.activations + 1,
    updated_at = now()
FROM tenants t
WHERE r.id = $1 AND t.id = r.tenant_id
  AND r.status IN ('pending', 'running') AND r.available_at <= now()
  AND r.lease_owner IS NULL
  AND (coalesce((t.limits ->> 'concurrency')::integer, $4) <= 0 OR (
      SELECT count(*) FROM runs h
      WHERE h.tenant_id = r.tenant_id AND h.lease_owner IS NOT NULL AND h.lease_expires_at > now()
  ) < coalesce((t.limits ->> 'concurrency')::integer, $4))
RETURNING r.lease_epoch, r.faults, coalesce(r.last_fault, '') AS last_fault, r.id, r.tenant_id, r.workflow, r.version, r.digest, r.status, r.input, r.output, r.error,
    coalesce(r.idempotency_key, '') AS idempotency_key, r.retention_days, r.activations, r.available_at, r.created_at, r.started_at,
    r.completed_at, r.updated_at, r.deadline, coalesce(r.continued_from::text, '') AS continued_from, coalesce(r.continued_as::text, '') AS continued_as, r.attempt, r.retry, r.cancel_requested_at, r.cancel_grace_until, coalesce(r.restarted_from::text, '') AS restarted_from, r.paused_at
), elapsed AS (
    UPDATE steps s SET status = 'completed', completed_at = s.wake_at
    FROM leased
    WHERE s.run_id = leased.id AND s.seq = $5 AND s.kind = 'sleep' AND s.status = 'sleeping' AND s.wake_at <= now()
)
SELECT * FROM leased
