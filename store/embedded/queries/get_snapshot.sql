-- A claimed run's snapshot, by its key, and whether its journal still holds the entry it was
-- taken after (entry seq-1, with key last_key; none for seq 0): one that does not describes a
-- journal the store no longer holds (store/postgres's load_journals.sql). Entries are numbered
-- from 0 with no gap, so entry seq-1 being there means the journal holds seq. ?1 run.
SELECT sn.seq, sn.last_key, sn.code, sn.data, sn.created_at,
    sn.seq = 0 AND sn.last_key = '' OR EXISTS (
        SELECT 1 FROM steps p WHERE p.run_id = sn.run_id AND p.seq = sn.seq - 1 AND p.key = sn.last_key) AS whole
FROM snapshots sn WHERE sn.run_id = ?1
