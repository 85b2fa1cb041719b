#!/usr/bin/env bash
# The extension inside a real VS Code: code-server 4.139.1 (VS Code 1.139) driven by
# Debian's Chromium, the extension installed from its .vsix, and the suite of
# workbench/suite run in the real extension host against the real trtwatch binary and a
# real `trtwatch serve` (how: ../../../shared/reference/vscode-notes.md, workbench/driver.mjs).
#   editors/vscode/scripts/workbench-test.sh path/to/trtwatch [trtwatch-vscode.vsix]
# Without a .vsix it compiles and packages one. Screenshots: build/vscode-screenshots/
# (TRTWATCH_SCREENSHOT_DIR overrides). code-server is installed once into
# editors/vscode/.workbench (TRTWATCH_WORKBENCH_CACHE overrides): ~145 s the first time.
# Bounded: the run stops itself after WORKBENCH_TIMEOUT_S (300) and stops what it started.
set -euo pipefail
bin=$(realpath "${1:?usage: editors/vscode/scripts/workbench-test.sh path/to/trtwatch [vsix]}")
vsix=${2:+$(realpath "$2")}
[ -x "$bin" ] || { echo "workbench: $bin is not an executable trtwatch" >&2; exit 1; }
cd "$(dirname "$0")/.."
repo=$(realpath ../..)
shots=${TRTWATCH_SCREENSHOT_DIR:-$repo/build/vscode-screenshots}
chromium=${TRTWATCH_CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "workbench: $chromium is missing (scripts/setup.sh installs chromium)" >&2; exit 1; }
[ -d node_modules/playwright-core ] && [ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund --silent

start=$SECONDS
read -r nodebin code_server < <(scripts/workbench-install.sh "${TRTWATCH_WORKBENCH_CACHE:-.workbench}")
echo "workbench: code-server ready ($((SECONDS - start)) s)"
if [ -z "$vsix" ]; then
  rm -rf out && node_modules/.bin/tsc -p . --strict
  npm run --silent vsix >/dev/null
  vsix=$PWD/trtwatch-vscode.vsix
fi
rm -rf out/workbench && node_modules/.bin/tsc -p workbench --strict
rm -rf "$shots" && mkdir -p "$shots"
limit=${WORKBENCH_TIMEOUT_S:-300}
# The driver stops itself at the limit; `timeout` is the backstop if it cannot.
WORKBENCH_TIMEOUT_S=$limit timeout --kill-after=10 $((limit + 30)) \
  node workbench/driver.mjs --code-server "$code_server" --node-bin "$nodebin" --vsix "$vsix" --bin "$bin" --screenshots "$shots"
echo "workbench: passed ($((SECONDS - start)) s); screenshots in $shots"
