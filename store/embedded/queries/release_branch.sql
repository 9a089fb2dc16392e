-- A held branch takes a freed slot (the caller makes it claimable). ?1 run.
UPDATE run_branches SET status = 'live' WHERE run_id = ?1
