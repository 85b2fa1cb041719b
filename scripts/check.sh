#!/usr/bin/env bash
# The README's test command and what CI runs: installs what is needed, then runs every
# stage below, or only the ones named, and ends with a table of each stage's time
# against its share of CI's 40-minute budget (2,400 s, the wave's end).
#
# usage: scripts/check.sh [STAGE...]
#   release  the release build (g++) and its whole test suite (ctest)
#   asan     the suite under AddressSanitizer + UBSan (clang 14)
#   tsan     the suite under ThreadSanitizer (clang 14), its build with clang's
#            thread-safety analysis (-Wthread-safety) as errors over all the code
#   fuzz     every libFuzzer target for a bounded time from its seed corpus (scripts/fuzz.sh)
#   mingw    the Windows build (MinGW-w64), its tests under Wine (docs/windows.md)
#   python   `pip install` of the Python module from a clean clone, and its wheel
#   vscode   the VS Code extension against the release binary, unit tests and its workbench
#            suite in a real VS Code (editors/vscode/scripts/ci.sh; code-server, installed
#            the first time on a machine, is fetched in the background from the start)
#   clang    not in CI (named only): every product file and public header checked on its
#            own, without unity batches, by clang's analysis (scripts/clang_analysis.py)
# With no stage named, all of them but clang, as CI runs them.
#
# Each stage is a build, then its tests. The tests mostly wait (on processes, sockets,
# real-time simulated builds: about a third of a core), so the next stage's build runs
# beside them at the lowest priority, its output in build-logs/STAGE.log; the tests
# keep the processors whenever they want them. The builds that do not fill the machine
# (the fuzz sources, the Windows build, the Python package) run one after the other
# beside the one suite before them.
set -euo pipefail
cd "$(dirname "$0")/.."

ci_stages=(release asan tsan fuzz mingw python vscode)
all_stages=("${ci_stages[@]}" clang)
# Each part's share of the budget, in seconds, on a 2-core machine (a build beside the
# previous stage's tests counts from its start to its end): a part past its share is
# marked in the table, so that a suite that grows is seen before CI's limit is.
declare -A share=([setup.deps]=120 [release.build]=420 [release.test]=400 [asan.build]=400 [asan.test]=480
  [tsan.build]=480 [tsan.test]=400 [fuzz.build]=240 [fuzz.test]=120 [mingw.build]=240 [mingw.test]=120
  [python.build]=190 [vscode.test]=150 [clang.build]=360)
budget=2400

