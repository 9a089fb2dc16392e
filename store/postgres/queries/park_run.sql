UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, available_at = $2, updated_at = now() WHERE id = $1
