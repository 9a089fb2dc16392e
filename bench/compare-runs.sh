#!/usr/bin/env bash
# Compares two commits' throughput on this machine: builds each commit's cmd/wfbench in a
# worktree of its own (so each runs with its own testdata/ fixtures, -testdata), then runs the
# two binaries alternately PAIRS times (A then B, then B then A, so a drift of the machine
# falls on both) and prints each pair's wf/s and CPU and the median ratio B/A.
#
# Usage: bench/compare-runs.sh BASE NEW [PAIRS]   (PAIRS defaults to 5)
# Environment:
#   ARGS  wfbench arguments (default: the 1-step AssemblyScript run of BENCHMARKS.md,
#         "-mode=direct -lang=assemblyscript -steps=1 -n=3000 -c=32")
#   DB    Postgres database the runs use, created if missing (default bench_compare; wfbench
#         drops and recreates its schema "wfbench" there on every run)
#   KEEP  set to keep the worktrees and binaries (printed) instead of removing them
# Needs Postgres on 127.0.0.1:5432 (user postgres, trust), as wfbench does. Figures are only
# worth comparing on an otherwise idle machine.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,16p' "$0" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
base=$(git rev-parse --verify "$1^{commit}")
new=$(git rev-parse --verify "$2^{commit}")
pairs=${3:-5}
args=${ARGS:--mode=direct -lang=assemblyscript -steps=1 -n=3000 -c=32}
db=${DB:-bench_compare}
work=$(mktemp -d /tmp/compare-runs.XXXXXX)
cleanup() {
  if [ -n "${KEEP:-}" ]; then
    echo "kept: $work" >&2
    return
  fi
  git worktree remove --force "$work/a" 2>/dev/null || true
  git worktree remove --force "$work/b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for side in a b; do
  commit=$base
  [ "$side" = b ] && commit=$new
  git worktree add --quiet --detach "$work/$side" "$commit"
  (cd "$work/$side" && GOWORK=off go build -o "$work/wfbench-$side" ./cmd/wfbench)
done
echo "A = $(git log -1 --format='%h %s' "$base" | cut -c1-80)"
echo "B = $(git log -1 --format='%h %s' "$new" | cut -c1-80)"
echo "wfbench $args -db=$db"

# run SIDE prints "wf_per_s pg_ms_per_step daemon_cpu_ms_per_wf" of one run of that side's binary.
run() {
  local line
  # shellcheck disable=SC2086
  line=$("$work/wfbench-$1" $args -db="$db" -testdata="$work/$1/testdata" 2>/dev/null | grep '^RESULT') || {
    echo "wfbench $1 failed" >&2
    exit 1
  }
  awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
         print v["wf_per_s"], v["pg_ms_per_step"], v["daemon_cpu_ms_per_wf"] }' <<<"$line"
}

ratios=()
for ((p = 1; p <= pairs; p++)); do
  if ((p % 2)); then
    read -r aw ap ad < <(run a)
    read -r bw bp bd < <(run b)
  else
    read -r bw bp bd < <(run b)
    read -r aw ap ad < <(run a)
  fi
  ratio=$(awk -v a="$aw" -v b="$bw" 'BEGIN { printf "%.3f", b / a }')
  cpu=$(awk -v a="$ap" -v b="$bp" 'BEGIN { printf "%.3f", b / a }')
  ratios+=("$ratio $cpu")
  printf 'pair %d: A %s wf/s, pg %s ms/step, daemon %s ms/wf | B %s wf/s, pg %s ms/step, daemon %s ms/wf | wf/s B/A %s, pg CPU B/A %s\n' \
    "$p" "$aw" "$ap" "$ad" "$bw" "$bp" "$bd" "$ratio" "$cpu"
done
printf '%s\n' "${ratios[@]}" | sort -n -k1,1 | awk '{ w[NR] = $1 } END { printf "median wf/s ratio B/A: %s", w[int((NR + 1) / 2)] }'
printf '%s\n' "${ratios[@]}" | sort -n -k2,2 | awk '{ c[NR] = $2 } END { printf ", median Postgres CPU per step B/A: %s (%d pairs)\n", c[int((NR + 1) / 2)], NR }'
