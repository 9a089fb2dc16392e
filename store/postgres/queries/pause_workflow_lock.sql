-- The lock that orders a workflow's pauses and resumes against each other, each of their two
-- passes taking it (021_pause.sql); no start takes it. $1 tenant, $2 workflow.
SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2, 16))
