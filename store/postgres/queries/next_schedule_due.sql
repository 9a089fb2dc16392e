-- A buffered fire time is in the past: it is due as soon as its live run ends, which only a
-- look at the run tells. Each half reads its partial index.
SELECT least(
    (SELECT min(due_at) FROM schedules WHERE NOT paused),
    (SELECT min(buffered_fire_at) FROM schedules WHERE NOT paused AND buffered_fire_at IS NOT NULL))
