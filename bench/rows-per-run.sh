#!/usr/bin/env bash
# Counts what one run costs Postgres in rows and trigger calls, for each commit given: figures
# that do not depend on how busy the machine is (BENCHMARKS.md, "What children, pause and the
# lifecycle log cost"). For each commit it builds cmd/wfbench in a worktree of its own, runs it
# with N1 and then N2 runs, reads the wfbench schema's pg_stat_user_tables (rows inserted,
# updated, of which heap-only, deleted) and pg_stat_user_functions (PL/pgSQL calls: trigger
# functions) after each, and prints the difference divided by N2 - N1, so the set-up and the
# warm-up fall out. wfbench's own xact_per_wf (statements and batches the engine sent per run)
# comes from the N2 run.
#
# Usage: bench/rows-per-run.sh COMMIT...
# Environment: ARGS (default "-mode=direct -lang=assemblyscript -steps=1 -c=32"), N1 (200),
# N2 (1200), DB (default bench_rows; created if missing, and given track_functions = pl, a
# setting of that database alone).
set -euo pipefail
if [ $# -lt 1 ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
args=${ARGS:--mode=direct -lang=assemblyscript -steps=1 -c=32}
n1=${N1:-200}
n2=${N2:-1200}
db=${DB:-bench_rows}
psql=(psql -h 127.0.0.1 -U postgres -X -q -At)
work=$(mktemp -d /tmp/rows-per-run.XXXXXX)
trees=()
cleanup() {
  for t in "${trees[@]}"; do git worktree remove --force "$t" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

"${psql[@]}" -d postgres -c "CREATE DATABASE $db" 2>/dev/null || true
"${psql[@]}" -d postgres -c "ALTER DATABASE $db SET track_functions = 'pl'"

# counts prints "kind name value" lines for the wfbench schema's tables and functions.
counts() {
  sleep 1 # a backend reports its statistics when it exits; wfbench's have just exited
  "${psql[@]}" -F ' ' -d "$db" -c "
    SELECT 'ins', relname, n_tup_ins FROM pg_stat_user_tables WHERE schemaname = 'wfbench'
    UNION ALL SELECT 'upd', relname, n_tup_upd FROM pg_stat_user_tables WHERE schemaname = 'wfbench'
    UNION ALL SELECT 'hot', relname, n_tup_hot_upd FROM pg_stat_user_tables WHERE schemaname = 'wfbench'
    UNION ALL SELECT 'del', relname, n_tup_del FROM pg_stat_user_tables WHERE schemaname = 'wfbench'
    UNION ALL SELECT 'call', funcname, calls FROM pg_stat_user_functions WHERE schemaname = 'wfbench'"
}

for c in "$@"; do
  commit=$(git rev-parse --verify "$c^{commit}")
  tree="$work/$commit"
  git worktree add --quiet --detach "$tree" "$commit"
  trees+=("$tree")
  (cd "$tree" && GOWORK=off go build -o "$work/wfbench-$commit" ./cmd/wfbench)
  for n in "$n1" "$n2"; do
    # shellcheck disable=SC2086
    "$work/wfbench-$commit" $args -n="$n" -db="$db" -testdata="$tree/testdata" 2>/dev/null | grep '^RESULT' >"$work/result-$n"
    counts >"$work/counts-$n"
  done
  echo "== $(git log -1 --format='%h %s' "$commit" | cut -c1-90)"
  grep -o 'xact_per_wf=[0-9.]*' "$work/result-$n2" | sed 's/^/statements and batches per run: /'
  awk -v d=$((n2 - n1)) '
    FNR == NR { a[$1 " " $2] = $3; next }
    { k = $1 " " $2; v = ($3 - a[k]) / d; if (v >= 0.005) { per[$2] = per[$2] sprintf(" %s=%.2f", $1, v); if ($1 != "hot" && $1 != "call") rows += v; if ($1 == "call") calls += v } }
    END { for (n in per) printf "  %-22s%s\n", n, per[n]; printf "  rows written per run (ins+upd+del): %.2f; PL/pgSQL calls per run: %.2f\n", rows, calls }
  ' "$work/counts-$n1" "$work/counts-$n2" | sort
done
