"""Issue 22, service trust: one service per data dir, bounded client text, and the
edges of option and body validation."""
import json
import os
import socket
import stat
import sqlite3
import subprocess
import time

from conftest import BIN
from service_client import Server


def _refused_beside(server, *command):
    """Runs a second service on `server`'s data dir; returns the CompletedProcess."""
    return subprocess.run([BIN, *command, "--data-dir", server.data_dir], input="", capture_output=True, text=True,
                          timeout=30)


# A second `serve`, or an `mcp`, on a data dir in use once recovered (SIGKILLed) the
# first one's workers and ran its queued builds a second time.
def test_a_second_service_on_a_data_dir_in_use_exits_2_and_touches_nothing(tmp_path):
    first = Server(tmp_path, "--max-concurrent", "1").start()
    try:
        doc = first.submit({"simulate": "large-transformer", "speed": 8})
        running = first.wait_status(doc["id"], ["running"])
        queued = [first.submit({"simulate": "small-cnn", "speed": 8}) for _ in range(3)]
        for command in (["serve", "--listen", "127.0.0.1:0"], ["mcp"]):
            second = _refused_beside(first, *command)
            assert second.returncode == 2, second.stderr
            assert f'"{first.data_dir}"' in second.stderr and f"PID {first.proc.pid}" in second.stderr, second.stderr
        assert first.get(doc["id"])["status"] == "running"
        os.kill(running["worker_pid"], 0)  # the first one's worker is alive
        assert first.wait_status(doc["id"], ["succeeded", "failed", "cancelled"])["status"] == "succeeded"
        for q in queued:
            assert first.wait_status(q["id"], ["succeeded", "failed", "cancelled"])["status"] == "succeeded"
    finally:
        first.stop()
    again = Server(tmp_path, name="again").start()  # the dir is free once the first has stopped
    again.stop()


def test_the_data_dir_and_database_are_private(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    s = Server(tmp_path).start()
    try:
        s.submit({"simulate": "small-cnn", "speed": 8})
        assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
        for name in ("trtwatch.db", "trtwatch.db-wal", "trtwatch.db-shm"):
            assert stat.S_IMODE(os.stat(data / name).st_mode) == 0o600, name
    finally:
        s.stop()


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _mcp_post(server, message, session=None):
    """One POST /mcp answered at once; returns (status, headers, parsed body)."""
    headers = dict(MCP_HEADERS, **({"Mcp-Session-Id": session} if session else {}))
    status, doc, hdrs = server.request("POST", "/mcp", message, headers=headers)
    return status, hdrs, doc


def _mcp_initialize(server):
    status, hdrs, doc = _mcp_post(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "trust-test", "version": "0"}}})
    return status, hdrs.get("Mcp-Session-Id"), doc


