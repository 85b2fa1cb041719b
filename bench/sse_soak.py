#!/usr/bin/env python3
"""SSE soak: N concurrent Server-Sent Events clients on one simulated build.

Not a unit test: a measurement. It starts `trtwatch serve` on loopback port 0 with
--max-concurrent 1, occupies the slot with a blocker build, submits the measured build
(it waits in the queue), connects N raw-socket SSE clients to it, then cancels the
blocker so the measured build starts with every client already listening live.

Reports:
  - delivery latency p50/p99/max (over every --sample-every'th client's deliveries): receive time minus (build epoch + event t), where the
    epoch is fitted as the earliest (receive - t) seen over all clients and events, so
    0 is the fastest delivery observed (pipe, parse, store, fan-out and client included);
  - connect time: all clients, and each (from connect to the response's head);
  - fan-out delay p50/p99 (sampled likewise): per event, each client's receive time minus the first receiver's;
  - events lost: structural events (must be 0) and coalesced steps, against the stored log;
  - the kernel's ListenOverflows/ListenDrops (TcpExt, /proc/net/netstat) before and
    after the clients connect: a SYN dropped on a full listen backlog;
  - the server's CPU (user and system) per delivery while the build streams;
  - the server's RSS (VmRSS sampled, VmHWM peak) from /proc/PID/status.

Credentials (--users): 0, none asked for (the default); 1, one token (--token-file);
N > 1, a users file of N users (--users), every request with one of their tokens: the
cost of checking tokens against a users file, against one token in another run.

Usage: bench/sse_soak.py [--bin build/trtwatch] [--clients 1000] [--processes 2] [--profile small-cnn]
       [--speed 1] [--io-threads N] [--users N]
"""
import argparse
import hashlib
import json
import os
import pathlib
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import multiprocessing
import urllib.request

STRUCTURAL = {"build_start", "phase_start", "phase_finish", "cancel_requested", "build_finish"}
AUTH = {}  # the Authorization header every request carries, when the server asks for one


