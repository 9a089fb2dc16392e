#!/bin/sh
# Builds a database of a million runs with stale statistics, for reading plans at scale
# (issue 13). Not a test: it takes minutes and a few GB. Usage:
#   store/postgres/testdata/plans/scale1m.sh [database] [runs] [fill|waiting]
# It drops and creates the database (default scale1m), applies the store's migrations in
# schema wfhost, fills 240 runs, analyses (the statistics a young deployment has), turns
# autovacuum off for the tables and fills the rest (testdata/plans/fill.sql), so the
# statistics are those of an almost empty table. Then print every per-claim and
# per-activation plan, EXPLAIN (ANALYZE, BUFFERS), custom and generic, with
#   WFHOST_PLANS_URL=postgres://postgres@127.0.0.1:5432/scale1m GOWORK=off go test -run TestPlansAt1M -v ./store/postgres/
# and again after `ANALYZE` for fresh statistics (or on a copy: createdb -T scale1m scale1m_fresh).
# waiting.sql builds the signal scenario's state instead (runs parked on a wait, each having
# moved three times, so runs_ready carries three dead entries per run until a vacuum).
set -eu
db=${1:-scale1m}
runs=${2:-1000000}
shape=${3:-fill}
here=$(cd "$(dirname "$0")" && pwd)
migrations=$here/../../migrations
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres}
dropdb --if-exists "$db"
createdb "$db"
psql() { command psql -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
{
    echo "CREATE SCHEMA wfhost; SET search_path = wfhost;"
    for m in "$migrations"/*.sql; do cat "$m"; echo; done
} | psql
if [ "$shape" = waiting ]; then
    # Never analysed, as a store that autovacuum never visited.
    psql -c "SET search_path = wfhost" -c "SET wfhost.fill_runs = $runs" -f "$here/waiting.sql"
    exit
fi
psql -c "SET search_path = wfhost" -c "SET wfhost.fill_runs = 240" -f "$here/fill.sql" -c "ANALYZE"
for t in runs steps events; do
    psql -c "ALTER TABLE wfhost.$t SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)"
done
psql -c "SET search_path = wfhost" -c "SET wfhost.fill_runs = $runs" -c "SET session_replication_role = replica" -f "$here/fill.sql"
psql -c "CHECKPOINT"
psql -At -c "SELECT relname, reltuples, pg_size_pretty(pg_total_relation_size(oid)) FROM pg_class WHERE relnamespace = 'wfhost'::regnamespace AND relkind = 'r' ORDER BY 1"
