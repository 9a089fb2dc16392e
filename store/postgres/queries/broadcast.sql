-- Keeps the event and resolves every waiting run of the tenant it matches. The run rows are
-- locked in id order so concurrent broadcasts cannot deadlock on each other.
WITH ev AS (
    INSERT INTO events (tenant_id, name, payload) VALUES ($1, $2, $3) RETURNING id
), waiting AS (
    SELECT s.run_id, s.key
    FROM steps s JOIN runs r ON r.id = s.run_id
    WHERE s.tenant_id = $1 AND s.status = 'waiting' AND s.event = $2
      AND (s.match IS NULL OR $3::jsonb @> s.match)
      AND r.status = 'running'
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
)
SELECT count(*) FROM woken
