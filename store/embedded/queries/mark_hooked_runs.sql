-- Marks hooked the open runs a hook just set names, so that it fires for every run that ends
-- after it is set (runs.hooked is the end's gate, hooks.go). ?1 tenant, ?2 workflow ('' every
-- one), ?3 version ('' every one).
UPDATE runs SET hooked = 1
WHERE tenant_id = ?1 AND (?2 = '' OR workflow = ?2) AND (?3 = '' OR version = ?3)
  AND status IN ('pending', 'running', 'paused', 'nondeterministic') AND hooked = 0
