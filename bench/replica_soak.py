#!/usr/bin/env python3
"""Replica soak: `trtwatch serve` replicas on one PostgreSQL, followers on every replica.

Not a unit test: a measurement (issue 23, Performance). It starts a throwaway
PostgreSQL 15 (tests/e2e/pg_server.py's PgServer) and two measurements:

fanout: --replicas replicas with --max-concurrent 1 each. A blocker build
  (large-transformer) occupies every replica's slot, the measured build is submitted
  (it waits queued), --clients followers connect to it on EACH replica (raw-socket epoll
  clients of sse_soak.py, --processes client processes per replica), then one blocker is
  cancelled: the measured build starts on that replica (its "home", read back from
  `SELECT owner FROM builds`) with every follower already listening. Reports:
  - connect: all clients of all replicas connected within S s (and each client's p99);
  - cross-replica delay per event and remote replica: first receipt among that replica's
    clients minus first receipt among the home replica's clients (p50/p99/max; the
    issue's target: p99 <= 100 ms);
  - fan-out delay: each (sampled) client's receipt minus the first receipt of the event
    anywhere in the cluster (target p99 <= 250 ms), and within each replica;
  - structural events lost (must be 0), step events coalesced, streams complete;
  - each replica's RSS: sampled peak while streaming and VmHWM (target <= 256 MiB).
ingest: 20 (--builds) concurrent simulated builds (large-transformer at speed 1000,
  4,000-5,000 events each as stored) on one replica with --max-concurrent 20, first on PostgreSQL
  (--store) then on SQLite (the default store) in the same run: events stored (counted in
  the stored logs) / wall time from the first build's started_at to the last one's
  finished_at. The replica batches each build's events into multi-row INSERTs
  (500 a statement) with one NOTIFY each.

Settings: PostgreSQL runs with --pg-fsync (on by default here: fsync=on,
synchronous_commit=on, full_page_writes=on, i.e. durable commits; `off` gives the test
fixture's fsync=off, full_page_writes=off); SQLite is the service's own WAL with
synchronous=NORMAL. Everything on 127.0.0.1.

Usage: bench/replica_soak.py [--bin build/trtwatch] [--mode fanout|ingest|both]
       [--replicas 3] [--clients 3000 (per replica)] [--processes 2 (per replica)]
       [--profile small-cnn] [--speed 1] [--builds 20] [--pg-fsync on|off]
PostgreSQL's binaries: TRTWATCH_PG_BIN or /usr/lib/postgresql/*/bin; as root the server
runs as `postgres` (or `nobody`, or TRTWATCH_PG_USER).

Measured (binary of commit 0433587, release build; PostgreSQL 15.18, fsync=on,
synchronous_commit=on, full_page_writes=on; also in docs/deploy.md, "Several replicas"):
  16-core H200 host, Ubuntu 24.04, 3 x 3,000 followers, 2 client processes per replica:
    9,000/9,000 connected within 0.21 s (each p99 97 ms), all complete, 0 structural lost;
    cross-replica delay p50 3.1 ms, p99 11.7 ms, max 26 ms; fan-out delay (cluster)
    p50 8.5 ms, p99 41.5 ms; RSS per replica 23.6 MiB connected, high-water 35-37 MiB.
    Ingest, 20 builds: PostgreSQL 52-56 k events/s (51-59 k with --pg-fsync off),
    SQLite 126-138 k events/s (3 runs of each, alternating).
  2-core dev machine, shared with compiles (load 6-10), nice 10, 3 x 500 followers,
    1 client process per replica: connected within 0.36-0.45 s, 0 lost; cross-replica
    delay p99 117-124 ms (p50 15-22 ms); fan-out delay p99 363-411 ms; RSS <= 19 MiB.
    Ingest: PostgreSQL 9.9-12.3 k events/s, SQLite 11.1-19.0 k (2 runs each). The
    clients, replicas, PostgreSQL and workers share two busy cores there.
"""
import argparse
import multiprocessing
import os
import pathlib
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
from sse_soak import client_process, client_shares, http, percentile, rss_kib, start_clients  # noqa: E402
from pg_server import PgServer  # noqa: E402
from waiting import wait_for  # noqa: E402


