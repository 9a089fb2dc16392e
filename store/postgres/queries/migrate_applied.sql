-- The number of the last applied migration, 0 for none. Run only once the migrations table
-- exists (migrate_bootstrap, or migrations_table says so).
SELECT coalesce(max(version), 0) FROM migrations
