-- Deletes a batch of broadcast events received before ?1 (unix microseconds), oldest first.
-- Events sent to one run (run_id set) are not touched. ?2 batch size.
DELETE FROM events WHERE id IN (
    SELECT id FROM events
    WHERE run_id IS NULL AND received_at < ?1
    ORDER BY received_at
    LIMIT ?2
)
