#!/usr/bin/env bash
# The VS Code extension's checks, run by scripts/check.sh after the release tests:
#   1. tsc --strict against the real VS Code API types (@types/vscode);
#   2. unit tests of the pure logic (parsing, the event -> view mapping on streams
#      recorded here from the real CLI, settings -> arguments): no vscode involved;
#   3. `vsce package`: editors/vscode/trtwatch-vscode.vsix;
#   4. that .vsix installed in a real VS Code (code-server) and the workbench suite run in
#      its extension host against the real binary and `trtwatch serve` (workbench-test.sh).
# Usage: editors/vscode/scripts/ci.sh path/to/trtwatch
# Wall time on 2 busy shared cores: compile 25-40 s, recordings ~10 s, unit tests ~2 s,
# vsce ~6 s, the workbench ~80 s (plus ~145 s or more to install code-server the first
# time on a machine; editors/vscode/.workbench keeps it).
set -euo pipefail
bin=$(realpath "${1:?usage: editors/vscode/scripts/ci.sh path/to/trtwatch}")
[ -x "$bin" ] || { echo "vscode ci: $bin is not an executable trtwatch; build it first (cmake --build --preset release)" >&2; exit 1; }
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "vscode ci: node is missing (scripts/setup.sh installs it)" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "vscode ci: node $(node --version) is too old; @vscode/vsce needs node 20 or newer" >&2; exit 1; }
[ -x node_modules/.bin/tsc ] && [ -d node_modules/playwright-core ] || npm ci --no-audit --no-fund --silent

start=$SECONDS
rm -rf out
node_modules/.bin/tsc -p . --strict
echo "vscode ci: compiled ($((SECONDS - start)) s)"

recordings=$(mktemp -d)
trap 'rm -rf "$recordings"' EXIT
TRTWATCH_BIN=$bin scripts/record_streams.sh "$recordings"
echo "vscode ci: recorded the streams ($((SECONDS - start)) s)"
TRTWATCH_RECORDINGS=$recordings node --test --test-reporter=spec out/test/build_view.test.js out/test/parsing.test.js \
  out/test/phase_tree_contract.test.js
echo "vscode ci: unit tests passed ($((SECONDS - start)) s)"

rm -f trtwatch-vscode.vsix
# The compile above is what goes into the package (no vscode:prepublish step).
npm run --silent vsix
/usr/bin/python3 - <<'PY'
import zipfile
names = set(zipfile.ZipFile("trtwatch-vscode.vsix").namelist())
need = {"extension/package.json", "extension/out/src/extension.js", "extension/out/src/controller.js",
        "extension/media/icon.png", "extension/readme.md", "extension/changelog.md"}
missing = need - names
assert not missing, f"the .vsix lacks {sorted(missing)}"
leaked = [n for n in names if n.startswith(("extension/out/test/", "extension/out/workbench/", "extension/workbench/", "extension/.workbench/"))]
assert not leaked, f"tests leaked into the .vsix: {leaked[:5]}"
print(f"vscode ci: trtwatch-vscode.vsix holds {len(names)} files")
PY
echo "vscode ci: packaged ($((SECONDS - start)) s)"
scripts/workbench-test.sh "$bin" trtwatch-vscode.vsix
echo "vscode ci: done ($((SECONDS - start)) s)"
