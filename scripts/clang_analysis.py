#!/usr/bin/env python3
"""clang 14's thread-safety analysis (-Wthread-safety -Werror) over the product, file by file.

The analysis is part of clang's semantic checks, so each file is only parsed and checked
(-fsyntax-only): no code is generated, nothing is linked. The commands are the clang
preset's own (its compile_commands.json, written by `cmake --preset clang`), so every
flag, define and include path is the build's. What is checked: the product's files (the
top-level targets) and the public headers, each on its own (tests/.../header_check);
the tests, benchmarks and the Python module are left to the other stages.

usage: scripts/clang_analysis.py BUILD_DIR [JOBS]
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys


def output_of(args):
    """The object file a compile command writes (CMake 3.25 writes no "output" key)."""
    return args[args.index("-o") + 1] if "-o" in args else ""


def checked(entry):
    """Whether the entry compiles a product file or a public-header check."""
    output = output_of(shlex.split(entry["command"]))
    return output.startswith("CMakeFiles/") or "header_check" in output


def syntax_only(command):
    """The compile command with its object output replaced by -fsyntax-only."""
    args = shlex.split(command)
    kept = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != "-c":
            kept.append(arg)
    return kept + ["-fsyntax-only"]


def check(entry):
    run = subprocess.run(syntax_only(entry["command"]), cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], run.returncode, run.stdout + run.stderr


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    build_dir = sys.argv[1]
    jobs = int(sys.argv[2]) if len(sys.argv) == 3 else os.cpu_count()
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
        entries = [e for e in json.load(f) if checked(e)]
    if not entries:
        sys.exit(f"clang analysis: no product files in {build_dir}/compile_commands.json; configure the clang preset")
    failed = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for name, code, output in pool.map(check, entries):
            if output:
                print(output, end="", flush=True)
            if code != 0:
                failed.append(os.path.relpath(name))
    if failed:
        print(f"clang analysis: {len(failed)} of {len(entries)} files failed: {' '.join(failed)}", file=sys.stderr)
        return 1
    print(f"clang analysis: {len(entries)} files checked, no finding")
    return 0


if __name__ == "__main__":
    sys.exit(main())
