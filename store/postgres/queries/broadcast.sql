-- Broadcast, after lock_broadcast_event: keep the event and resolve every run of the tenant
-- waiting on a step it matches, then wake the hosts if any was. Run rows are locked in id
-- order so that concurrent broadcasts (and hotfix deploys, which lock in the same order) cannot
-- deadlock. A step resolved by someone else while this waited for its run lock fails the
-- status re-check of the update and is left alone.
-- An event whose id ($5) the tenant already sent for this name is kept once: the statement then
-- changes nothing and reports kept = false.
-- $1 tenant, $2 event, $3 payload, $4 wake channel, $5 event id or null.
WITH ev AS (
    INSERT INTO events (tenant_id, name, payload, event_key) VALUES ($1, $2, $3, $5)
    ON CONFLICT (tenant_id, name, event_key) WHERE event_key IS NOT NULL DO NOTHING
    RETURNING id
), waiting AS (
    SELECT s.run_id, s.key
    FROM steps s JOIN runs r ON r.id = s.run_id
    WHERE s.tenant_id = $1 AND s.status = 'waiting' AND s.event = $2
      AND (s.match IS NULL OR $3::jsonb @> s.match)
      AND r.status = 'running'
      AND EXISTS (SELECT 1 FROM ev)
    ORDER BY r.id
    FOR UPDATE OF r
), resolved AS (
    UPDATE steps s
    SET status = 'completed', output = $3, event_id = (SELECT id FROM ev), completed_at = now()
    FROM waiting w
    WHERE s.run_id = w.run_id AND s.key = w.key AND s.status = 'waiting'
    RETURNING s.run_id
), woken AS (
    UPDATE runs SET available_at = now(), updated_at = now()
    FROM resolved WHERE runs.id = resolved.run_id
    RETURNING runs.id
), notified AS (
    SELECT pg_notify($4, current_setting('application_name')) FROM (SELECT 1 FROM woken LIMIT 1) AS any_woken
)
SELECT (SELECT count(*) FROM woken), (SELECT count(*) FROM notified), EXISTS (SELECT 1 FROM ev),
       (SELECT coalesce(array_agg(id::text ORDER BY id), '{}') FROM woken)
