-- Hands back every live lease ?1 holds, the run available now (store/postgres's
-- release_owned.sql); the caller leaves out the runs it keeps. ?2 now.
SELECT id FROM runs WHERE lease_owner = ?1 AND status = 'running' AND lease_expires_at > ?2
