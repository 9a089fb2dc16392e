#!/usr/bin/env bash
# Runs `wfhost test` for each MODULE:DIR pair given, JOBS at a time (default 4), and fails if
# any fails. The harness spends most of its time waiting for runs to settle in real time, so
# the pairs run side by side: in sequence they took about eight minutes on two cores.
# Each pair gets its own data dir (its own compile cache) and its own log, printed whole at
# the end, in the order given.
set -uo pipefail
bin=${WFHOST_BIN:-bin/wfhost}
jobs=${JOBS:-4}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
for pair in "$@"; do
  i=$((i + 1))
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  module=${pair%%:*} dir=${pair#*:}
  ( "$bin" test --data-dir "$out/data-$i" --module "$module" "$dir" >"$out/$i.log" 2>&1; echo $? >"$out/$i.rc" ) &
done
wait
failed=0 i=0
for pair in "$@"; do
  i=$((i + 1))
  echo "== ${pair%%:*} ${pair#*:}"
  cat "$out/$i.log"
  rc=$(cat "$out/$i.rc" 2>/dev/null || echo 1)
  [ "$rc" = 0 ] || { echo "-- exit $rc"; failed=1; }
done
exit $failed
