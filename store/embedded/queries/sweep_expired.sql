-- Deletes a batch of terminal runs past their retention, oldest expiry first; foreign keys
-- take their steps, events and outbound records. Live and nondeterministic runs have no
-- expires_at. ?1 now, ?2 batch size.
DELETE FROM runs WHERE id IN (
    SELECT id FROM runs WHERE expires_at < ?1 ORDER BY expires_at LIMIT ?2
)
