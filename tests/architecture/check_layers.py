#!/usr/bin/env python3
"""Checks that dependencies in src/ point down only (docs/architecture.md, "Layers").

Each folder of src/ may include from itself and from the folders listed for it; a front
end (cli, service, mcp) never includes another, and core uses the standard library and
the public API alone. Prints every include that breaks a rule, with the file and line,
and exits 1 if there is one.

usage: check_layers.py [SRC_DIR]
"""
import pathlib
import re
import sys

BELOW_RUNNER = {"core", "platform", "protocol", "sinks", "backends", "keys", "cache", "history"}
# folder -> the folders (besides itself) it may include from
ALLOWED = {
    "core": set(),
    "platform": set(),
    "protocol": {"core"},
    "sinks": {"core", "platform", "protocol"},
    "backends": {"core", "platform", "protocol"},
    "history": {"core", "platform", "protocol"},
    # the build key: what a backend's engine depends on, over the backends' options
    "keys": {"core", "platform", "protocol", "backends"},
    # the engine cache: engines kept by build key
    "cache": {"core", "platform", "protocol", "keys"},
    # the attach library (libnvinfer.so.N of trtwatch run): a thin adapter over core
    "attach": {"core", "platform", "protocol"},
    "runner": BELOW_RUNNER,
    "api": BELOW_RUNNER | {"runner"},
    "builds": BELOW_RUNNER | {"runner"},
    # front ends: over the builds layer, never over each other
    "service": BELOW_RUNNER | {"runner", "builds"},
    "mcp": BELOW_RUNNER | {"runner", "builds"},
    # the composition root, the one place that sees both service and mcp
    "app": BELOW_RUNNER | {"runner", "builds", "service", "mcp"},
    "cli": BELOW_RUNNER | {"runner", "builds", "app"},
}
QUOTED = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
ANGLED = re.compile(r"^\s*#\s*include\s+<([^>]+)>")


def std_only(header):
    """The standard library's headers have neither a folder nor an extension."""
    return header.startswith("trtwatch/") or ("/" not in header and "." not in header)


def violations(src):
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        folder = path.relative_to(src).parts[0]
        if folder not in ALLOWED:
            yield f"{path}: folder src/{folder} has no rule in tests/architecture/check_layers.py; add one"
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            quoted = QUOTED.match(line)
            if quoted and quoted.group(1) != folder and quoted.group(1) not in ALLOWED[folder]:
                yield f"{path}:{number}: src/{folder} must not include {quoted.group(1)}/ ({line.strip()})"
            angled = ANGLED.match(line)
            if folder == "core" and angled and not std_only(angled.group(1)):
                yield f"{path}:{number}: core uses the standard library alone ({line.strip()})"


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2] / "src")
    found = list(violations(src))
    for v in found:
        print(v)
    print(f"layers: {len(found)} include(s) against the layering in {src}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
