-- Whether the store was ever migrated. $1 the schema-qualified, quoted migrations table name.
SELECT to_regclass($1) IS NOT NULL
