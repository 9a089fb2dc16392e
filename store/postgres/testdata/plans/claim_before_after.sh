#!/usr/bin/env bash
# EXPLAIN (ANALYZE, BUFFERS) of the claim on 100,000 pending runs of 8 tenants, none under flow
# control, on the schema of git revision BEFORE and on this checkout's, each run twice in one
# session (the second without the session's first-use costs): flow control must leave the
# claim's plan as it was (engine/RATIONALE.md, "Flow control").
# Usage: store/postgres/testdata/plans/claim_before_after.sh BEFORE_REV   (psql on $PGURL)
set -euo pipefail
rev=${1:?usage: $0 BEFORE_REV}
cd "$(git rev-parse --show-toplevel)"
url=${PGURL:-postgres://postgres@127.0.0.1:5432/test}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/before/migrations"
for f in $(git ls-tree --name-only "$rev" store/postgres/migrations/); do git show "$rev:$f" > "$tmp/before/migrations/$(basename "$f")"; done
git show "$rev:store/postgres/queries/claim_runs.sql" > "$tmp/before/claim_runs.sql"
explain() { # explain SCHEMA MIGRATIONS_DIR CLAIM_SQL
  local P="psql $url -X -q -v ON_ERROR_STOP=1"
  $P -c "DROP SCHEMA IF EXISTS $1 CASCADE; CREATE SCHEMA $1;" 2>/dev/null
  { echo "SET search_path TO $1;"; for f in "$2"/*.sql; do cat "$f"; echo; done; } | $P >/dev/null
  $P <<SQL
SET search_path TO $1;
INSERT INTO tenants (id) SELECT 'x' || t FROM generate_series(0, 7) t;
INSERT INTO runs (tenant_id, workflow, version, digest, status, input, retention_days, available_at)
SELECT 'x' || (i % 8), 'w', '1', 'd', 'pending', '{}', 7, now() - (i % 3600) * interval '1 second'
FROM generate_series(1, 100000) i;
VACUUM ANALYZE runs;
SQL
  { echo "SET search_path TO $1;"; echo "PREPARE claim(integer, text, bigint, integer) AS"; cat "$3"; echo ";"
    for _ in 1 2; do echo "BEGIN;"; echo "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF) EXECUTE claim(32, 'explain-host', 60000, 0);"; echo "ROLLBACK;"; done; } | $P
  $P -c "DROP SCHEMA $1 CASCADE;" 2>/dev/null
}
explain claim_before "$tmp/before/migrations" "$tmp/before/claim_runs.sql" > "$tmp/before.txt"
explain claim_after store/postgres/migrations store/postgres/queries/claim_runs.sql > "$tmp/after.txt"
echo "== after (this checkout)"; cat "$tmp/after.txt"
echo "== plan differences, costs and buffer counts aside (none expected):"
diff <(sed 's/(cost=[^)]*)//; s/Buffers:.*//' "$tmp/before.txt") <(sed 's/(cost=[^)]*)//; s/Buffers:.*//' "$tmp/after.txt") && echo none
echo "== buffers of the whole claim, before then after:"
grep -A1 '^ Update on runs r' "$tmp/before.txt" | grep Buffers; grep -A1 '^ Update on runs r' "$tmp/after.txt" | grep Buffers
