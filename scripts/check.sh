#!/usr/bin/env bash
# Installs what is needed, then builds and runs every test: the release build, then
# the whole suite again under ASan+UBSan and under TSan, and clang's thread-safety
# analysis; after the release tests, the VS Code extension's checks (editors/vscode);
# then the fuzz targets for a bounded time, and the Windows build (MinGW-w64) with its
# tests under Wine. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps

jobs=$(nproc)
for preset in release clang asan tsan; do
  echo "=== ${preset}: build" >&2
  cmake --preset "$preset" >/dev/null
  if [ "$preset" = clang ]; then
    # clang is here for -Wthread-safety -Werror over the product and for the public
    # headers compiled on their own; its tests would repeat the release ones.
    cmake --build --preset clang -j "$jobs" --target trtwatch trtwatch_header_check \
      trtwatch_header_check_trt9 trtwatch_header_check_trt10
  else
    cmake --build --preset "$preset" -j "$jobs"
  fi
done
for preset in release asan tsan; do
  echo "=== ${preset}: test" >&2
  ctest --preset "$preset" -j "$jobs"
  if [ "$preset" = release ]; then
    # The VS Code extension against the release binary: strict compile, unit and
    # integration tests, the .vsix (50-80 s; editors/vscode/scripts/ci.sh).
    echo "=== release: VS Code extension" >&2
    editors/vscode/scripts/ci.sh build/trtwatch
  fi
done
# Every libFuzzer target for a bounded time from its seed corpus (fuzz/).
echo "=== fuzz" >&2
scripts/fuzz.sh 20
# Windows: cross-built with MinGW-w64, tested under Wine (docs/windows.md).
echo "=== mingw: build, and test under Wine" >&2
cmake --preset mingw >/dev/null
cmake --build --preset mingw -j "$jobs"
ctest --preset mingw
# The Python module installed from a clean clone with pip, and its wheel.
echo "=== python package" >&2
scripts/check_python_package.sh
