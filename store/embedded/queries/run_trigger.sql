-- What a run's origin is read from (store.TriggerOf): its trigger column, its predecessor, its
-- restart source, the host it was created leased to, its parent link (a branch's too), and the
-- hook delivery that started it. ?1 tenant, ?2 run.
SELECT r.trigger, coalesce(r.continued_from, ''), r.attempt, coalesce(r.restarted_from, ''),
    coalesce(r.created_by, ''), coalesce(p.parent_run_id, ''), coalesce(p.parent_key, ''),
    EXISTS (SELECT 1 FROM run_branches b WHERE b.run_id = r.id),
    coalesce(d.run_id, ''), coalesce(d.hook_id, '')
FROM runs r
LEFT JOIN run_parents p ON p.run_id = r.id
LEFT JOIN hook_deliveries d ON d.id = (SELECT id FROM hook_deliveries WHERE started_run_id = r.id LIMIT 1)
WHERE r.tenant_id = ?1 AND r.id = ?2
