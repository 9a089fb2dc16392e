UPDATE runs SET available_at = now(), updated_at = now() WHERE id = $1