class Replica:
    """One `trtwatch serve` process; its port read from its stderr."""

    def __init__(self, args, tmp, name, store_uri, *extra, binary=None):
        self.name = name
        self.err_path = tmp / f"{name}.stderr"
        self.data = tmp / name
        cmd = [binary or args.bin, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(self.data), *extra]
        if store_uri:
            cmd += ["--store", store_uri, "--replica", name]
        if args.io_threads is not None:
            cmd += ["--io-threads", str(args.io_threads)]
        self.err = open(self.err_path, "w+")
        self.proc = subprocess.Popen(cmd, stderr=self.err, stdout=subprocess.DEVNULL)
        self.port = None
        for _ in range(1000):
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.err_path.read_text())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        if self.port is None:
            raise RuntimeError(f"replica {name} did not start: {self.err_path.read_text()}")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.err.close()


def stats(values, unit="ms"):
    if not values:
        return "none"
    return (f"p50 {percentile(values, 50):.2f} {unit}, p99 {percentile(values, 99):.2f} {unit}, "
            f"max {max(values):.2f} {unit} (n={len(values)})")


def fanout(args, pg, tmp):
    uri = pg.create_database("fanout")
    names = [f"r{i}" for i in range(args.replicas)]
    replicas = []
    try:
        for n in names:
            replicas.append(Replica(args, tmp, n, uri, "--max-concurrent", "1"))
        by_name = {r.name: r for r in replicas}
        rss_idle = {r.name: rss_kib(r.proc.pid)["VmRSS"] for r in replicas}
        blockers = [http(r.port, "POST", "/builds", {"simulate": "large-transformer"})[1] for r in replicas]

        def all_running():
            owners = pg.psql("fanout", "SELECT owner FROM builds WHERE status = 'running'").split()
            return len(owners) == len(replicas) and owners
        wait_for(all_running, 30, "every replica runs a blocker")
        _, build = http(replicas[0].port, "POST", "/builds", {"simulate": args.profile, "speed": args.speed,
                                                              "seed": 7})
        assert build["status"] == "queued", build
        path = build["events_url"]

        connected_q = multiprocessing.Queue()
        results_q = {r.name: multiprocessing.Queue() for r in replicas}
        procs = []
        t0 = time.monotonic()
        for r in replicas:
            for n in client_shares(args.clients, args.processes):
                if n:
                    p = multiprocessing.Process(target=client_process, args=(
                        r.port, path, n, args.sample_every, connected_q, results_q[r.name]))
                    procs.append((r.name, p))
        errors, connects, connect_s = start_clients([p for _, p in procs], connected_q, t0, "replica_soak")
        rss_connected = {r.name: rss_kib(r.proc.pid)["VmRSS"] for r in replicas}

        # Free one slot: that replica claims the measured build.
        blocker_owner = {b["id"]: pg.psql("fanout", f"SELECT owner FROM builds WHERE id = '{b['id']}'")
                         for b in blockers}
        freed = blockers[0]["id"]
        http(replicas[0].port, "POST", f"/builds/{freed}/cancel", {"grace": 1})
        peak = {r.name: 0 for r in replicas}
        results = {r.name: [] for r in replicas}
        expected = {r.name: sum(1 for n, _ in procs if n == r.name) for r in replicas}
        while any(len(results[n]) < expected[n] for n in results):
            for r in replicas:
                peak[r.name] = max(peak[r.name], rss_kib(r.proc.pid)["VmRSS"])
            for n, q in results_q.items():
                try:
                    while True:
                        results[n].append(q.get_nowait())
                except Exception:  # noqa: BLE001 - queue.Empty
                    pass
            time.sleep(0.2)
        for _, p in procs:
            p.join()
        home = pg.psql("fanout", f"SELECT owner FROM builds WHERE id = '{build['id']}'")
        _, record = http(by_name[home].port, "GET", f"/builds/{build['id']}")
        hwm = {r.name: rss_kib(r.proc.pid)["VmHWM"] for r in replicas}

        first = {}  # replica -> seq -> first receipt among its clients
        for n, rs in results.items():
            f = first.setdefault(n, {})
            for res in rs:
                for seq, recv in res["first"].items():
                    f[seq] = min(f.get(seq, recv), recv)
        cluster_first = {}
        for f in first.values():
            for seq, recv in f.items():
                cluster_first[seq] = min(cluster_first.get(seq, recv), recv)
        stored = next(iter(results[home]))["stored"]
        structural = {seq for seq, kind in stored.items() if kind != "step"}
        cross, cross_structural = {}, []
        for n in names:
            if n == home:
                continue
            cross[n] = [(recv - first[home][seq]) * 1000 for seq, recv in first[n].items() if seq in first[home]]
            cross_structural += [(recv - first[home][seq]) * 1000 for seq, recv in first[n].items()
                                 if seq in first[home] and seq in structural]
        spread_all, spread_own = [], {}
        for n, rs in results.items():
            own = spread_own.setdefault(n, [])
            for res in rs:
                for seq, recv in res["samples"]:
                    spread_all.append((recv - cluster_first[seq]) * 1000)
                    own.append((recv - first[n][seq]) * 1000)
        structural_lost = sum(res["structural_lost"] for rs in results.values() for res in rs)
        steps_lost = sum(res["steps_lost"] for rs in results.values() for res in rs)
        complete = sum(res["complete"] for rs in results.values() for res in rs)
        total = args.clients * len(replicas)

        print(f"fanout: {len(replicas)} replicas x {args.clients} followers ({args.processes} client processes "
              f"each), profile {args.profile} at speed {args.speed}: {len(stored)} events stored, build "
              f"{record['status']} on {home} (the blocker of {blocker_owner[freed]} was cancelled)")
        print(f"  {len(connects)}/{total} connected, all within {connect_s:.2f} s; each: "
              f"p99 {percentile(connects, 99) * 1000:.1f} ms, max {max(connects, default=float('nan')) * 1000:.1f} ms")
        print(f"  {complete}/{total} streams ended with build_finish; structural events lost: {structural_lost}; "
              f"step events coalesced: {steps_lost}")
        for n, d in cross.items():
            print(f"  cross-replica delay {n} behind {home} (first receipt vs first receipt), every event: {stats(d)}")
        print(f"  cross-replica delay, all remote replicas, every event: "
              f"{stats([x for d in cross.values() for x in d])}; structural events only: {stats(cross_structural)}")
        print(f"  fan-out delay behind the cluster's first receipt (every {args.sample_every}th client): "
              f"{stats(spread_all)}")
        for n, d in spread_own.items():
            print(f"  fan-out delay within {n}{' (home)' if n == home else ''} behind its first receipt: {stats(d)}")
        for r in replicas:
            print(f"  {r.name} RSS: idle {rss_idle[r.name] / 1024:.1f} MiB, connected "
                  f"{rss_connected[r.name] / 1024:.1f} MiB, peak sampled {peak[r.name] / 1024:.1f} MiB, "
                  f"high-water {hwm[r.name] / 1024:.1f} MiB")
        for b in blockers:
            if b["id"] != freed:
                http(replicas[0].port, "POST", f"/builds/{b['id']}/cancel", {"grace": 1})
        return structural_lost == 0 and complete == total and len(connects) == total
    finally:
        for r in replicas:
            r.stop()


