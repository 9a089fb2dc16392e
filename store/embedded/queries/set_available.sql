-- A pending run's available_at moved by its priority. ?1 run, ?2 available at.
UPDATE runs SET available_at = ?2 WHERE id = ?1 AND status = 'pending' AND lease_owner IS NULL
