#!/usr/bin/env bash
# Records, from the real CLI, the event streams the unit tests replay
# (test/build_view.test.ts): a small and a large simulated build, a failing one, one
# cancelled by SIGINT (what the extension's Stop sends) and one that times out, and one
# with enough build history for an ETA.
#   TRTWATCH_BIN=build/trtwatch editors/vscode/scripts/record_streams.sh OUT_DIR
# The test run records them afresh each time (scripts/ci.sh), so they follow the protocol.
set -euo pipefail
bin=${TRTWATCH_BIN:?set TRTWATCH_BIN to the trtwatch binary}
out=${1:?usage: record_streams.sh OUT_DIR}
mkdir -p "$out"
# A history of this run's own (not the user's), so that what the streams say is the same everywhere.
export TRTWATCH_HISTORY="$out/history"

record() {  # name, expected exit code, trtwatch build arguments...
  local name=$1 want=$2; shift 2
  set +e; "$bin" build "$@" --progress json > "$out/$name.jsonl" 2> "$out/$name.stderr"; local rc=$?; set -e
  [ "$rc" -eq "$want" ] || { echo "record_streams: $name exited $rc, expected $want" >&2; exit 1; }
}

record small-cnn 0 --simulate small-cnn --seed 1 --speed 4
record large-transformer 0 --simulate large-transformer --seed 1 --speed 1000
record failing 1 --simulate failing --seed 1 --speed 4
record timed-out 124 --simulate large-transformer --seed 1 --speed 4 --timeout 1s

# With history: three earlier builds of the same key (profile and speed; seeds vary the
# durations as real builds vary), then the one recorded, which gets ETA estimates.
for seed in 2 3 4; do
  "$bin" build --simulate small-cnn --seed "$seed" --speed 4 --history "$out/eta-history" --progress quiet
done
record with-history 0 --simulate small-cnn --seed 5 --speed 4 --history "$out/eta-history"

# Cancelled: SIGINT (what the extension's Stop sends) a second into the build.
set +e
"$bin" build --simulate large-transformer --seed 1 --speed 4 --progress json > "$out/cancelled.jsonl" 2> "$out/cancelled.stderr" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"; rc=$?
set -e
[ "$rc" -eq 130 ] || { echo "record_streams: cancelled exited $rc, expected 130" >&2; exit 1; }