def write_credentials(folder, users):
    """The server's credential flags for `users` (see the module's doc) and the token to send."""
    if users == 0:
        return [], None
    tokens = [os.urandom(32).hex() for _ in range(users)]
    path = folder / ("token" if users == 1 else "users")
    if users == 1:
        path.write_text(tokens[0] + "\n")
    else:
        path.write_text("".join(f"user{i} {'admin' if i == users // 2 else 'viewer'} "
                                f"{hashlib.sha256(t.encode()).hexdigest()}\n" for i, t in enumerate(tokens)))
    path.chmod(0o600)
    return ["--token-file" if users == 1 else "--users", str(path)], tokens[users // 2]


def http(port, method, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json", **AUTH})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def cpu_seconds(pid):
    """(user, system) CPU seconds of process `pid`."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / os.sysconf("SC_CLK_TCK"), int(fields[12]) / os.sysconf("SC_CLK_TCK")


def listen_counters():
    """The kernel's TcpExt ListenOverflows and ListenDrops (/proc/net/netstat): a SYN
    dropped because a listen backlog was full, and every such drop. They count the whole
    network namespace, so other listeners on the machine count too."""
    counters = {}
    try:
        lines = pathlib.Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return counters
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            counters = dict(zip(names.split()[1:], (int(v) for v in values.split()[1:])))
    return {k: counters.get(k, 0) for k in ("ListenOverflows", "ListenDrops")}


def somaxconn():
    try:
        return int(pathlib.Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return None


def rss_kib(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                fields[k] = int(v.split()[0])
    return fields


def client_process(port, path, count, sample_every, connected_q, results_q, auth):
    """One process holding `count` raw-socket clients on an epoll loop (asyncio's
    per-wakeup cost would make Python, not the server, the bottleneck). Responses are
    read while later clients still connect, so each client's connect time is its own;
    while streaming, chunks are only stamped and kept, and parsed after the end."""
    import select
    import socket
    AUTH.update(auth)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n{auth_lines()}\r\n".encode()
    ep = select.epoll()
    socks, bufs, chunks, headed, started, connect_s = {}, {}, {}, {}, {}, []
    errors = []
    open_fds = set()

    def pump(timeout):
        for fd, _ in ep.poll(timeout):
            now = time.monotonic()
            try:
                chunk = socks[fd].recv(262144)
            except BlockingIOError:
                continue
            except OSError as e:
                chunk = b""
                errors.append(repr(e))
            if not chunk:
                ep.unregister(fd)
                socks[fd].close()
                open_fds.discard(fd)
                headed[fd] = True
                continue
            if headed[fd]:
                chunks[fd].append((now, chunk))  # parsed after the build: no client work skews the timing
                continue
            buf = bufs[fd] + chunk
            if b"\r\n\r\n" not in buf:
                bufs[fd] = buf
                continue
            head, _, buf = buf.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                errors.append(head.split(b"\r\n")[0].decode())
            headed[fd] = True
            connect_s.append(now - started[fd])
            chunks[fd].append((now, buf))

    for i in range(count):
        try:
            t = time.monotonic()
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(request)
            s.setblocking(False)
        except OSError as e:
            errors.append(repr(e))
            continue
        fd = s.fileno()
        socks[fd], bufs[fd], chunks[fd], headed[fd], started[fd] = s, b"", [], False, t
        open_fds.add(fd)
        ep.register(fd, select.EPOLLIN)
        if i % 50 == 49:
            pump(0.005)  # read the heads in, and let the accept backlog drain
    reported = False
    while open_fds:
        if not reported and all(headed[fd] for fd in open_fds):
            connected_q.put((errors, connect_s))
            reported = True
        pump(1.0)
    if not reported:
        connected_q.put((errors, connect_s))
    # Summarised here, not shipped whole: 10,000 clients x 7,000 events would be 70 M
    # tuples through a pipe. The streams have ended, so the stored log is complete.
    stored = {seq: kind for seq, kind, _ in read_stream(port, path)}
    first, samples = {}, []
    structural_lost = steps_lost = complete = deliveries = 0
    clients = len(chunks)
    for i, fd in enumerate(list(chunks)):
        evs = parse_frames(chunks.pop(fd))  # one client at a time: memory stays one client's
        got = set()
        for seq, _, recv in evs:
            got.add(seq)
            if recv < first.get(seq, float("inf")):
                first[seq] = recv
        deliveries += len(evs)
        for seq, kind in stored.items():
            if seq not in got:
                if kind in STRUCTURAL:
                    structural_lost += 1
                else:
                    steps_lost += 1
        complete += bool(evs) and evs[-1][1] == "build_finish"
        if i % sample_every == 0:
            samples += [(seq, recv) for seq, _, recv in evs]
    results_q.put({"clients": clients, "structural_lost": structural_lost, "steps_lost": steps_lost,
                   "complete": complete, "deliveries": deliveries, "first": first, "samples": samples,
                   "stored": stored})


def parse_frames(chunks):
    """(seq, type, receive time) of each frame in (receive time, bytes) chunks; a frame
    is received when its last byte is."""
    out, buf = [], b""
    for now, chunk in chunks:
        frames = (buf + chunk).split(b"\n\n")
        buf = frames.pop()
        for frame in frames:
            if frame.startswith(b"id: "):
                nl = frame.index(b"\n")
                out.append((int(frame[4:nl]), frame[nl + 8:frame.index(b"\n", nl + 1)].decode(), now))
    return out


def read_stream(port, path):
    """The whole stored log of a finished build, as (seq, type, None)."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth_lines()}\r\n".encode())
        data = b""
        while chunk := s.recv(1 << 20):
            data += chunk
    out = []
    for frame in data.partition(b"\r\n\r\n")[2].split(b"\n\n"):
        if frame.startswith(b"id: "):
            nl = frame.index(b"\n")
            out.append((int(frame[4:nl]), frame[nl + 8:frame.index(b"\n", nl + 1)].decode(), None))
    return out


def auth_lines():
    return "".join(f"{k}: {v}\r\n" for k, v in AUTH.items())


def client_shares(clients, processes):
    """How many of `clients` each of `processes` client processes holds."""
    return [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]


def start_clients(procs, connected_q, t0, name):
    """Starts the client processes and waits until each has connected its clients:
    (connect errors, each client's connect time, seconds from `t0` until all were in)."""
    for p in procs:
        p.start()
    errors, connects = [], []
    for _ in procs:
        e, c = connected_q.get(timeout=300)
        errors += e
        connects += c
    connect_s = time.monotonic() - t0
    if errors:
        print(f"{name}: {len(errors)} clients failed to connect, e.g. {errors[0]}", file=sys.stderr)
    return errors, connects, connect_s


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))
    return values[k]


