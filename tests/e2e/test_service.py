"""`trtwatch serve` end to end: lifecycle, SSE, replay, recovery, crashing workers."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import time

import pytest

from service_client import Server, SseReader, read_until, recv_all


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path).start()
    yield s
    s.stop()


def assert_in_order(events):
    """ids strictly increasing (the worker's own delivery may coalesce steps, leaving
    gaps in seq: the stored log, not 1..N, is the reference for completeness)."""
    seqs = [e["id"] for e in events]
    assert seqs == sorted(set(seqs)), seqs
    for e in events:
        assert e["data"]["seq"] == e["id"]
        assert e["data"]["type"] == e["event"]


def test_simulated_build_streams_every_event_and_succeeds(server):
    doc = server.submit({"simulate": "small-cnn", "speed": 4, "seed": 3})
    assert doc["status"] in ("queued", "running")
    assert doc["id"].startswith("b_") and len(doc["id"]) == 34
    reader = SseReader(server.port, doc["events_url"])
    assert reader.status == 200
    assert reader.headers["content-type"].startswith("text/event-stream")
    events = reader.read_all()  # the stream ends after build_finish
    assert reader.retry is not None
    assert_in_order(events)
    assert events[0]["event"] == "build_start"
    assert events[0]["data"]["build"] == doc["id"]
    assert events[-1]["event"] == "build_finish"
    assert events[-1]["data"]["status"] == "succeeded"
    record = server.wait_status(doc["id"], ["succeeded"])
    assert record["events"] == events[-1]["id"]
    assert record["phase"]["phases_finished"] == record["phase"]["phases_started"] > 0
    assert record["started_at"] and record["finished_at"]
    assert record["exit_code"] == 0
    # A stream opened after the end replays the whole stored log, identical.
    again = SseReader(server.port, doc["events_url"]).read_all()
    assert [e["data"] for e in again] == [e["data"] for e in events]


def test_cancel_shows_cancelling_then_cancelled(server):
    doc = server.submit({"simulate": "large-transformer"})
    reader = SseReader(server.port, doc["events_url"])
    read_until(reader, lambda e: e["event"] == "step")
    status, cancelled, _ = server.request("POST", f"/builds/{doc['id']}/cancel")
    assert status == 202
    assert cancelled["status"] == "cancelling"
    assert cancelled["cancel"]["reason"] == "api"
    status, again, _ = server.request("POST", f"/builds/{doc['id']}/cancel")  # idempotent
    # Still cancelling: 202 again. A cooperative cancel at the next step may already have
    # ended the build (on a loaded machine, between the two requests): 409, cancelled.
    assert (status == 202 and again["status"] in ("cancelling", "cancelled")) or (
        status == 409 and "already finished (cancelled)" in again["error"]), (status, again)
    rest = reader.read_all()
    kinds = [e["event"] for e in rest]
    assert "cancel_requested" in kinds
    assert kinds[-1] == "build_finish"
    assert rest[-1]["data"]["status"] == "cancelled"
    record = server.wait_status(doc["id"], ["cancelled"])
    assert record["error"].startswith("cancelled by POST /builds/"), record["error"]
    assert record["cancel"]["latency"]["to_return"] >= 0
    assert record["finished_at"]
    status, body, _ = server.request("POST", f"/builds/{doc['id']}/cancel")
    assert status == 409 and "already finished" in body["error"]
    _, metrics, _ = server.request("GET", "/metrics")
    assert 'trtwatch_builds_finished_total{status="cancelled"} 1' in metrics


def test_last_event_id_replays_exactly_the_missed_events(server):
    doc = server.submit({"simulate": "small-cnn", "speed": 2})
    first = SseReader(server.port, doc["events_url"])
    seen = [first.next_event() for _ in range(25)]
    first.close()
    assert_in_order(seen)
    resumed = SseReader(server.port, doc["events_url"], last_event_id=seen[-1]["id"])
    rest = resumed.read_all()
    assert rest and rest[0]["id"] > seen[-1]["id"]
    assert_in_order(seen + rest)
    assert rest[-1]["event"] == "build_finish"
    # Every event, once: the union equals the stored log.
    full = SseReader(server.port, doc["events_url"]).read_all()
    assert [e["data"] for e in full] == [e["data"] for e in seen + rest]
    # Resuming at or past the last event of a finished build (issue 36): the ending again,
    # never 204 (which would leave a reconnecting client not knowing that it ended).
    for last in (full[-1]["id"], full[-1]["id"] + 5):
        done = SseReader(server.port, doc["events_url"], last_event_id=last)
        assert done.status == 200
        assert done.read_all() == [full[-1]] and full[-1]["event"] == "build_finish"


def test_queue_beyond_max_concurrent_and_listing(tmp_path):
    s = Server(tmp_path, "--max-concurrent", "1").start()
    try:
        a = s.submit({"simulate": "large-transformer"})
        b = s.submit({"simulate": "small-cnn", "speed": 4})
        assert b["status"] == "queued"
        _, metrics, _ = s.request("GET", "/metrics")
        assert "trtwatch_builds_queued 1" in metrics and "trtwatch_builds_running 1" in metrics
        _, page, _ = s.request("GET", "/builds?limit=1")
        assert [x["id"] for x in page["builds"]] == [b["id"]]  # newest first
        _, page2, _ = s.request("GET", f"/builds?limit=1&cursor={page['next_cursor']}")
        assert [x["id"] for x in page2["builds"]] == [a["id"]]
        assert page2["next_cursor"] is None
        _, queued, _ = s.request("GET", "/builds?status=queued")
        assert [x["id"] for x in queued["builds"]] == [b["id"]]
        s.request("POST", f"/builds/{a['id']}/cancel")
        s.wait_status(b["id"], ["succeeded"])
        _, running, _ = s.request("GET", "/builds?status=running,queued")
        assert running["builds"] == []
    finally:
        s.stop()


def test_timeout_ends_timed_out(server):
    doc = server.submit({"simulate": "large-transformer", "timeout": "1s"})
    record = server.wait_status(doc["id"], ["timed_out", "failed", "cancelled"])
    assert record["status"] == "timed_out", record


def test_worker_killed_by_signal_fails_and_service_serves_on(server):
    doc = server.submit({"simulate": "large-transformer"})
    reader = SseReader(server.port, doc["events_url"])
    read_until(reader, lambda e: e["event"] == "step")
    pids = server.worker_pids()
    assert len(pids) == 1
    os.kill(pids[0], signal.SIGKILL)
    rest = reader.read_all()
    assert rest[-1]["event"] == "build_finish" and rest[-1]["data"]["status"] == "failed"
    record = server.wait_status(doc["id"], ["failed"])
    assert "signal 9" in record["error"] and "SIGKILL" in record["error"]
    assert record["exit_signal"] == 9
    status, health, _ = server.request("GET", "/healthz")
    assert status == 200 and health["status"] == "ok"
    ok = server.submit({"simulate": "small-cnn", "speed": 8})
    assert server.wait_status(ok["id"], ["succeeded", "failed"])["status"] == "succeeded"


def test_restart_keeps_records_interrupts_running_and_runs_queued(tmp_path):
    s = Server(tmp_path, "--max-concurrent", "1").start()
    done = s.submit({"simulate": "small-cnn", "speed": 8})
    finished = s.wait_status(done["id"], ["succeeded"])
    running = s.submit({"simulate": "large-transformer"})
    queued = s.submit({"simulate": "small-cnn", "speed": 8})
    s.wait_status(running["id"], ["running"])
    assert s.get(queued["id"])["status"] == "queued"
    workers = s.worker_pids()
    assert s.get(running["id"])["worker_pid"] == workers[0]
    os.kill(workers[0], signal.SIGSTOP)  # silent, as in a long phase: no SIGPIPE would end it
    s.stop(signal.SIGKILL)  # a crash: no graceful shutdown

    s2 = Server(tmp_path, "--max-concurrent", "1", name="server2").start()
    try:
        # The orphaned worker was killed on recovery (it would hold the GPU otherwise).
        deadline = time.time() + 10
        while os.path.exists(f"/proc/{workers[0]}") and time.time() < deadline:
            with open(f"/proc/{workers[0]}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break  # a zombie waiting for init to reap it: dead
            time.sleep(0.05)
        assert not os.path.exists(f"/proc/{workers[0]}") or \
            open(f"/proc/{workers[0]}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
        assert s2.get(done["id"]) == finished
        interrupted = s2.get(running["id"])
        assert interrupted["status"] == "interrupted"
        assert "interrupted" in interrupted["error"]
        events = SseReader(s2.port, running["events_url"]).read_all()
        assert events[-1]["event"] == "build_finish"
        assert s2.wait_status(queued["id"], ["succeeded", "failed"])["status"] == "succeeded"
    finally:
        s2.stop()


def test_sigterm_cancels_running_builds_and_keeps_records(tmp_path):
    s = Server(tmp_path).start()
    doc = s.submit({"simulate": "large-transformer"})
    s.wait_status(doc["id"], ["running"])
    reader = SseReader(s.port, doc["events_url"])
    read_until(reader, lambda e: e["event"] == "step")
    assert s.stop(signal.SIGTERM) == 0
    rest = reader.read_all()
    assert rest[-1]["event"] == "build_finish" and rest[-1]["data"]["status"] == "cancelled"
    s2 = Server(tmp_path, name="server2").start()
    try:
        record = s2.get(doc["id"])
        assert record["status"] == "cancelled"
        assert record["cancel"]["reason"] == "signal"
        assert record["cancel"]["message"] == "the service is shutting down"
    finally:
        s2.stop()


def test_on_shutdown_finish_lets_builds_finish(tmp_path):
    s = Server(tmp_path, "--on-shutdown", "finish").start()
    doc = s.submit({"simulate": "small-cnn", "speed": 4})
    s.wait_status(doc["id"], ["running"])
    assert s.stop(signal.SIGTERM) == 0
    s2 = Server(tmp_path, name="server2").start()
    try:
        assert s2.get(doc["id"])["status"] == "succeeded"
    finally:
        s2.stop()


def test_real_build_without_tensorrt_fails_with_the_workers_message(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "net.onnx").write_bytes(b"not really onnx")
    s = Server(tmp_path, "--model-root", str(models)).start()
    try:
        doc = s.submit({"model": "net.onnx", "options": {"fp16": True}})
        assert doc["backend"] == "tensorrt"
        assert doc["model"] == str(models.resolve() / "net.onnx")
        record = s.wait_status(doc["id"], ["failed", "succeeded"])
        if record["status"] == "failed":  # no TensorRT here: the worker's own message
            assert record["error"]
        else:
            assert record["engine"] and os.path.exists(record["engine"]["path"])
        assert not list((tmp_path / "data" / "engines").glob("*.part"))
    finally:
        s.stop()


def test_metrics_and_openapi(server):
    doc = server.submit({"simulate": "small-cnn", "speed": 8})
    server.wait_status(doc["id"], ["succeeded"])
    _, text, hdrs = server.request("GET", "/metrics")
    assert hdrs["Content-Type"].startswith("text/plain")
    for name in ["trtwatch_builds_finished_total", "trtwatch_builds_running", "trtwatch_builds_queued",
                 "trtwatch_build_duration_seconds_bucket", "trtwatch_phase_duration_seconds_count",
                 "trtwatch_sse_clients", "trtwatch_sse_events_dropped_total"]:
        assert name in text
    assert doc["id"] not in text
    assert 'trtwatch_builds_finished_total{status="succeeded"} 1' in text
    assert 'trtwatch_phase_duration_seconds_count{phase="Building engine"} 1' in text
    status, api, _ = server.request("GET", "/openapi.json")
    assert status == 200 and api["openapi"].startswith("3.1")
    for path in ["/builds", "/builds/{id}", "/builds/{id}/cancel", "/builds/{id}/events", "/metrics",
                 "/openapi.json", "/healthz"]:
        assert path in api["paths"]
    status, page, hdrs = server.request("GET", "/")
    assert status == 200 and '<script type="module" src="/ui/main.js">' in page
    assert "script-src 'self'" in hdrs["Content-Security-Policy"]
    status, script, hdrs = server.request("GET", "/ui/event_stream.js")
    assert status == 200 and hdrs["Content-Type"].startswith("text/javascript") and "EventStream" in script


NODE_DIR = pathlib.Path(__file__).parents[1] / "node"


@pytest.mark.skipif(not shutil.which("node") or not (NODE_DIR / "node_modules" / "eventsource").exists(),
                    reason="node and tests/node/node_modules (npm ci in tests/node; scripts/setup.sh does it)")
def test_real_eventsource_client_reconnects_with_last_event_id(server):
    doc = server.submit({"simulate": "small-cnn", "speed": 2})
    url = f"http://127.0.0.1:{server.port}{doc['events_url']}"
    r = subprocess.run(["node", str(NODE_DIR / "sse_reconnect.mjs"), url, "30"], capture_output=True, text=True,
                       timeout=180)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["cutDone"] and summary["finished"]
    ids = [e["id"] for e in summary["received"]]
    stored = [e["id"] for e in SseReader(server.port, doc["events_url"]).read_all()]
    assert ids == stored  # every stored event once, in order, across the reconnect
    assert all(e["seq"] == e["id"] and e["dataType"] == e["type"] for e in summary["received"])
    assert summary["received"][-1]["type"] == "build_finish"
    # First connection without Last-Event-ID, the reconnect resumed where the cut left
    # off, and after build_finish (its "retry: 86400000", WHATWG HTML's reconnection
    # time) the client asked nothing more: no reconnect loop over a finished build.
    assert summary["requests"][0] is None
    assert int(summary["requests"][1]) >= 30
    assert len(summary["requests"]) == 2, summary["requests"]
    assert server.get(doc["id"])["events"] == ids[-1]


def test_idle_stream_gets_heartbeats(tmp_path):
    s = Server(tmp_path, "--max-concurrent", "1").start()
    try:
        blocker = s.submit({"simulate": "large-transformer"})
        waiting = s.submit({"simulate": "small-cnn"})
        assert waiting["status"] == "queued"
        reader = SseReader(s.port, waiting["events_url"], timeout=40)
        assert reader.status == 200
        # A queued build sends nothing yet: within 15 s a heartbeat comment must come.
        while b": heartbeat\n\n" not in reader.buf:
            assert reader._fill(), "the stream closed without a heartbeat"
        assert b"id:" not in reader.buf
        reader.close()
        s.request("POST", f"/builds/{blocker['id']}/cancel")
    finally:
        s.stop()


def test_a_stalled_client_gets_coalesced_steps_and_slows_nobody(server):
    """A client that stops reading: its steps coalesce (counted as dropped), structural
    events all arrive once it reads again, and a reading client still gets everything."""
    import socket as socketlib
    doc = server.submit({"simulate": "large-transformer", "speed": 40})
    slow = socketlib.socket()
    slow.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_RCVBUF, 4096)  # a tiny window
    slow.connect(("127.0.0.1", server.port))
    slow.sendall(f"GET {doc['events_url']} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    fast = SseReader(server.port, doc["events_url"]).read_all()  # reads while `slow` does not
    assert fast[-1]["event"] == "build_finish"
    stored = SseReader(server.port, doc["events_url"]).read_all()
    assert [e["id"] for e in fast] == [e["id"] for e in stored]
    # Now the stalled client drains what the server kept for it.
    slow.settimeout(30)
    data = recv_all(slow)
    slow.close()
    ids, kinds = [], []
    for block in data.split(b"\r\n\r\n", 1)[1].split(b"\n\n"):
        lines = dict(line.split(": ", 1) for line in block.decode().split("\n") if ": " in line)
        if "id" in lines:
            ids.append(int(lines["id"]))
            kinds.append(lines["event"])
    assert ids == sorted(set(ids))
    structural = {"build_start", "phase_start", "phase_finish", "cancel_requested", "build_finish"}
    assert [e["id"] for e in stored if e["event"] in structural] == \
        [i for i, k in zip(ids, kinds) if k in structural]
    _, metrics, _ = server.request("GET", "/metrics")
    dropped = int(next(line.split()[1] for line in metrics.splitlines()
                       if line.startswith("trtwatch_sse_events_dropped_total ")))
    cut = int(next(line.split()[1] for line in metrics.splitlines()
                   if line.startswith("trtwatch_sse_clients_cut_off_total ")))
    assert len(ids) + dropped == len(stored) or cut == 1, (len(ids), dropped, len(stored), cut)
    assert dropped > 0 or cut == 1


def test_retention_prunes_finished_builds_with_their_logs(tmp_path):
    s = Server(tmp_path).start()
    try:
        ids = [s.submit({"simulate": "small-cnn", "speed": 20})["id"] for _ in range(3)]
        for build_id in ids:
            s.wait_status(build_id, ["succeeded"])
    finally:
        s.stop()
    s2 = Server(tmp_path, "--retain-count", "1", name="server2").start()
    try:
        assert "pruned 2 finished builds" in s2.log()
        assert s2.get(ids[2])["status"] == "succeeded"  # the newest stays, with its log
        status, _, _ = s2.request("GET", f"/builds/{ids[2]}/events")
        assert status == 200
        for old in ids[:2]:
            assert s2.request("GET", f"/builds/{old}")[0] == 404
        assert [b["id"] for b in s2.request("GET", "/builds")[1]["builds"]] == [ids[2]]
    finally:
        s2.stop()


@pytest.mark.parametrize("flag,value,message", [("--retain-for", "soon", "--retain-for"),
                                                ("--retain-for", "0", "greater than zero"),
                                                ("--retain-count", "-1", "keeps the newest N")])
def test_retention_flags_are_checked(tmp_path, flag, value, message):
    from conftest import BIN
    r = subprocess.run([BIN, "serve", "--data-dir", str(tmp_path / "d"), flag, value], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2 and message in r.stderr


def test_trace_of_a_service_build(tmp_path):
    from test_trace import check_trace
    s = Server(tmp_path).start()
    try:
        build_id = s.submit({"simulate": "small-cnn", "speed": 20})["id"]
        s.wait_status(build_id, ["succeeded"])
        status, doc, headers = s.request("GET", f"/builds/{build_id}/trace")
        assert status == 200, doc
        assert headers["Content-Disposition"] == f'attachment; filename="{build_id}.trace.json"'
        spans, names = check_trace(doc)
        assert "SIMULATED build of small-cnn" in names[("process_name", 0)]
        assert any(name == "Building engine" for lane in spans.values() for _, _, name in lane)
        assert s.request("GET", "/builds/b_" + "0" * 32 + "/trace")[0] == 404
        assert s.request("POST", f"/builds/{build_id}/trace")[0] == 405
    finally:
        s.stop()


def test_cancel_on_disconnect_cancels_when_the_follower_goes_away(tmp_path):
    s = Server(tmp_path).start()
    try:
        owned = s.submit({"simulate": "large-transformer", "speed": 2})["id"]
        watched = s.submit({"simulate": "large-transformer", "speed": 2})["id"]
        s.wait_status(owned, ["running"])
        s.wait_status(watched, ["running"])
        follower = SseReader(s.port, f"/builds/{owned}/events?cancel_on_disconnect=true")
        plain = SseReader(s.port, f"/builds/{watched}/events")
        assert follower.status == 200 and plain.status == 200
        read_until(follower, lambda e: e["event"] == "phase_start")
        read_until(plain, lambda e: e["event"] == "phase_start")
        follower.close()
        plain.close()
        record = s.wait_status(owned, ["cancelled"], timeout=60)
        assert record["cancel"]["reason"] == "api"
        assert "cancel_on_disconnect" in record["cancel"]["message"]
        assert s.get(watched)["status"] == "running"  # a plain follower leaving changes nothing
        assert s.request("GET", f"/builds/{watched}/events?cancel_on_disconnect=maybe")[0] == 400
    finally:
        s.stop()


def test_followers_on_several_io_threads_each_get_exactly_the_log_after_their_point(tmp_path):
    """Event streams run on I/O threads that the build's thread feeds: followers joining
    before the start, mid-build (replay, then live) and with Last-Event-ID, spread over
    4 threads, each receive exactly the stored log after the point they asked for, with
    no gap and no duplicate where replay meets live."""
    import threading
    s = Server(tmp_path, "--io-threads", "4").start()
    try:
        doc = s.submit({"simulate": "small-cnn", "speed": 2, "seed": 5})
        url = doc["events_url"]
        readers = [(SseReader(s.port, url), 0) for _ in range(8)]
        probe = SseReader(s.port, url)
        for _ in range(12):
            for _ in range(8):
                e = probe.next_event()
            readers.append((SseReader(s.port, url), 0))
            readers.append((SseReader(s.port, url, last_event_id=e["id"]), e["id"]))
        received = [None] * len(readers)

        def read(i):
            received[i] = readers[i][0].read_all()

        threads = [threading.Thread(target=read, args=(i,)) for i in range(len(readers))]
        for t in threads:
            t.start()
        probe.read_all()
        for t in threads:
            t.join(60)
        full = SseReader(s.port, url).read_all()  # the finished build's stored log
        assert full[-1]["event"] == "build_finish" and full[-1]["data"]["status"] == "succeeded"
        for (reader, after), got in zip(readers, received):
            assert reader.status == 200
            assert [x["data"] for x in got] == [x["data"] for x in full if x["id"] > after], after
        deadline = time.time() + 10  # the I/O threads count a stream closed just after its last byte
        while "trtwatch_sse_clients 0\n" not in s.request("GET", "/metrics")[1] and time.time() < deadline:
            time.sleep(0.05)
        assert "trtwatch_sse_clients 0\n" in s.request("GET", "/metrics")[1]
    finally:
        s.stop()
