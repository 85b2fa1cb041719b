#!/usr/bin/env bash
# The README's test command and what CI runs: installs what is needed, then runs every
# stage below, or only the ones named, and ends with a table of each stage's time
# against its share of CI's 35-minute budget.
#
# usage: scripts/check.sh [STAGE...]
#   release  the release build and its whole test suite (ctest)
#   clang    clang 14's thread-safety analysis (-Wthread-safety -Werror) over the product,
#            and the public headers compiled on their own
#   asan     the suite under AddressSanitizer + UBSan
#   tsan     the suite under ThreadSanitizer
#   vscode   the VS Code extension against the release binary (editors/vscode/scripts/ci.sh)
#   fuzz     every libFuzzer target for a bounded time from its seed corpus (scripts/fuzz.sh)
#   mingw    the Windows build (MinGW-w64), its tests under Wine (docs/windows.md)
#   python   `pip install` of the Python module from a clean clone, and its wheel
# With no stage named, all of them, as CI runs them. A stage that needs the release
# binary (vscode) builds it first when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

all_stages=(release clang asan tsan vscode fuzz mingw python)
# Each stage's share of the budget, in seconds, on a 2-core machine: a stage past its
# share is marked in the table, so that a suite that grows is seen before CI's limit is.
declare -A share=([setup]=240 [release]=540 [clang]=120 [asan]=420 [tsan]=480 [vscode]=90 [fuzz]=240
  [mingw]=300 [python]=120)

stages=("$@")
((${#stages[@]})) || stages=("${all_stages[@]}")
for stage in "${stages[@]}"; do
  [[ " ${all_stages[*]} " == *" $stage "* ]] || {
    echo "check: unknown stage \"$stage\"; use any of: ${all_stages[*]}" >&2
    exit 2
  }
done

jobs=$(nproc)
declare -a done_rows=()
current=""

print_table() {
  local status=$? total=0 row name secs mark
  [ -n "$current" ] && done_rows+=("$current $((SECONDS - stage_start)) failed")
  echo >&2
  echo "=== check: stage times (share = this stage's part of CI's 35-minute budget)" >&2
  printf '%-8s %7s %7s  %s\n' stage seconds share "" >&2
  for row in "${done_rows[@]}"; do
    read -r name secs mark <<<"$row"
    total=$((total + secs))
    [ "$mark" = ok ] && ((secs > ${share[$name]:-0})) && mark="OVER ITS SHARE"
    [ "$mark" = ok ] && mark=""
    printf '%-8s %7d %7d  %s\n' "$name" "$secs" "${share[$name]:-0}" "$mark" >&2
  done
  printf '%-8s %7d %7d\n' total "$total" 2100 >&2
  exit "$status"
}
trap print_table EXIT

# Runs stage $1 (the function stage_$1) and records its time.
run_stage() {
  current=$1
  stage_start=$SECONDS
  echo "=== $1" >&2
  "stage_$1"
  done_rows+=("$1 $((SECONDS - stage_start)) ok")
  current=""
}

# Configures preset $1 and builds the given targets (all when none are given).
build_preset() {
  local preset=$1
  shift
  cmake --preset "$preset" >/dev/null
  if (($#)); then
    cmake --build --preset "$preset" -j "$jobs" --target "$@"
  else
    cmake --build --preset "$preset" -j "$jobs"
  fi
}

stage_setup() { scripts/setup.sh --deps; }

stage_release() {
  build_preset release
  ctest --preset release -j "$jobs"
}

stage_clang() {
  # The product and the public headers on their own; its tests would repeat the
  # release ones. The preset compiles without optimisation or debug information:
  # what it is for is clang's analysis, which needs neither.
  build_preset clang trtwatch trtwatch_header_check trtwatch_header_check_trt9 trtwatch_header_check_trt10
}

stage_asan() {
  build_preset asan
  ctest --preset asan -j "$jobs"
}

stage_tsan() {
  build_preset tsan
  ctest --preset tsan -j "$jobs"
}

stage_vscode() {
  [ -x build/trtwatch ] || build_preset release trtwatch
  editors/vscode/scripts/ci.sh build/trtwatch
}

stage_fuzz() { scripts/fuzz.sh 20; }

stage_mingw() {
  build_preset mingw
  ctest --preset mingw
}

stage_python() { scripts/check_python_package.sh; }

run_stage setup
for stage in "${stages[@]}"; do
  run_stage "$stage"
done
