UPDATE tenants SET limits = ?2 WHERE id = ?1 RETURNING id, limits, created_at
