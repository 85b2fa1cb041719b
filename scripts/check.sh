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
# keep the processors whenever they want them. The Python check is a compilation above
# all, so it runs as a build, beside the Windows tests.
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

# Starts stage $1's build in the background at the lowest priority.
bg_pid=""
bg_name=""
start_background_build() {
  bg_name=$1.build
  bg_start=$SECONDS
  echo "=== $bg_name (in the background: $logs/$1.log)" >&2
  (
    renice -n 19 -p "$BASHPID" >/dev/null  # the builds it starts inherit it
    "build_$1"
  ) >"$logs/$1.log" 2>&1 &
  bg_pid=$!
}

# Waits for the background build; on failure shows the end of its log.
finish_background_build() {
  [ -n "$bg_pid" ] || return 0
  local pid=$bg_pid name=$bg_name
  bg_pid=""
  if ! wait "$pid"; then
    rows+=("$name $((SECONDS - bg_start)) failed")
    tail -n 60 "$logs/${name%.build}.log" >&2
    echo "check: $name failed (whole log: $logs/${name%.build}.log)" >&2
    exit 1
  fi
  rows+=("$name $((SECONDS - bg_start)) ok")
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

run_part setup.deps
[[ " ${stages[*]} " == *" vscode "* ]] && start_workbench_install
# Stage i's tests run while stage i+1 builds.
previous=""
for stage in "${stages[@]}"; do
  if has "build_$stage"; then
    if [ -n "$previous" ] && has "test_$previous"; then
      start_background_build "$stage"
      run_part "$previous.test"
      finish_background_build
    else
      run_part "$stage.build"
    fi
  elif [ -n "$previous" ] && has "test_$previous"; then
    run_part "$previous.test"
  fi
  previous=$stage
done
if has "test_$previous"; then run_part "$previous.test"; fi
