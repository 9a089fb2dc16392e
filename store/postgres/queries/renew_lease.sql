UPDATE runs SET lease_expires_at = now() + $2 * interval '1 millisecond', updated_at = now() WHERE id = $1