def _mcp_busy(server, session):
    """Leaves a build_engine call (waiting for its build) in flight on `session`; returns its socket."""
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "build_engine", "arguments": {"simulate": "large-transformer"}}})
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    head = [f"POST /mcp HTTP/1.1", "Host: 127.0.0.1", f"Mcp-Session-Id: {session}",
            f"Content-Length: {len(body)}"] + [f"{k}: {v}" for k, v in MCP_HEADERS.items()]
    sock.sendall(("\r\n".join(head) + "\r\n\r\n" + body).encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the stream"
        reply += chunk
    assert b"text/event-stream" in reply.split(b"\r\n\r\n")[0], reply
    return sock


# At 256 sessions an arbitrary one was dropped, one in active use among them. A session
# with a request in flight is never evicted; when all are busy, initialize gets 503.
def test_mcp_sessions_in_use_survive_a_full_table_and_a_table_of_busy_ones_answers_503(tmp_path):
    s = Server(tmp_path, "--max-concurrent", "1", "--queue-limit", "300").start()
    streams = []
    try:
        busy = []
        for _ in range(255):
            status, session, _ = _mcp_initialize(s)
            assert status == 200 and session
            streams.append(_mcp_busy(s, session))
            busy.append(session)
        for i in range(300):
            status, latest, doc = _mcp_initialize(s)
            assert status == 200, (i, doc)
        for session in busy:
            status, _, doc = _mcp_post(s, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, session)
            assert status == 200, (session, doc)  # not 404: it was not dropped
        streams.append(_mcp_busy(s, latest))  # now all 256 have a request in flight
        status, hdrs, doc = _mcp_post(s, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
        assert status == 503 and int(hdrs["Retry-After"]) > 0, (status, doc)
        assert "in flight" in doc["error"]["message"]
    finally:
        for sock in streams:
            sock.close()
        s.stop()


def test_an_unknown_mcp_session_gets_404_to_initialize_again(tmp_path):
    s = Server(tmp_path).start()
    try:
        status, _, doc = _mcp_post(s, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, "no-such-session")
        assert status == 404 and "initialize" in doc["error"]["message"]
    finally:
        s.stop()


CUT = "\u2026 [cut]"
MAX_CLIENT_TEXT = 4096  # kMaxClientText, src/builds/build_record.h


def _stored_events(data_dir, build_id):
    with sqlite3.connect(f"file:{data_dir}/trtwatch.db?mode=ro", uri=True) as db:
        return [json.loads(row[0]) for row in
                db.execute("SELECT json FROM events WHERE build_id = ? ORDER BY seq", (build_id,))]


def _assert_cancel_texts_bounded(record, events, kept):
    assert len(json.dumps(record)) < 64 << 10, len(json.dumps(record))  # was 6 MB
    message = record["cancel"]["message"]
    assert len(message.encode()) <= MAX_CLIENT_TEXT and message.endswith(CUT) and kept in message, message[:80]
    assert record["error"].startswith(message[:-len(CUT)])
    for e in events:
        assert len(json.dumps(e)) < 32 << 10, (e["type"], len(json.dumps(e)))  # was 3 MB
    # A worker stopped before it streamed has no cancel_requested; one that streamed tells the record's message.
    assert all(e["message"] == message for e in events if e["type"] == "cancel_requested")
    assert events[-1]["type"] == "build_finish" and events[-1]["error"].endswith(CUT)


def _running_mcp_build(m, request_id):
    """Starts build_engine as request `request_id`; returns once its progress flows."""
    m.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": "build_engine", "arguments": {"simulate": "large-transformer", "speed": 8},
                       "_meta": {"progressToken": "p"}}})
    while m.receive().get("method") != "notifications/progress":
        pass
    return m.call("list_builds", {"limit": 1})["structuredContent"]["builds"][0]["id"]


# A 3 MiB notifications/cancelled reason became a 6 MB record and a 3 MB event.
def test_a_3_mib_cancel_reason_over_stdio_is_cut_in_the_record_and_events(tmp_path):
    from test_mcp_stdio import McpProcess
    m = McpProcess(tmp_path / "data")
    try:
        m.initialize()
        build_id = _running_mcp_build(m, "b-1")
        reason = "r" * (3 << 20)  # 3 MiB (the line limit is 4 MiB; JSON would escape non-ASCII six-fold)
        m.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "b-1", "reason": reason}})
        deadline = time.monotonic() + 60
        record = m.call("get_build", {"id": build_id})["structuredContent"]
        while record["status"] != "cancelled" and time.monotonic() < deadline:
            time.sleep(0.2)
            record = m.call("get_build", {"id": build_id})["structuredContent"]
    finally:
        m.close()
    _assert_cancel_texts_bounded(record, _stored_events(tmp_path / "data", build_id), "rrr")


