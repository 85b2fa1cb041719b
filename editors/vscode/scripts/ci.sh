#!/usr/bin/env bash
# The VS Code extension's checks, run by scripts/check.sh after the release tests:
#   1. tsc --strict against the real VS Code API types (@types/vscode);
#   2. unit tests of the event -> view mapping on streams recorded here from the real CLI;
#   3. integration tests of the controller, activate() and tasks: the real binary (and
#      `trtwatch serve`) driven through a recording test double of the vscode API;
#   4. `vsce package`: editors/vscode/trtwatch-vscode.vsix.
# Usage: editors/vscode/scripts/ci.sh path/to/trtwatch
# 50-80 s wall on 2 busy shared cores (~15 s of CPU): compile 25-40 s, recordings ~6 s,
# tests ~12-24 s (builds in real time), vsce ~6 s.
set -euo pipefail
bin=$(realpath "${1:?usage: editors/vscode/scripts/ci.sh path/to/trtwatch}")
[ -x "$bin" ] || { echo "vscode ci: $bin is not an executable trtwatch; build it first (cmake --build --preset release)" >&2; exit 1; }
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "vscode ci: node is missing (scripts/setup.sh installs it)" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "vscode ci: node $(node --version) is too old; @vscode/vsce needs node 20 or newer" >&2; exit 1; }
[ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund --silent

start=$SECONDS
rm -rf out
node_modules/.bin/tsc -p . --strict
echo "vscode ci: compiled ($((SECONDS - start)) s)"

recordings=$(mktemp -d)
trap 'rm -rf "$recordings"' EXIT
TRTWATCH_BIN=$bin scripts/record_streams.sh "$recordings"
echo "vscode ci: recorded the streams ($((SECONDS - start)) s)"
TRTWATCH_RECORDINGS=$recordings node --test --test-reporter=spec out/test/build_view.test.js out/test/parsing.test.js out/test/controller.test.js
TRTWATCH_BIN=$bin node --test --test-reporter=spec out/test/controller.integration.test.js out/test/extension.integration.test.js
echo "vscode ci: tests passed ($((SECONDS - start)) s)"

rm -f trtwatch-vscode.vsix
# The compile above is what goes into the package (no vscode:prepublish step).
node_modules/.bin/vsce package --no-dependencies --allow-missing-repository --skip-license --out trtwatch-vscode.vsix
/usr/bin/python3 - <<'PY'
import zipfile
names = set(zipfile.ZipFile("trtwatch-vscode.vsix").namelist())
need = {"extension/package.json", "extension/out/src/extension.js", "extension/out/src/controller.js"}
missing = need - names
assert not missing, f"the .vsix lacks {sorted(missing)}"
assert not any(n.startswith("extension/out/test/") for n in names), "tests leaked into the .vsix"
print(f"vscode ci: trtwatch-vscode.vsix holds {len(names)} files")
PY
echo "vscode ci: done ($((SECONDS - start)) s)"
