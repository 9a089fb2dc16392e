-- The lock that orders a workflow's pause or resume against the runs being created for it
-- (the runs_created_paused trigger of 021_pause.sql takes it shared). $1 tenant, $2 workflow.
SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 16))
