#!/usr/bin/env python3
"""The local history at its bound (issue 39): what 1,000 (and 10,000) entries cost a
`trtwatch build`, `trtwatch history` and `trtwatch report`, against an empty history
in the same run. Whole processes are timed:

  first phase: from the build's start (the process spawned) to its first phase_start
               line on stdout (--progress json): the history is read before it;
  end:         from its build_finish line to the process's exit: the entry is written;
  peak:        the process's peak resident memory (wait4's ru_maxrss);
  history, report: the command's wall time, its output to /dev/null, and its CPU time
               (user + system: what a busy machine does not inflate).

The entries are made from a real simulated build's entry, padded with log events to
--entry-kib each: one in twenty of the build's key, the rest spread over 19 other keys (a
team building a few models on a few GPUs), written as an earlier trtwatch wrote them (no
index): the first build after that
indexes the file, which is timed apart ("first build"). Goals (issue 39): with 1,000
entries the first phase and the end each <= 20 ms later than with none, peak <= 30 MB
more, history and report <= 200 ms; with 10,000 (TRTWATCH_HISTORY_MAX_ENTRIES raised)
the same within 2x. Prints medians of --runs.

  python3 bench/history_scale.py [--trtwatch build/trtwatch] [--entries 1000,10000] [--runs 5]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time

SIMULATE = ["--simulate", "small-cnn", "--seed", "1", "--speed", "40"]
KEYS = 20  # the build's key and 19 others: a team building a few models on a few GPUs


def timed_build(trtwatch, history, env):
    """(first phase s, end s, peak MiB) of one `trtwatch build` with `history`."""
    start = time.monotonic()
    proc = subprocess.Popen([trtwatch, "build", *SIMULATE, "--history", history, "--progress", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    first = finish = None
    for raw in proc.stdout:
        now = time.monotonic()
        kind = json.loads(raw).get("type")
        if kind == "phase_start" and first is None:
            first = now - start
        elif kind == "build_finish":
            finish = now
    _, status, usage = os.wait4(proc.pid, 0)
    end = time.monotonic() - finish
    if status != 0 or first is None:
        raise SystemExit(f"trtwatch build failed (status {status})")
    return first, end, usage.ru_maxrss / 1024


def timed_command(trtwatch, command, history, env):
    """(wall s, CPU s: user + system) of one command: the CPU time holds on a busy machine."""
    start = time.monotonic()
    proc = subprocess.Popen([trtwatch, command, "--history", history], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"trtwatch {command} failed (status {status})")
    return time.monotonic() - start, usage.ru_utime + usage.ru_stime


def real_entry(trtwatch, scratch, env):
    folder = os.path.join(scratch, "seed")
    timed_build(trtwatch, folder, env)
    with open(os.path.join(folder, "history.jsonl")) as f:
        return json.loads(f.read().splitlines()[1])


def write_history(folder, template, count, entry_bytes, now):
    """`count` entries as an earlier trtwatch wrote them: the template's key for one in
    twenty, made-up keys for the rest, each padded with log events to `entry_bytes`."""
    rng = random.Random(count)
    keys = ["%064x" % rng.getrandbits(256) for _ in range(KEYS - 1)]
    os.makedirs(folder, exist_ok=True)
    events = list(template["events"])
    line = "TensorRT: [MemUsageChange] Init builder kernel library: CPU +1, GPU +10, now: CPU 120, GPU 300 (MiB)"
    while len(json.dumps(dict(template, events=events))) < entry_bytes and len(events) < 199:
        events.insert(-1, {"type": "log", "v": 1, "t": 0.5, "severity": "info", "message": line})
    with open(os.path.join(folder, "history.jsonl"), "w") as f:
        f.write('{"trtwatch_history":1}\n')
        for i in range(count):
            entry = dict(template, events=events)
            entry["build"] = f"b_bench{i:06d}"
            if i % KEYS:
                entry["key"] = keys[i % KEYS - 1]
            entry["finished_at"] = now - (count - i) * 60
            entry["elapsed"] = template["elapsed"] * rng.uniform(0.9, 1.1)
            f.write(json.dumps(entry, separators=(",", ":")) + "\n")


def medians(samples):
    return [statistics.median(column) for column in zip(*samples)]


def measure(trtwatch, history, runs, env, fresh):
    """Medians of `runs` builds (each in a fresh empty folder when `fresh`), then of
    `history` and `report`."""
    builds = []
    for run in range(runs):
        folder = f"{history}-{run}" if fresh else history
        builds.append(timed_build(trtwatch, folder, env))
    folder = history if not fresh else history + "-0"
    commands = [timed_command(trtwatch, "history", folder, env) + timed_command(trtwatch, "report", folder, env)
                for _ in range(runs)]
    return medians(builds) + medians(commands)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trtwatch", default="build/trtwatch")
    parser.add_argument("--entries", default="1000,10000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--entry-kib", type=float, default=30)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="trtwatch-history-bench-")
    try:
        env = dict(os.environ, NO_COLOR="1")
        template = real_entry(args.trtwatch, scratch, env)
        base = measure(args.trtwatch, os.path.join(scratch, "none"), args.runs, env, fresh=True)
        rows = [("none", None, base)]
        for count in (int(n) for n in args.entries.split(",")):
            folder = os.path.join(scratch, f"h{count}")
            write_history(folder, template, count, int(args.entry_kib * 1024), int(time.time()))
            size = os.path.getsize(os.path.join(folder, "history.jsonl"))
            count_env = dict(env, TRTWATCH_HISTORY_MAX_ENTRIES=str(max(count, 1000)))
            first_build = timed_build(args.trtwatch, folder, count_env)  # indexes the earlier trtwatch's file
            rows.append((f"{count} ({size / 1e6:.1f} MB)", first_build, measure(args.trtwatch, folder, args.runs,
                                                                                 count_env, fresh=False)))
            with open(os.path.join(folder, "history.jsonl")) as f:
                if sum(1 for _ in f) <= count:
                    raise SystemExit(f"the history of {count} entries was compacted: is the bound raised?")
        print(f"{'entries':>20} {'first phase':>12} {'end':>9} {'peak':>9} {'history (CPU)':>19} {'report (CPU)':>19}"
              f"   first build after an earlier trtwatch (first phase, end, peak)")
        for name, first_build, (first, end, peak, hist, hist_cpu, report, report_cpu) in rows:
            extra = "" if first_build is None else (f"   {first_build[0] * 1e3:.0f} ms, {first_build[1] * 1e3:.0f} ms,"
                                                    f" {first_build[2]:.0f} MiB")
            print(f"{name:>20} {first * 1e3:>9.1f} ms {end * 1e3:>6.1f} ms {peak:>5.1f} MiB {hist * 1e3:>6.1f} ms"
                  f" ({hist_cpu * 1e3:>5.1f} ms) {report * 1e3:>6.1f} ms ({report_cpu * 1e3:>5.1f} ms){extra}")
        for name, _, (first, end, peak, hist, _, report, _) in rows[1:]:
            scale = 2 if name.startswith("10000") else 1
            ok = (first - base[0] <= 0.020 * scale and end - base[1] <= 0.020 * scale and peak - base[2] <= 30 * scale
                  and hist <= 0.200 * scale and report <= 0.200 * scale)
            print(f"{name}: first phase {(first - base[0]) * 1e3:+.1f} ms, end {(end - base[1]) * 1e3:+.1f} ms,"
                  f" peak {peak - base[2]:+.1f} MiB against none: {'meets' if ok else 'MISSES'} the goals"
                  f"{' (x2)' if scale == 2 else ''}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