def soak(args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # The server holds one descriptor per client (the clients are spread over processes).
    want = min(hard, max(soft, 2 * args.clients + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # inherited by the server too
    if want < args.clients + 256:
        sys.exit(f"sse_soak: the descriptor limit ({hard}) is too low for {args.clients} clients")

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="trtwatch_soak_"))
    log = open(tmp / "server.stderr", "w+")
    flags, token = write_credentials(tmp, args.users)
    if token:
        AUTH["Authorization"] = f"Bearer {token}"
    cmd = [args.bin, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp / "data"), "--max-concurrent", "1",
           *flags]
    if args.io_threads is not None:
        cmd += ["--io-threads", str(args.io_threads)]
    server = subprocess.Popen(cmd, stderr=log, stdout=subprocess.DEVNULL)
    try:
        port = None
        for _ in range(500):
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", (tmp / "server.stderr").read_text())
            if m:
                port = int(m.group(1))
                break
            time.sleep(0.02)
        if port is None:
            sys.exit("sse_soak: the server did not start: " + (tmp / "server.stderr").read_text())
        rss_idle = rss_kib(server.pid)

        _, blocker = http(port, "POST", "/builds", {"simulate": "large-transformer"})
        _, build = http(port, "POST", "/builds", {"simulate": args.profile, "speed": args.speed, "seed": 7})
        assert build["status"] == "queued", build
        connected_q = multiprocessing.Queue()
        results_q = multiprocessing.Queue()
        shares = client_shares(args.clients, args.processes)
        listen_before = listen_counters()
        t0 = time.monotonic()
        procs = [multiprocessing.Process(target=client_process,
                                         args=(port, build["events_url"], n, args.sample_every, connected_q,
                                               results_q, dict(AUTH)))
                 for n in shares if n]
        errors, connects, connect_s = start_clients(procs, connected_q, t0, "sse_soak")
        listen_after = listen_counters()
        rss_connected = rss_kib(server.pid)

        cpu_before = cpu_seconds(server.pid)
        http(port, "POST", f"/builds/{blocker['id']}/cancel")
        peak = 0
        results = []
        while len(results) < len(procs):
            peak = max(peak, rss_kib(server.pid)["VmRSS"])
            try:
                results.append(results_q.get(timeout=0.2))
            except Exception:  # noqa: BLE001 - queue.Empty: keep sampling
                pass
        for p in procs:
            p.join()
        cpu_after = cpu_seconds(server.pid)
        cpu_user, cpu_system = cpu_after[0] - cpu_before[0], cpu_after[1] - cpu_before[1]
        cpu_used = cpu_user + cpu_system
        clients_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)  # the joined client processes
        clients_cpu = clients_cpu.ru_utime + clients_cpu.ru_stime
        rss_end = rss_kib(server.pid)
        _, record = http(port, "GET", f"/builds/{build['id']}")
        metrics_text = urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                                                     headers=AUTH)).read().decode()

        # The stored log is the truth: every event with its t.
        stored = results[0]["stored"]
        import sqlite3
        db = sqlite3.connect(tmp / "data" / "trtwatch.db")
        t_of = {seq: json.loads(j)["t"] for seq, j in db.execute(
            "SELECT seq, json FROM events WHERE build_id = ?", (build["id"],))}
        db.close()

        first = {}
        for r in results:
            for seq, recv in r["first"].items():
                first[seq] = min(first.get(seq, recv), recv)
        epoch = min(recv - t_of[seq] for seq, recv in first.items() if seq in t_of)
        samples = [x for r in results for x in r["samples"]]
        latencies = [(recv - t_of[seq] - epoch) * 1000 for seq, recv in samples if seq in t_of]
        spreads = [(recv - first[seq]) * 1000 for seq, recv in samples]
        structural_lost = sum(r["structural_lost"] for r in results)
        steps_lost = sum(r["steps_lost"] for r in results)
        complete = sum(r["complete"] for r in results)
        deliveries = sum(r["deliveries"] for r in results)
        dropped = re.search(r"^trtwatch_sse_events_dropped_total (\d+)", metrics_text, re.M)
        cut = re.search(r"^trtwatch_sse_clients_cut_off_total (\d+)", metrics_text, re.M)

        print(f"sse_soak: {args.clients} clients, profile {args.profile} at speed {args.speed}, "
              f"credentials: {['none', 'one token'][args.users] if args.users < 2 else f'{args.users} users'}: "
              f"{len(stored)} events in the log, build {record['status']}")
        print(f"  {len(connects)}/{args.clients} connected, all within {connect_s:.2f} s; each: p50 "
              f"{percentile(connects, 50) * 1000:.1f} ms, p99 {percentile(connects, 99) * 1000:.1f} ms, "
              f"max {max(connects, default=float('nan')) * 1000:.1f} ms (connect to response head)")
        overflows = {k: listen_after.get(k, 0) - listen_before.get(k, 0) for k in ("ListenOverflows", "ListenDrops")}
        print(f"  listen backlog while connecting: ListenOverflows +{overflows['ListenOverflows']}, ListenDrops "
              f"+{overflows['ListenDrops']} (kernel TcpExt; net.core.somaxconn {somaxconn()})")
        print(f"  {complete}/{args.clients} streams ended with build_finish")
        print(f"  delivery latency (vs fastest delivery of any event): p50 {percentile(latencies, 50):.2f} ms, "
              f"p99 {percentile(latencies, 99):.2f} ms, max {max(latencies):.2f} ms; {len(latencies)} sampled of "
              f"{deliveries} deliveries")
        print(f"  fan-out delay (behind the first receiver of each event): p50 {percentile(spreads, 50):.2f} ms, "
              f"p99 {percentile(spreads, 99):.2f} ms, max {max(spreads):.2f} ms")
        print(f"  structural events lost: {structural_lost}; step/log events not received (coalesced): {steps_lost}; "
              f"server counted dropped {dropped.group(1) if dropped else '?'}, cut off {cut.group(1) if cut else '?'}")
        print(f"  CPU while streaming: server {cpu_used:.2f} s, client processes {clients_cpu:.2f} s (user+system; theirs includes parsing after the end)")
        per = 1e6 / max(deliveries, 1)
        print(f"  server CPU per delivery: {cpu_used * per:.2f} us (user {cpu_user * per:.2f}, system "
              f"{cpu_system * per:.2f}; {deliveries} deliveries)")
        print(f"  server RSS: idle {rss_idle['VmRSS'] / 1024:.1f} MiB, {args.clients} clients connected "
              f"{rss_connected['VmRSS'] / 1024:.1f} MiB, peak sampled {peak / 1024:.1f} MiB, "
              f"end {rss_end['VmRSS'] / 1024:.1f} MiB, high-water {rss_end['VmHWM'] / 1024:.1f} MiB")
        ok = structural_lost == 0 and complete == args.clients and len(connects) == args.clients
        return 0 if ok else 1
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root = pathlib.Path(__file__).resolve().parents[1]
    parser.add_argument("--bin", default=os.environ.get("TRTWATCH_BIN", str(root / "build" / "trtwatch")))
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--profile", default="small-cnn")
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--processes", type=int, default=2, help="client processes sharing the clients")
    parser.add_argument("--sample-every", type=int, default=10,
                        help="latencies and delays from every Nth client's deliveries (losses count all)")
    parser.add_argument("--io-threads", type=int, default=None, help="the server's --io-threads (default: its own)")
    parser.add_argument("--users", type=int, default=0,
                        help="0: no credentials; 1: one token (--token-file); N: a users file of N users")
    sys.exit(soak(parser.parse_args()))


if __name__ == "__main__":
    main()
