#!/usr/bin/env python3
"""Checks that dependencies in src/ point down only (docs/architecture.md, "Layers").

Each folder of src/ may include from itself and from the folders listed for it; a front
end (cli, service, mcp) never includes another, and core uses the standard library and
the public API alone. No two file pairs (a header and its .cc are one unit) include
each other, directly or around a longer loop: a tie makes neither understandable, nor
testable, alone. Prints every include that breaks a rule, with the file and line, and
every such loop with the includes that close it, and exits 1 if there is one.

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
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+\.h)"')


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


def include_graph(src):
    """unit -> {included unit: (file, line number)}: a unit is a file pair ("builds/build_manager")."""
    graph = {}
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        unit = str(path.relative_to(src).with_suffix(""))
        edges = graph.setdefault(unit, {})
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            included = INCLUDE.match(line)
            if not included or not (src / included.group(1)).is_file():
                continue
            target = str(pathlib.PurePosixPath(included.group(1)).with_suffix(""))
            if target != unit:
                edges.setdefault(target, (path.relative_to(src), number))
    return graph


def tangles(graph):
    """The strongly connected sets of units with more than one member (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(unit):
        index[unit] = low[unit] = len(index)
        stack.append(unit)
        on_stack.add(unit)
        for target in graph.get(unit, {}):
            if target not in index:
                visit(target)
                low[unit] = min(low[unit], low[target])
            elif target in on_stack:
                low[unit] = min(low[unit], index[target])
        if low[unit] == index[unit]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == unit:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    sys.setrecursionlimit(10000)
    for unit in sorted(graph):
        if unit not in index:
            visit(unit)
    return found


def cycles(src):
    graph = include_graph(src)
    for members in tangles(graph):
        inside = set(members)
        ties = [f"{where[0]}:{where[1]} includes {target}.h"
                for unit in members for target, where in sorted(graph[unit].items()) if target in inside]
        yield f"include cycle between {', '.join(members)}: " + "; ".join(ties)


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2] / "src")
    found = list(violations(src)) + list(cycles(src))
    for v in found:
        print(v)
    print(f"layers: {len(found)} include(s) against the layering or in a cycle in {src}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
