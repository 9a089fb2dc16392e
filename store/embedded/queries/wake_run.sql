UPDATE runs SET available_at = ?2, updated_at = ?2 WHERE id = ?1
