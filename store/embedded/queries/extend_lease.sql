-- Renews a lease that still holds. A lease its run has handed back (suspended or released: no
-- owner, same epoch) is not held: renewing it gave the sleeping run a lease nobody held, which
-- kept every claim off it until it ran out, however soon the run was due or signalled.
UPDATE runs SET lease_expires_at = ?3
WHERE id = ?1 AND lease_epoch = ?2 AND status = 'running' AND lease_owner IS NOT NULL
