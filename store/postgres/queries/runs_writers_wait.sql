-- Waits until every transaction that writes runs at this moment has ended (runs_writers_wait()
-- of 021_pause.sql): a workflow's pause or resume between its two passes. Returns how many
-- it waited for.
SELECT runs_writers_wait('runs'::regclass)
