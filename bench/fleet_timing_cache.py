#!/usr/bin/env python3
"""Fleet timing caches (issue 37): builds that get faster the more the team builds.

  fleet:    30 simulated builds of 3 related profiles (large-transformer, seeds 1-3: the
            same layers, more or fewer of them) on 2 GPU types, submitted in a random
            order to 2 replicas of one service (PostgreSQL, one shared --artifact-dir);
            each replica's host has one GPU of each type (the stand-in driver), the
            requests name the type. Every build is given its GPU's fleet cache.
  none:     the same 30 requests with "timing_cache": false.
  private:  the same 30 builds, each with a cache of its own (a new file: what a
            request that names its own cache gets from a cache nobody else fills),
            run by `trtwatch build` 4 at a time (the replicas' 4 GPUs), with the
            GPU name the service's executor would give it.

Goals: fleet >= 1.5x faster than private in total build time; the fleet builds after
the first of each GPU type (those that started once it had ended: the builds running
beside it could not have its timings) >= 3x faster than a cold build (the private
builds' mean).

  merge:    a build given a 10 MB cache, against the same build given none: what
            loading it adds before the build's first phase (goal <= 50 ms), and what
            merging the build's cache into it adds after the build (goal <= 0.5 s).

Build times are the records' (started_at to finished_at) and the streams' (build_start
to build_finish). Needs PostgreSQL (tests/e2e/pg_server.py) and the stand-in driver of
the build (build/fake_driver).

  python3 bench/fleet_timing_cache.py [--build build] [--builds 30] [--speed 20] [--seed 7]
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from datetime import datetime

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
from pg_server import PgServer  # noqa: E402
from replica_soak import Replica  # noqa: E402
from sse_soak import http  # noqa: E402

GPUS = {"h": ("Fake GPU H", "0000:1b:00.0", "9.0"), "a": ("Fake GPU A", "0000:3b:00.0", "8.0")}
PROFILE = "large-transformer"
SEEDS = (1, 2, 3)
FINAL = {"succeeded", "failed", "cancelled", "timed_out", "interrupted"}


def seconds(iso):
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def requests(count, seed):
    """(profile seed, GPU type) for each build, in a random order."""
    rng = random.Random(seed)
    pairs = [(s, g) for s in SEEDS for g in GPUS]
    wanted = [pairs[i % len(pairs)] for i in range(count)]
    rng.shuffle(wanted)
    return wanted


def machine_file(tmp):
    path = tmp / "gpus.txt"
    path.write_text("# NAME|PCI_BUS_ID|UUID|MAJOR.MINOR|MEMORY_GIB\n" + "".join(
        f"{name}|{bus}|GPU-{i:08d}-0000-0000-0000-000000000000|{cc}|80\n"
        for i, (name, bus, cc) in enumerate(GPUS.values())))
    return path


def service_phase(args, pg, tmp, name, wanted, extra_request):
    """Build times (s) of `wanted` through 2 replicas, in submission order."""
    uri = pg.create_database(name)
    artifacts = tmp / f"{name}-artifacts"
    gpu_types = [a for t, (_, _, cc) in GPUS.items() for a in ("--gpu-type", f"{t}=gres:{t},cc={cc}")]
    options = types.SimpleNamespace(bin=args.bin, io_threads=None)
    replicas = [Replica(options, tmp, f"{name}-{r}", uri, "--artifact-dir", str(artifacts), *gpu_types)
                for r in ("r0", "r1")]
    rng = random.Random(args.seed + 1)
    try:
        ids = []
        for profile_seed, gpu in wanted:
            target = rng.choice(replicas)
            status, doc = http(target.port, "POST", "/builds", {"simulate": PROFILE, "seed": profile_seed,
                                                               "speed": args.speed, "gpu": {"type": gpu},
                                                               **extra_request})
            assert status == 201, doc
            ids.append(doc["id"])
        records = [wait_final(replicas[0], i) for i in ids]
    finally:
        for r in replicas:
            r.stop()
    bad = [r for r in records if r["status"] != "succeeded"]
    assert not bad, bad[0]
    return [(seconds(r["started_at"]), seconds(r["finished_at"])) for r in records], artifacts


def durations(spans):
    return [end - start for start, end in spans]


def after_first(spans, wanted):
    """The builds that started once the first build of their GPU type had ended."""
    first_end = {g: min(end for (start, end), (_, gg) in zip(spans, wanted) if gg == g) for g in GPUS}
    return [end - start for (start, end), (_, g) in zip(spans, wanted) if start >= first_end[g]]


def wait_final(replica, build_id, timeout=900):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, doc = http(replica.port, "GET", f"/builds/{build_id}")
        if status == 200 and doc["status"] in FINAL:
            return doc
        time.sleep(0.2)
    raise RuntimeError(f"{build_id} did not end")


def cli_build(args, profile_seed, gpu, cache, speed=None):
    """(seconds from build_start to build_finish, to the first phase) of one CLI build."""
    env = dict(os.environ, TRTWATCH_SIMULATED_GPU=f"{GPUS[gpu][0]} sm {GPUS[gpu][2]}")
    cmd = [args.bin, "build", "--simulate", PROFILE, "--seed", str(profile_seed), "--speed", str(speed or args.speed),
           "--progress", "json", "--no-history"]
    if cache:
        cmd += ["--timing-cache", str(cache)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    first_phase = next(e["t"] for e in events if e["type"] == "phase_start")
    return events[-1]["t"] - events[0]["t"], first_phase - events[0]["t"]


def private_phase(args, tmp, wanted):
    folder = tmp / "private"
    folder.mkdir()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        jobs = [pool.submit(cli_build, args, s, g, folder / f"request-{i}.cache") for i, (s, g) in enumerate(wanted)]
        return [j.result()[0] for j in jobs]


def big_cache(path, megabytes):
    """A simulated cache of about `megabytes` MB for the simulated GPU "Fake GPU H sm 9.0"."""
    entries, size, i = [], 0, 0
    while size < megabytes * 1_000_000:
        entries.append([f"some other network's layer {i}", i % 7, 1000 + i % 500])
        size += len(json.dumps(entries[-1])) + 1
        i += 1
    path.write_text(json.dumps({"format": "trtwatch-simulated-timing-cache", "version": 1,
                                "builder": "trtwatch simulator 1", "gpu": "Fake GPU H sm 9.0", "entries": entries}))


def merge_phase(args, tmp, runs):
    """Medians of (total, to the first phase) with a fresh copy of a 10 MB cache, and with a
    new (empty) cache: the same build, the same measurements."""
    source = tmp / "big.cache"
    big_cache(source, 10)
    with_cache, without = [], []
    for i in range(runs):
        copy = tmp / f"big-{i}.cache"
        shutil.copy(source, copy)
        with_cache.append(cli_build(args, 1, "h", copy, speed=200))
        without.append(cli_build(args, 1, "h", tmp / f"empty-{i}.cache", speed=200))
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    return source.stat().st_size, (med(with_cache, 0), med(with_cache, 1)), (med(without, 0), med(without, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--builds", type=int, default=30)
    parser.add_argument("--speed", type=float, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--merge-runs", type=int, default=5)
    args = parser.parse_args()
    args.bin = str(pathlib.Path(args.build, "trtwatch").resolve())
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="trtwatch_fleet_cache_"))
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(pathlib.Path(args.build, "fake_driver").resolve()),
                                                                 os.environ.get("LD_LIBRARY_PATH")]))
    os.environ["TRTWATCH_FAKE_GPUS"] = str(machine_file(tmp))
    pg = PgServer({"fsync": "off", "jit": "off"})
    try:
        wanted = requests(args.builds, args.seed)
        print(f"fleet_timing_cache: {args.builds} builds of {PROFILE} seeds {SEEDS} on {len(GPUS)} GPU types, "
              f"--speed {args.speed}; {os.cpu_count()} cores")
        fleet_spans, artifacts = service_phase(args, pg, tmp, "fleet", wanted, {})
        none = durations(service_phase(args, pg, tmp, "none", wanted, {"timing_cache": False})[0])
        private = private_phase(args, tmp, wanted)
        fleet = durations(fleet_spans)
        later = after_first(fleet_spans, wanted)
        cold = statistics.mean(private)
        print(f"  total build time: fleet {sum(fleet):.1f} s, private caches {sum(private):.1f} s, "
              f"no cache {sum(none):.1f} s")
        print(f"  fleet vs private: {sum(private) / sum(fleet):.2f}x (goal >= 1.5x); vs none: "
              f"{sum(none) / sum(fleet):.2f}x")
        print(f"  a cold build (private, mean) {cold:.2f} s; the {len(later)} fleet builds that started after the "
              f"first of their GPU type ended: mean {statistics.mean(later):.2f} s, "
              f"{cold / statistics.mean(later):.2f}x faster (goal >= 3x)")
        for cache in sorted((artifacts / "timing-caches").glob("*.cache")):
            print(f"  fleet cache {cache.name}: {cache.stat().st_size} bytes, "
                  f"{len(json.loads(cache.read_text())['entries'])} entries")
        size, (total_with, start_with), (total_without, start_without) = merge_phase(args, tmp, args.merge_runs)
        print(f"  a {size / 1e6:.1f} MB cache against an empty one: adds {1000 * (start_with - start_without):.0f} ms before the first "
              f"phase (goal <= 50 ms); {total_with - total_without:.3f} s to the whole build, its merge "
              f"included (goal <= 0.5 s); medians of {args.merge_runs}")
        return 0
    finally:
        pg.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
