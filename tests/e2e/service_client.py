"""Helpers for the service's end-to-end tests: a real `trtwatch serve` on loopback
port 0, a tiny JSON HTTP client and a raw streaming SSE reader."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time

from conftest import BIN


class Server:
    """`trtwatch serve --listen 127.0.0.1:0`, its port parsed from stderr."""

    def __init__(self, tmp_path, *extra, data_dir=None, name="server", open_files=None):
        self.data_dir = str(data_dir or (tmp_path / "data"))
        self.log_path = tmp_path / f"{name}.stderr"
        self.extra = list(extra)
        self.proc = None
        self.port = None
        self.open_files = open_files  # RLIMIT_NOFILE (soft and hard) of the server, to run it out of descriptors

    def start(self, timeout=30):
        self._log = open(self.log_path, "a")
        start_offset = self.log_path.stat().st_size
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir", self.data_dir, *self.extra],
            stdout=subprocess.DEVNULL, stderr=self._log, preexec_fn=self._limit_files if self.open_files else None)
        deadline = time.time() + timeout
        while time.time() < deadline:
            text = self.log_path.read_text()[start_offset:]
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", text)
            if m:
                self.port = int(m.group(1))
                return self
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited {self.proc.returncode}: {text}")
            time.sleep(0.02)
        raise AssertionError("server did not report its address")

    def _limit_files(self):
        import resource
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self._log.close()
        return self.proc.returncode

    def log(self):
        return self.log_path.read_text()

    def request(self, method, path, body=None, headers=None, raw=None):
        """Returns (status, parsed JSON or text, headers)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        headers = dict(headers or {})
        if data is not None:  # a raw body is JSON text too, well-formed or not
            headers.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=headers)
        res = conn.getresponse()
        text = res.read().decode()
        hdrs = dict(res.getheaders())
        conn.close()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return res.status, parsed, hdrs

    def submit(self, body, expect=201):
        status, doc, hdrs = self.request("POST", "/builds", body)
        assert status == expect, (status, doc)
        return doc

    def get(self, build_id):
        status, doc, _ = self.request("GET", f"/builds/{build_id}")
        assert status == 200, (status, doc)
        return doc

    def wait_status(self, build_id, statuses, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            doc = self.get(build_id)
            if doc["status"] in statuses:
                return doc
            time.sleep(0.05)
        raise AssertionError(f"{build_id} still {doc['status']}, wanted {statuses}")

    def worker_pids(self):
        """Children of the server (its workers)."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]


def recv_all(sock):
    """Every byte the peer sends until it closes."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def raw_request(port, head):
    """Sends raw request bytes; returns (status, body bytes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        data = recv_all(s)
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def exchange(port, data, timeout=5):
    """Sends raw bytes on one connection and reads until the server closes it or
    `timeout` passes without a byte; returns (the statuses of the responses read,
    all bytes, whether the server closed the connection)."""
    received = b""
    closed = False
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    closed = True
                    break
                received += chunk
        except socket.timeout:
            pass
        except ConnectionResetError:
            closed = True
    statuses = [int(m) for m in re.findall(rb"HTTP/1\.[01] (\d{3}) ", received)]
    return statuses, received, closed


def rss_kib(pid):
    """The resident set of process `pid`, in KiB (/proc/PID/status VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def running(pid):
    """Whether process `pid` exists and is not a zombie. A process that ends while its
    /proc entry is read (ESRCH, ENOENT) is not running."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class SseReader:
    """A raw streaming SSE client over a plain socket: parses frames as they arrive."""

    def __init__(self, port, path, last_event_id=None, headers=None, timeout=60):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream"]
        if last_event_id is not None:
            lines.append(f"Last-Event-ID: {last_event_id}")
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buf = b""
        self.closed = False
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                break
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        status_line = head.split(b"\r\n")[0].decode()
        self.status = int(status_line.split()[1])
        self.headers = {}
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.decode().partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.retry = None
        self.comments = []

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            self.closed = True
            return False
        self.buf += chunk
        return True

    def next_event(self):
        """The next event as a dict {id, event, data (parsed)}, or None at end of stream."""
        while True:
            while b"\n\n" not in self.buf:
                if self.closed or not self._fill():
                    return None
            block, _, self.buf = self.buf.partition(b"\n\n")
            fields = {}
            data = []
            for line in block.decode().split("\n"):
                if line.startswith(":"):
                    self.comments.append(line)
                    continue
                k, _, v = line.partition(":")
                v = v[1:] if v.startswith(" ") else v
                if k == "data":
                    data.append(v)
                else:
                    fields[k] = v
            if "retry" in fields and not data:
                self.retry = int(fields["retry"])
                continue
            if not data:
                continue
            raw = "\n".join(data)  # the data as sent, for byte-for-byte comparisons
            return {"id": int(fields["id"]), "event": fields["event"], "data": json.loads(raw), "raw": raw}

    def read_all(self):
        events = []
        while True:
            e = self.next_event()
            if e is None:
                return events
            events.append(e)

    def close(self):
        self.sock.close()


def read_until(reader, predicate):
    events = []
    while True:
        e = reader.next_event()
        assert e is not None, f"stream ended before the awaited event; got {[x['event'] for x in events][-5:]}"
        events.append(e)
        if predicate(e):
            return events


def replica(tmp_path, uri, name, *extra):
    """A service replica named `name` on the shared PostgreSQL store `uri`."""
    return Server(tmp_path, "--store", uri, "--replica", name, *extra, data_dir=tmp_path / name, name=name)


def start_all(servers):
    """Starts every server, or none: those started are stopped if one fails."""
    started = []
    try:
        for s in servers:
            started.append(s.start())
    except BaseException:
        for s in started:
            s.stop()
        raise
    return started
