#!/usr/bin/env bash
# Installs what trtwatch needs on Debian 12 and builds it into build/.
# Usage: scripts/setup.sh            (packages + release build)
#        scripts/setup.sh --deps     (packages only)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build clang-14 libclang-rt-14-dev lld git
  nlohmann-json3-dev libcli11-dev libboost1.74-dev libsqlite3-dev libssl-dev libxxhash-dev libpq-dev postgresql-15
  slurmctld slurmd slurm-client munge
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-pytest python3-jsonschema tmux curl procps
  pkg-config file dpkg-dev
  chromium libkrb5-dev nginx-light
  g++-mingw-w64-x86-64-posix wine64 googletest
  pybind11-dev python3-pybind11 python3-dev python3-setuptools python3-wheel python3-build python3-venv
  python3-nbclient python3-nbformat python3-ipykernel
)
# libpq-dev: the PostgreSQL record store (--store postgresql://…) is built on libpq;
# postgresql-15: its tests start a throwaway server of their own (tests/support/postgres_server.h,
# tests/e2e/pg_server.py), so the cluster the package may start is not needed.
# slurmctld, slurmd, slurm-client, munge: the Slurm executor's tests start a three-node
# cluster of their own on this machine (tests/e2e/slurm_cluster.py, docs/slurm.md).
# MinGW-w64 cross-builds trtwatch.exe, googletest's sources build its tests for
# Windows, and Wine runs them (docs/windows.md).
# nginx-light: browser.proxy runs docs/deploy.md's nginx block with the real nginx
# (tests/browser/proxy.test.mjs; unprivileged, its own configuration and loopback ports).
# libkrb5-dev: the VS Code extension's workbench tests install code-server, whose
# kerberos module builds from source (editors/vscode/scripts/workbench-install.sh).
# Node.js runs the service's real EventSource client test (tests/node); Debian's is
# enough where the machine has none of its own.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "trtwatch setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The service's real-client SSE test uses npm's eventsource (tests/node); skipped without node.
if command -v npm >/dev/null 2>&1 && [ ! -d tests/node/node_modules/eventsource ]; then
  (cd tests/node && npm ci --no-audit --no-fund --silent) || echo "trtwatch setup: npm ci in tests/node failed; the EventSource test will be skipped" >&2
fi
# The VS Code extension's toolchain (typescript, @types/vscode, @vscode/vsce, and
# playwright-core for its workbench tests; pinned in
# editors/vscode/package-lock.json). Its checks (editors/vscode/scripts/ci.sh) need node 20+.
if command -v npm >/dev/null 2>&1 && { [ ! -x editors/vscode/node_modules/.bin/vsce ] || [ ! -d editors/vscode/node_modules/playwright-core ]; }; then
  (cd editors/vscode && npm ci --no-audit --no-fund --silent) || echo "trtwatch setup: npm ci in editors/vscode failed; editors/vscode/scripts/ci.sh will try again" >&2
fi
# The dashboard's browser tests (tests/browser) drive Debian's chromium with npm's
# playwright-core, which never downloads a browser of its own; skipped without node.
if command -v npm >/dev/null 2>&1 && [ ! -d tests/browser/node_modules/playwright-core ]; then
  (cd tests/browser && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent --ignore-scripts) ||
    echo "trtwatch setup: npm ci in tests/browser failed; the browser tests will be skipped" >&2
fi
# `trtwatch mcp`'s tests use the official MCP TypeScript SDK client (tests/mcp, pinned in
# its package-lock.json); skipped without node.
if command -v npm >/dev/null 2>&1 && [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
  (cd tests/mcp && npm ci --no-audit --no-fund --silent) || echo "trtwatch setup: npm ci in tests/mcp failed; the MCP SDK tests will be skipped" >&2
fi
# The OpenAPI document's linter (ctest openapi.lint): Redocly's CLI, pinned in
# tests/openapi/package-lock.json; skipped without node.
if command -v npm >/dev/null 2>&1 && [ ! -d tests/openapi/node_modules/@redocly/cli ]; then
  (cd tests/openapi && npm ci --no-audit --no-fund --silent --ignore-scripts) ||
    echo "trtwatch setup: npm ci in tests/openapi failed; the OpenAPI lint will be skipped" >&2
fi
[ "${1:-}" = "--deps" ] && exit 0

cmake --preset release >/dev/null
cmake --build --preset release
