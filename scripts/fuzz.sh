#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: clang 14, ASan+UBSan) and runs each for a
# bounded time, starting from its checked-in seed corpus (fuzz/corpus/<target>; new
# inputs go to a scratch copy, not into the repository). Fails if any target finds a
# crash, a leak, a timeout or an out-of-memory; the input is kept in build-fuzz/artifacts.
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 20)] [TARGET...]
#   targets: duration event_json build_request profile build_options http_request json_rpc (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(duration event_json build_request profile build_options http_request json_rpc); fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

artifacts=build-fuzz/artifacts
mkdir -p "$artifacts"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
  corpus="$scratch/$target"
  mkdir -p "$corpus"
  cp -r "fuzz/corpus/$target/." "$corpus/"
  dict=()
  case $target in
    event_json | build_request | profile | json_rpc) dict=(-dict=fuzz/json.dict) ;;
    http_request) dict=(-dict=fuzz/http.dict) ;;
    build_options) dict=(-dict=fuzz/build_options.dict) ;;
  esac
  log="$scratch/$target.log"
  echo "=== fuzz $target: ${seconds}s" >&2
  if build-fuzz/fuzz/"${target}_fuzz" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/${target}-" "$corpus" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "    ok: ${execs:-?} executions, corpus $(ls "$corpus" | wc -l) inputs" >&2
  else
    tail -n 40 "$log" >&2
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]} (inputs in $artifacts)" >&2
  exit 1
fi
