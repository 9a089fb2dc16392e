-- Issue 13: per-run and per-claim statements that cost what their batch costs at a million runs.

-- A signal looks for the waiting steps of one run. steps_waiting is keyed by tenant and event
-- for broadcasts; without an index led by the run, the signal's plan read every waiting step
-- of the event in the tenant, so delivery slowed as the waiting set grew.
CREATE INDEX steps_waiting_run ON steps (run_id, seq) WHERE status = 'waiting';

-- Every move of a run (claim, suspension, wake) updates available_at, which runs_ready indexes,
-- so each leaves a dead entry there until a vacuum; claims and wake-up queries walk the due
-- part of that index and step over those entries (after the first scan, without visiting the
-- table). The default trigger, a fifth of the table dead, lets 200,000 pile up at a million
-- runs: vacuum runs after 2% instead, and analyze as often, so plans see the table as it is.
-- Steps are inserted and rarely updated: analyze them after 2% new rows, and vacuum them
-- after 5% (which keeps the visibility map current for index-only reads). These are hints to
-- autovacuum: where it is off for the server (autovacuum = off) they do nothing, and an
-- operator's VACUUM is what bounds the dead entries.
ALTER TABLE runs SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000);
ALTER TABLE steps SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05);