def parse_time(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def ingest_one(args, tmp, label, uri, pg, binary=None):
    r = Replica(args, tmp, label, uri, "--max-concurrent", str(args.builds), "--queue-limit", str(args.builds + 10),
                binary=binary)
    try:
        ids = [http(r.port, "POST", "/builds", {"simulate": "large-transformer", "speed": 1000, "seed": i})[1]["id"]
               for i in range(args.builds)]
        records = wait_for(lambda: (lambda rs: all(x["status"] in ("succeeded", "failed", "cancelled", "interrupted")
                                                   for x in rs) and rs)(
            [http(r.port, "GET", f"/builds/{i}")[1] for i in ids]), 300, f"{label}: every build finished")
    finally:
        r.stop()
    wall = max(parse_time(x["finished_at"]) for x in records) - min(parse_time(x["started_at"]) for x in records)
    if uri:
        db = uri.rsplit("/", 1)[1]
        events = int(pg.psql(db, "SELECT count(*) FROM events"))
    else:
        con = sqlite3.connect(r.data / "trtwatch.db")
        events = con.execute("SELECT count(*) FROM events").fetchone()[0]
        con.close()
    statuses = sorted({x["status"] for x in records})
    print(f"  {label}: {events} events stored from {len(records)} builds ({'/'.join(statuses)}) in {wall:.3f} s: "
          f"{events / wall:,.0f} events/s")
    return events / wall


def ingest(args, pg, tmp):
    print(f"ingest: {args.builds} concurrent simulated builds (large-transformer, speed 1000) on one replica "
          f"(--max-concurrent {args.builds}); events stored / (last finished_at - first started_at)")
    rates = {"postgresql": [], "sqlite": []}
    if args.baseline_bin:
        rates["sqlite, baseline binary"] = []
    for i in range(args.repeat):
        rates["postgresql"].append(ingest_one(args, tmp, f"postgresql{i}", pg.create_database(f"ingest{i}"), pg))
        rates["sqlite"].append(ingest_one(args, tmp, f"sqlite{i}", None, pg))
        if args.baseline_bin:
            rates["sqlite, baseline binary"].append(
                ingest_one(args, tmp, f"sqlite-baseline{i}", None, pg, binary=args.baseline_bin))
    for k, v in rates.items():
        print(f"  {k}: best {max(v):,.0f} events/s over {len(v)} run(s)")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = pathlib.Path(__file__).resolve().parents[1]
    parser.add_argument("--bin", default=os.environ.get("TRTWATCH_BIN", str(root / "build" / "trtwatch")))
    parser.add_argument("--mode", choices=["fanout", "ingest", "both"], default="both")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--clients", type=int, default=3000, help="followers per replica")
    parser.add_argument("--processes", type=int, default=2, help="client processes per replica")
    parser.add_argument("--profile", default="small-cnn")
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--sample-every", type=int, default=10,
                        help="fan-out delays from every Nth client's deliveries (losses count all)")
    parser.add_argument("--io-threads", type=int, default=None, help="each replica's --io-threads")
    parser.add_argument("--builds", type=int, default=20, help="concurrent builds of the ingest measurement")
    parser.add_argument("--repeat", type=int, default=1, help="ingest runs of each store (alternating)")
    parser.add_argument("--pg-fsync", choices=["on", "off"], default="on")
    parser.add_argument("--baseline-bin", default=None,
                        help="an earlier trtwatch (e.g. before replicas) whose SQLite ingest runs alternately in the same run")
    args = parser.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, 2 * args.clients * args.replicas + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # the replicas and clients inherit it
    settings = ({"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"} if args.pg_fsync == "on"
                else {"fsync": "off", "full_page_writes": "off"})
    settings.update({"max_connections": "200", "jit": "off"})
    pg = PgServer(settings)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="trtwatch_replica_soak_"))
    try:
        print(f"replica_soak: {args.bin}; PostgreSQL {pg.psql('postgres', 'SHOW server_version')} with "
              + ", ".join(f"{k}={v}" for k, v in settings.items()) + f"; {os.cpu_count()} cores")
        ok = True
        if args.mode in ("fanout", "both"):
            ok = fanout(args, pg, tmp) and ok
        if args.mode in ("ingest", "both"):
            ok = ingest(args, pg, tmp) and ok
        return 0 if ok else 1
    finally:
        pg.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
