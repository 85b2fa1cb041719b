#!/usr/bin/env python3
"""`trtwatch run`'s costs (docs/attach.md, "Performance"), both sides in one run:

- `trtwatch run -- true` against `true` (whole processes; goal: at most 20 ms more);
- a simulated build on the ABI test double bare and under `trtwatch run` (goal: at most
  1 % longer), the program's own wall time as it reports it.

usage: attach_run_bench.py BUILD_DIR [--runs N] [--steps N]
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import time


def timed(argv, env, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir", type=pathlib.Path)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--steps", type=int, default=200, help="the simulated build's steps, 5 ms each")
    args = parser.parse_args()
    args.build_dir = args.build_dir.resolve()
    trtwatch = str(args.build_dir / "trtwatch")
    # The double in front of whatever library path trtwatch itself needs (a machine the
    # binaries were carried to keeps theirs there).
    library_path = [str(args.build_dir / "fake_tensorrt_abi" / "10"), os.environ.get("LD_LIBRARY_PATH", "")]
    env = dict(os.environ, TRTWATCH_HISTORY="off", LD_LIBRARY_PATH=":".join(filter(None, library_path)))
    true_bare = timed(["true"], env, args.runs)
    true_run = timed([trtwatch, "run", "--progress", "quiet", "--", "true"], env, args.runs)
    # trtwatch's own start, to tell it from what `run` adds.
    version = timed([trtwatch, "--version"], env, args.runs)
    extra_ms = (statistics.median(true_run) - statistics.median(true_bare)) * 1000
    print(f"true: bare {statistics.median(true_bare) * 1000:.1f} ms, under run "
          f"{statistics.median(true_run) * 1000:.1f} ms (median of {args.runs}): +{extra_ms:.1f} ms (goal <= 20); "
          f"`trtwatch --version` alone {statistics.median(version) * 1000:.1f} ms")

    program = str(args.build_dir / "attach_tests" / "attach_dlopen_builder10")
    build_env = dict(env, TRTWATCH_FAKE_STEPS=str(args.steps), TRTWATCH_FAKE_STEP_MS="5")
    runs = max(5, args.runs // 3)
    bare, attached = [], []
    for _ in range(runs):  # interleaved, so that drift on a shared machine hits both
        bare += timed([program], build_env, 1)
        attached += timed([trtwatch, "run", "--progress", "quiet", "--", program], build_env, 1)
    ratio = statistics.median(attached) / statistics.median(bare)
    print(f"simulated build: bare {statistics.median(bare):.3f} s, under run {statistics.median(attached):.3f} s "
          f"(median of {runs}): {100 * (ratio - 1):+.2f} % (goal <= 1 %)")


if __name__ == "__main__":
    main()