def test_a_long_cancel_reason_over_http_is_cut_and_a_long_cancel_body_is_refused(tmp_path):
    s = Server(tmp_path).start()
    try:
        _, session, _ = _mcp_initialize(s)
        _mcp_post(s, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        sock = _mcp_busy(s, session)  # request id 7
        build = s.request("GET", "/builds?limit=1")[1]["builds"][0]
        s.wait_status(build["id"], ["running"])
        # REST carries no cancel reason; a long body stops at the body limit (64 KiB).
        status, _, _ = s.request("POST", f"/builds/{build['id']}/cancel",
                                 raw=json.dumps({"grace": "1s", "reason": "x" * (200 << 10)}))
        assert status == 413
        assert s.get(build["id"])["status"] == "running"  # the refused body changed nothing
        reason = "r" * 60000  # as long as the body limit (64 KiB) lets it be
        status, _, _ = _mcp_post(s, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": 7, "reason": reason}}, session)
        assert status == 202
        record = s.wait_status(build["id"], ["cancelled", "failed", "succeeded"])
        sock.close()
    finally:
        s.stop()
    _assert_cancel_texts_bounded(record, _stored_events(s.data_dir, build["id"]), "rrr")



def _serve_exit(tmp_path, *args):
    return subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"), *args],
                          capture_output=True, text=True, timeout=30)


# {"grace": 0} and 1e-300 were accepted while "0s" was refused: one rule for the flag
# and the body, numbers and texts.
def test_grace_has_one_rule_for_the_flag_and_the_cancel_body(tmp_path):
    r = _serve_exit(tmp_path, "--cancel-grace", "1e-300")
    assert r.returncode == 2 and "--cancel-grace" in r.stderr and "from 1ms to 1h" in r.stderr, r.stderr
    s = Server(tmp_path, "--cancel-grace", "0s").start()
    try:
        doc = s.submit({"simulate": "large-transformer"})
        s.wait_status(doc["id"], ["running"])
        for grace in (1e-300, "1e-300s", 0.0004, "2h", True):
            status, body, _ = s.request("POST", f"/builds/{doc['id']}/cancel", {"grace": grace})
            assert status == 400 and "0 (SIGKILL right after SIGTERM) or from 1ms to 1h" in body["error"], (grace, body)
        status, _, _ = s.request("POST", f"/builds/{doc['id']}/cancel", {"grace": "0s"})
        assert status == 202
        record = s.wait_status(doc["id"], ["cancelled", "failed"])
        assert record["status"] == "cancelled" and record["cancel"]["grace_seconds"] == 0
    finally:
        s.stop()


# --allow-origin '*' and --allow-host '*' were accepted and matched nothing.
def test_malformed_allow_lists_are_refused_at_start(tmp_path):
    for flag, value, hint in [("--allow-origin", "*", "wildcards"), ("--allow-host", "*", "wildcards"),
                              ("--allow-origin", "null", "wildcards"),
                              ("--allow-origin", "http://ui.example.com/", "no path"),
                              ("--allow-origin", "ui.example.com", "scheme"),
                              ("--allow-host", "bad host", "host name"),
                              ("--allow-host", "example.com:http", "host name")]:
        r = _serve_exit(tmp_path, flag, value)
        assert r.returncode == 2 and flag in r.stderr and hint in r.stderr, (flag, value, r.stderr)
    assert not (tmp_path / "data").exists()  # refused before the store was touched
    s = Server(tmp_path, "--allow-origin", "http://[::1]:8080", "--allow-origin", "https://ui.example.com",
               "--allow-host", "build.example.com:8470", "--allow-host", "build.example.com").start()
    try:
        status, _, _ = s.request("GET", "/builds", headers={"Origin": "https://ui.example.com"})
        assert status == 200
    finally:
        s.stop()


# RFC 8259 section 4: names within an object should be unique. Duplicates were read
# last-wins; every body parser refuses them, naming the key.
def test_duplicate_keys_are_refused_by_every_body_parser(tmp_path):
    s = Server(tmp_path).start()
    try:
        status, body, _ = s.request("POST", "/builds", raw='{"simulate": "small-cnn", "simulate": "failing"}')
        assert status == 400 and 'duplicate key "simulate"' in body["error"], body
        doc = s.submit({"simulate": "large-transformer"})
        status, body, _ = s.request("POST", f"/builds/{doc['id']}/cancel", raw='{"grace": "30s", "grace": 0}')
        assert status == 400 and 'duplicate key "grace"' in body["error"], body
        assert s.get(doc["id"])["status"] in ("queued", "running")
        _, session, _ = _mcp_initialize(s)
        status, body, _ = s.request("POST", "/mcp", raw='{"jsonrpc": "2.0", "id": 1, "method": "ping", "id": 2}',
                                    headers=dict(MCP_HEADERS, **{"Mcp-Session-Id": session}))
        assert status == 400 and 'duplicate key "id"' in body["error"]["message"], body
    finally:
        s.stop()
