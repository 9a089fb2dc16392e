DELETE FROM events WHERE id = $1
