#!/usr/bin/env bash
# Runs wfhost (cmd/wfbench) and DBOS Go (../shared/peers/dbos) alternately on the same machine
# and Postgres, ROUNDS times per workload, and prints every RESULT line and then the medians.
# Usage: bench/peers.sh [ROUNDS] (default 3). Needs Postgres on 127.0.0.1:5432 (user postgres,
# trust auth) and ../shared/peers beside the repository. LANGS (default "go rust
# assemblyscript") are the guest languages wfhost runs each workload in.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
langs=${LANGS:-go rust assemblyscript}
peers=${PEERS:-../shared/peers}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

GOWORK=off go build -o /tmp/wfbench ./cmd/wfbench
createdb -h 127.0.0.1 -U postgres bench_dbos 2>/dev/null || true
(cd "$peers/dbos" && GOWORK=off go build -o /tmp/dbosbench .)

workloads=(
  "-mode=direct -steps=10 -n=1000 -c=32"
  "-mode=direct -steps=1 -n=2000 -c=32"
  "-mode=latency -steps=1 -n=300"
  "-mode=latency -steps=10 -n=200"
)
for ((r = 1; r <= rounds; r++)); do
  for w in "${workloads[@]}"; do
    for lang in $langs; do
      # shellcheck disable=SC2086
      /tmp/wfbench $w -lang="$lang" 2>/dev/null | grep '^RESULT' | tee -a "$out"
    done
    # shellcheck disable=SC2086
    /tmp/dbosbench $w 2>/dev/null | grep '^RESULT' | tee -a "$out"
  done
done

echo
echo "medians of $rounds rounds:"
# Group by peer, mode and steps; print the median of each figure.
awk '
function field(name,   i, kv) { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] } return "" }
{ lang = field("lang"); key = field("peer") (lang != "" ? "/" lang : "") " " field("mode") " steps=" field("steps")
  for (f = 1; f <= 5; f++) { name = (f == 1 ? "wf_per_s" : f == 2 ? "steps_per_s" : f == 3 ? "p50_ms" : f == 4 ? "pg_cpu" : "harness_cpu")
    v = field(name); sub(/s$/, "", v); if (v != "") vals[key, name] = vals[key, name] " " v }
  keys[key] = 1 }
function median(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t } return n ? a[int((n + 1) / 2)] : "-" }
END { for (k in keys) printf "%-40s wf/s=%-8s steps/s=%-8s p50_ms=%-8s pg_cpu_s=%-6s harness_cpu_s=%s\n", k, median(vals[k, "wf_per_s"]), median(vals[k, "steps_per_s"]), median(vals[k, "p50_ms"]), median(vals[k, "pg_cpu"]), median(vals[k, "harness_cpu"]) }
' "$out" | sort
