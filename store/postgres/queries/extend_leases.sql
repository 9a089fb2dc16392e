UPDATE runs r
SET lease_expires_at = now() + $3 * interval '1 millisecond'
FROM unnest($1::uuid[], $2::bigint[]) AS l(id, epoch)
WHERE r.id = l.id AND r.lease_epoch = l.epoch AND r.status = 'running'
RETURNING r.id, r.lease_epoch
