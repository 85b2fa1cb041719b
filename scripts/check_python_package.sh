#!/usr/bin/env bash
# The Python module as a user installs it: from a clean clone of the committed tree,
# `pip install --no-build-isolation --no-index .` into a venv (Debian packages only),
# a simulated build through the installed module, then a wheel with `python3 -m build`
# (which reuses pip's CMake tree, so the library is compiled once).
set -euo pipefail
cd "$(dirname "$0")/.."
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-local . "$tmp/src"
$python -m venv --system-site-packages "$tmp/venv"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
(cd "$tmp/src" && "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index .)
(cd "$tmp" && "$tmp/venv/bin/python" - <<'PY'
import trtwatch, trtwatch.tensorrt
assert trtwatch.__file__.startswith(__import__("sys").prefix), trtwatch.__file__
r = trtwatch.simulate("small-cnn", speed=50, progress="quiet", handle_signals=False)
assert r.succeeded, r
print("installed trtwatch", trtwatch.__version__, "->", r.status)
PY
)
(cd "$tmp/src" && $python -m build --no-isolation --wheel --outdir "$tmp/dist" >/dev/null)
ls "$tmp"/dist/trtwatch-*.whl >/dev/null
echo "wheel: $(basename "$tmp"/dist/trtwatch-*.whl)"
