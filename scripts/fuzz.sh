#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: clang 14, ASan+UBSan) and runs each for a
# bounded time, starting from its checked-in seed corpus (fuzz/corpus/<target>; new
# inputs go to a scratch copy, not into the repository), one target per core at a
# time. Fails if any target finds a crash, a leak, a timeout or an out-of-memory; the
# input is kept in build-fuzz/artifacts.
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 20)] [TARGET...]
#        scripts/fuzz.sh --build-only
#   targets: duration event_json build_request profile build_options http_request json_rpc onnx_external_data timing_cache (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(duration event_json build_request profile build_options http_request json_rpc onnx_external_data timing_cache); fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
[ "$seconds" = --build-only ] && exit 0

artifacts=build-fuzz/artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Runs one target; its report goes to $scratch/$target.report, a failure marks
# $scratch/$target.failed.
fuzz_one() {
  local target=$1 corpus="$scratch/$1" log="$scratch/$1.log" dict=() execs
  mkdir -p "$corpus"
  cp -r "fuzz/corpus/$target/." "$corpus/"
  case $target in
    event_json | build_request | profile | json_rpc | timing_cache) dict=(-dict=fuzz/json.dict) ;;
    http_request) dict=(-dict=fuzz/http.dict) ;;
    build_options) dict=(-dict=fuzz/build_options.dict) ;;
  esac
  if build-fuzz/fuzz/"${target}_fuzz" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/${target}-" "$corpus" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "=== fuzz $target: ${seconds}s ok: ${execs:-?} executions, corpus $(ls "$corpus" | wc -l) inputs" >"$scratch/$target.report"
  else
    { echo "=== fuzz $target: ${seconds}s FAILED"; tail -n 40 "$log"; } >"$scratch/$target.report"
    touch "$scratch/$target.failed"
  fi
}

# One target per core at a time: each is one process, and each still gets its whole time.
parallel=$(nproc)
for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  fuzz_one "$target" &
done
wait
failed=()
for target in "${targets[@]}"; do
  cat "$scratch/$target.report" >&2
  [ -e "$scratch/$target.failed" ] && failed+=("$target")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]} (inputs in $artifacts)" >&2
  exit 1
fi
