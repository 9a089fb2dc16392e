DELETE FROM events WHERE id = ?
