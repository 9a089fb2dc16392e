-- Hands back every live lease owner $1 holds on a run not in $2, the runs available now: leases
-- the host got without hearing of it, when the answer to a claim or a start was lost with the
-- connection. It walks the held runs only (runs_held).
UPDATE runs
SET lease_owner = NULL, lease_expires_at = NULL, available_at = now(), updated_at = now()
WHERE lease_owner = $1 AND status = 'running' AND lease_expires_at > now()
  AND NOT (id = ANY($2::uuid[]))
RETURNING id
