SELECT pg_advisory_unlock(hashtextextended('wfhost-migrate/' || $1, 0))