stages=("$@")
((${#stages[@]})) || stages=("${ci_stages[@]}")
for stage in "${stages[@]}"; do
  [[ " ${all_stages[*]} " == *" $stage "* ]] || {
    echo "check: unknown stage \"$stage\"; use any of: ${all_stages[*]}" >&2
    exit 2
  }
done

jobs=$(nproc)
logs=build-logs
mkdir -p "$logs"
declare -a rows=()
running=""  # the part in the foreground, for the table if it fails

print_table() {
  local status=$? row name secs mark
  [ -n "$running" ] && rows+=("$running $((SECONDS - part_start)) failed")
  echo >&2
  echo "=== check: times (share: the part's share of CI's ${budget} s budget; builds overlap the tests before them)" >&2
  printf '%-14s %7s %7s  %s\n' part seconds share "" >&2
  for row in "${rows[@]}"; do
    read -r name secs mark <<<"$row"
    [ "$mark" = ok ] && ((secs > ${share[$name]:-0})) && mark="OVER ITS SHARE"
    [ "$mark" = ok ] && mark=""
    printf '%-14s %7d %7d  %s\n' "$name" "$secs" "${share[$name]:-0}" "$mark" >&2
  done
  printf '%-14s %7d %7d  %s\n' "total (wall)" "$SECONDS" "$budget" "$( ((SECONDS > budget)) && echo "OVER BUDGET")" >&2
  exit "$status"
}
trap print_table EXIT

# Runs part $1 ("asan.test": the function test_asan) in the foreground.
run_part() {
  running=$1
  part_start=$SECONDS
  echo "=== $1" >&2
  "${1#*.}_${1%%.*}"
  rows+=("$1 $((SECONDS - part_start)) ok")
  running=""
}

# Background builds: each stage's build in $logs/STAGE.log; when it ends, its result and
# its length go to $logs/STAGE.built ("ok SECONDS" or "failed SECONDS").
# Starts the builds of the stages named, one after the other, at the lowest priority.
start_background_builds() {
  local stage
  for stage; do
    rm -f "$logs/$stage.built"
    echo "=== $stage.build (in the background: $logs/$stage.log)" >&2
  done
  (
    renice -n 19 -p "$BASHPID" >/dev/null  # the builds it starts inherit it
    for stage; do
      local start=$SECONDS mark=ok
      "build_$stage" >"$logs/$stage.log" 2>&1 || mark=failed
      echo "$mark $((SECONDS - start))" >"$logs/$stage.built"
      [ "$mark" = ok ] || exit 1
    done
  ) &
  for stage; do builder[$stage]=$!; done
}
declare -A builder=()  # stage -> the background process building it

# Waits for stage $1's background build; on failure shows the end of its log.
wait_for_build() {
  local stage=$1 mark secs
  until [ -e "$logs/$stage.built" ] || ! kill -0 "${builder[$stage]}" 2>/dev/null; do
    sleep 1
  done
  read -r mark secs <"$logs/$stage.built" 2>/dev/null || mark="failed" secs=0
  rows+=("$stage.build $secs $mark")
  if [ "$mark" != ok ]; then
    tail -n 60 "$logs/$stage.log" >&2
    echo "check: $stage.build failed (whole log: $logs/$stage.log)" >&2
    exit 1
  fi
}

has() { declare -F "$1" >/dev/null; }

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

deps_setup() { scripts/setup.sh --deps; }

build_release() { build_preset release; }
test_release() { ctest --preset release -j "$jobs"; }

build_asan() { build_preset asan; }
test_asan() { ctest --preset asan -j "$jobs"; }

build_tsan() { build_preset tsan; }
test_tsan() { ctest --preset tsan -j "$jobs"; }

# The product and the public headers on their own; its tests would repeat the release
# ones. Checked, not compiled: clang's analysis is part of its semantic checks, so
# every file is parsed with the preset's own flags and -fsyntax-only.
build_clang() {
  cmake --preset clang >/dev/null
  scripts/clang_analysis.py build-clang "$jobs"
}

# code-server is mostly a download: fetched beside everything else from the start.
workbench_pid=""
start_workbench_install() {
  echo "=== vscode: installing code-server in the background ($logs/workbench-install.log)" >&2
  nice -n 19 editors/vscode/scripts/workbench-install.sh >"$logs/workbench-install.log" 2>&1 &
  workbench_pid=$!
}
test_vscode() {
  # The install must be over (done or failed) before the workbench suite looks for it;
  # after a failure, the suite's own install tries again and says why.
  if [ -n "$workbench_pid" ] && ! wait "$workbench_pid"; then
    tail -n 20 "$logs/workbench-install.log" >&2
  fi
  workbench_pid=""
  [ -x build/trtwatch ] || build_preset release trtwatch
  editors/vscode/scripts/ci.sh build/trtwatch
}

build_fuzz() { scripts/fuzz.sh --build-only; }
test_fuzz() { scripts/fuzz.sh 20; }

build_mingw() { build_preset mingw; }
test_mingw() { ctest --preset mingw; }  # one Wine prefix: its two suites one after the other

build_python() { scripts/check_python_package.sh; }

# The builds that do not fill the machine (the few fuzz sources, the Windows build, the
# Python package) are started together, one after the other, beside one suite.
light_build() { [[ " fuzz mingw python " == *" $1 "* ]]; }

# Stages that come after stage number $1 whose builds start beside its tests: the
# next build, and the light ones after it up to the next heavy build.
builds_after() {
  local i
  for ((i = $1 + 1; i < ${#stages[@]}; i++)); do
    has "build_${stages[i]}" || continue
    echo "${stages[i]}"
    light_build "${stages[i]}" || break
  done
}

run_part setup.deps
[[ " ${stages[*]} " == *" vscode "* ]] && start_workbench_install
for i in "${!stages[@]}"; do
  stage=${stages[i]}
  if [ -n "${builder[$stage]:-}" ]; then
    wait_for_build "$stage"
  elif has "build_$stage"; then
    run_part "$stage.build"
  fi
  has "test_$stage" || continue
  next=()
  for later in $(builds_after "$i"); do
    [ -n "${builder[$later]:-}" ] || next+=("$later")
  done
  ((${#next[@]})) && start_background_builds "${next[@]}"
  run_part "$stage.test"
done
