-- A held run created paused keeps no available_at: unpausing it must not make it claimable
-- before it has a slot. $1 run.
UPDATE runs SET available_at = NULL WHERE id = $1
