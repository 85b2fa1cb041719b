#!/usr/bin/env python3
"""Runs the monitor benchmark and prints the ratios the project tracks:
naive / trtwatch at each thread count for the step-heavy workload (and trtwatch
slow-sink / fast-sink), then for the phase-heavy one. Both monitors run in the same
process, one after the other, so the ratios compare like with like.

usage: bench/compare.py [path/to/trtwatch_bench] [extra benchmark flags...]
       bench/compare.py results.json   (the --benchmark_out of an earlier run)
"""
import json
import subprocess
import sys

binary = sys.argv[1] if len(sys.argv) > 1 else "build/bench/trtwatch_bench"
if binary.endswith(".json"):
    with open(binary) as f:
        report = json.load(f)
else:
    out = subprocess.run([binary, "--benchmark_format=json", *sys.argv[2:]], check=True, capture_output=True, text=True)
    report = json.loads(out.stdout)
results = {}
for b in report["benchmarks"]:
    # With --benchmark_repetitions, keep the median; without, the single run.
    if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
        continue
    key = (b["run_name"].split("/")[0], b["threads"])
    if b.get("run_type") == "aggregate" or key not in results:
        results[key] = b["real_time"]  # ns per stepComplete, per thread

print(f"{'threads':>7} {'trtwatch':>10} {'naive':>12} {'naive/trtwatch':>15} {'trtwatch slow':>14} {'slow/fast':>9} {'naive slow':>12}")
for threads in (1, 4, 16):
    fast = results[("BM_Trtwatch_FastSink", threads)]
    slow = results[("BM_Trtwatch_SlowSink", threads)]
    naive = results[("BM_Naive_FastSink", threads)]
    naive_slow = results[("BM_Naive_SlowSink", threads)]
    print(f"{threads:>7} {fast:>8.1f}ns {naive:>10.1f}ns {naive / fast:>14.1f}x {slow:>12.1f}ns {slow / fast:>8.2f}x"
          f" {naive_slow / 1e3:>10.1f}us")

print()
print(f"{'threads':>7} {'trtwatch/phase':>15} {'naive/phase':>12} {'naive/trtwatch':>15}")
for threads in (1, 4, 16):
    ours = results[("BM_Trtwatch_ShortPhases", threads)]
    naive = results[("BM_Naive_ShortPhases", threads)]
    print(f"{threads:>7} {ours:>13.1f}ns {naive:>10.1f}ns {naive / ours:>14.1f}x")
