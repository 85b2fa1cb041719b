#!/usr/bin/env python3
"""How good the history's ETA is, measured: N simulated builds of one profile with
different seeds (the profile's "variation" makes their durations differ, as real
builds' do), the first K become the history, and each of the rest is scored at 10, 25,
50 and 75 % of its duration against the time it really still needed.

Reported per checkpoint: the coverage of [p10, p90] (goal 75-90 %) and the median
absolute error of p50 relative to the true remaining time (goal <= 15 % from 25 % on),
next to two baselines computed in the same run from the same builds: step-fraction
extrapolation and a tqdm-like smoothed rate (bench/eta_score.cc). Exits 1 when a goal
is missed.

usage: bench/eta_calibration.py [--trtwatch build/trtwatch] [--scorer build/bench/eta_score]
         [--profile large-transformer] [--builds 24] [--learn 8] [--speed 8]
         [--variation 0.2,0.1] [--jobs 2]
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHECKPOINTS = [0.1, 0.25, 0.5, 0.75]


def profile_with_variation(name, variation, folder):
    """The built-in profile's JSON with a variation, as a file of its own."""
    profile = json.loads((ROOT / "profiles" / f"{name}.json").read_text())
    build, phase = (float(x) for x in variation.split(","))
    profile["variation"] = {"build": build, "phase": phase}
    path = folder / f"{name}-varied.json"
    path.write_text(json.dumps(profile))
    return path


def run_build(trtwatch, profile, seed, speed, folder):
    events = folder / f"build-{seed:03d}.jsonl"
    subprocess.run([trtwatch, "build", "--simulate", str(profile), "--seed", str(seed), "--speed", str(speed),
                    "--progress", "quiet", "--no-history", "--events", str(events)], check=True)
    return events


def relative_error(estimate, truth):
    return abs(estimate - truth) / truth if truth > 0 else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trtwatch", default=str(ROOT / "build" / "trtwatch"))
    parser.add_argument("--scorer", default=str(ROOT / "build" / "bench" / "eta_score"))
    parser.add_argument("--profile", default="large-transformer")
    parser.add_argument("--builds", type=int, default=24)
    parser.add_argument("--learn", type=int, default=8)
    parser.add_argument("--speed", type=float, default=8)
    parser.add_argument("--variation", default="0.2,0.1", help="build,phase (docs/simulator.md)")
    parser.add_argument("--jobs", type=int, default=2, help="builds run at once")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        profile = profile_with_variation(args.profile, args.variation, folder)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            files = list(pool.map(lambda seed: run_build(args.trtwatch, profile, seed, args.speed, folder),
                                  range(1, args.builds + 1)))
        out = subprocess.run([args.scorer, "--checkpoints", ",".join(map(str, CHECKPOINTS)),
                              *map(str, files[:args.learn]), "--", *map(str, files[args.learn:])],
                             check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    durations = [r["truth"] / (1 - r["checkpoint"]) for r in rows if r["checkpoint"] == CHECKPOINTS[0]]
    print(f"{args.profile} with variation {args.variation}, speed {args.speed}x: {args.builds} builds, "
          f"history of {args.learn}, {len(durations)} scored ({min(durations):.1f}-{max(durations):.1f} s each)")
    print(f"{'at':>5} {'coverage p10-p90':>17} {'p50 error':>10} {'step-fraction':>14} {'smoothed rate':>14}")
    failures = []
    for checkpoint in CHECKPOINTS:
        at = [r for r in rows if r["checkpoint"] == checkpoint and "p50" in r]
        coverage = sum(r["p10"] <= r["truth"] <= r["p90"] for r in at) / len(at)
        ours = statistics.median(relative_error(r["p50"], r["truth"]) for r in at)
        # A baseline without a figure yet (no root step) is as wrong as saying nothing: 100 %.
        fraction = statistics.median(relative_error(r["step_fraction"], r["truth"]) if r["step_fraction"] >= 0 else 1.0
                                     for r in at)
        rate = statistics.median(relative_error(r["smoothed_rate"], r["truth"]) if r["smoothed_rate"] >= 0 else 1.0
                                 for r in at)
        print(f"{checkpoint:>5.0%} {coverage:>17.0%} {ours:>10.1%} {fraction:>14.1%} {rate:>14.1%}")
        if not 0.75 <= coverage <= 0.90:
            failures.append(f"coverage at {checkpoint:.0%} is {coverage:.0%}, outside 75-90 %")
        if checkpoint >= 0.25 and ours > 0.15:
            failures.append(f"p50 error at {checkpoint:.0%} is {ours:.1%}, above 15 %")
        if ours >= min(fraction, rate):
            failures.append(f"at {checkpoint:.0%} a baseline does as well ({min(fraction, rate):.1%} vs {ours:.1%})")
    for failure in failures:
        print("goal missed:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
