"""`trtwatch serve` refuses bad input with a JSON error and changes nothing."""
import json
import os
import socket
import subprocess

import pytest

from conftest import BIN
from service_client import Server, SseReader


@pytest.fixture
def models(tmp_path):
    root = tmp_path / "models"
    root.mkdir()
    (root / "net.onnx").write_bytes(b"x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.onnx").write_bytes(b"x")
    (root / "escape.onnx").symlink_to(outside / "secret.onnx")
    (root / "dirlink").symlink_to(outside)
    return root


@pytest.fixture
def server(tmp_path, models):
    s = Server(tmp_path, "--model-root", str(models), "--max-concurrent", "1", "--queue-limit", "1").start()
    yield s
    s.stop()


def snapshot(server):
    _, page, _ = server.request("GET", "/builds?limit=200")
    return [(b["id"], b["status"]) for b in page["builds"]]


def assert_error(status, body, expected_status, words):
    assert status == expected_status, (status, body)
    assert isinstance(body, dict) and isinstance(body.get("error"), str), body
    for w in words:
        assert w in body["error"], body["error"]


BAD_SUBMISSIONS = [
    ("not json", ["JSON object"]),
    ("[1, 2]", ["JSON object"]),
    (json.dumps({}), ["exactly one"]),
    (json.dumps({"simulate": "small-cnn", "model": "net.onnx"}), ["exactly one"]),
    (json.dumps({"simulate": "no-such-profile"}), ["unknown simulation profile", "small-cnn"]),
    (json.dumps({"simulate": "/etc/passwd"}), ["unknown simulation profile"]),
    (json.dumps({"simulate": "small-cnn", "speed": 0}), ["speed"]),
    (json.dumps({"simulate": "small-cnn", "speed": "fast"}), ["speed"]),
    (json.dumps({"simulate": "small-cnn", "seed": -1}), ["seed"]),
    (json.dumps({"simulate": "small-cnn", "timeout": "soon"}), ["timeout"]),
    (json.dumps({"simulate": "small-cnn", "colour": "red"}), ["unknown field \"colour\""]),
    (json.dumps({"simulate": "small-cnn", "options": {"fp16": True}}), ["real builds only"]),
    (json.dumps({"model": "net.onnx", "options": {"progress": "tty"}}), ["unknown option \"progress\""]),
    (json.dumps({"model": "net.onnx", "options": {"onnx": "/etc/shadow"}}), ["unknown option \"onnx\""]),
    (json.dumps({"model": "net.onnx", "options": {"timing-cache": "/tmp/c"}}), ["outside every model root"]),
    (json.dumps({"model": "net.onnx", "options": {"timing-cache": "/" + "é" * 2040 + "xy/c"}}), ["longer than 1024 bytes"]),
    (json.dumps({"model": "net.onnx", "options": {"workspace": "--evil"}}), ["starts with '-'"]),
    (json.dumps({"model": "net.onnx", "options": {"x": [1]}}), ["unknown option \"x\""]),
    (json.dumps({"model": "net.onnx", "options": {"maxThreads": [1]}}), ["string or number"]),
    (json.dumps({"model": "../outside/secret.onnx"}), [".."]),
    (json.dumps({"model": "sub/../../outside/secret.onnx"}), [".."]),
    (json.dumps({"model": "/etc/passwd"}), ["outside every model root"]),
    (json.dumps({"model": "escape.onnx"}), ["outside every model root"]),
    (json.dumps({"model": "dirlink/secret.onnx"}), ["outside every model root"]),
    (json.dumps({"model": "missing.onnx"}), ["not found"]),
    (json.dumps({"model": 7}), ["path string"]),
]


@pytest.mark.parametrize("body,words", BAD_SUBMISSIONS)
def test_bad_submission_is_refused_and_changes_nothing(server, tmp_path, body, words):
    before = snapshot(server)
    status, doc, _ = server.request("POST", "/builds", raw=body, headers={"Content-Type": "application/json"})
    assert_error(status, doc, 400, words)
    assert snapshot(server) == before
    assert not list((tmp_path / "data" / "engines").iterdir())


def test_body_too_large_is_413(server):
    before = snapshot(server)
    body = json.dumps({"simulate": "small-cnn", "pad": "x" * 100_000})
    status, doc, _ = server.request("POST", "/builds", raw=body)
    assert_error(status, doc, 413, ["larger than"])
    assert snapshot(server) == before


def test_queue_limit_is_429(server):
    a = server.submit({"simulate": "large-transformer"})  # runs (max-concurrent 1)
    b = server.submit({"simulate": "large-transformer"})  # waits (queue-limit 1)
    assert b["status"] == "queued"
    before = snapshot(server)
    status, doc, _ = server.request("POST", "/builds", {"simulate": "small-cnn"})
    assert_error(status, doc, 429, ["queue is full"])
    assert snapshot(server) == before
    # A queued build cancels at once; then there is room again.
    status, cancelled, _ = server.request("POST", f"/builds/{b['id']}/cancel")
    assert status == 202 and cancelled["status"] == "cancelled"
    server.request("POST", f"/builds/{a['id']}/cancel")


def test_unknown_ids_paths_methods_and_finished_cancel(server):
    before = snapshot(server)
    missing = "b_" + "0" * 32
    for path in [f"/builds/{missing}", "/builds/nope", f"/builds/{missing}/events", "/nope",
                 f"/builds/{missing}/other"]:
        status, doc, _ = server.request("GET", path)
        assert_error(status, doc, 404, ["no "])
    status, doc, _ = server.request("POST", f"/builds/{missing}/cancel")
    assert_error(status, doc, 404, ["no build"])
    status, doc, hdrs = server.request("DELETE", "/builds")
    assert_error(status, doc, 405, ["GET, POST"])
    assert hdrs["Allow"] == "GET, POST"
    status, doc, _ = server.request("GET", f"/builds/{missing}/cancel")
    assert_error(status, doc, 405, ["POST"])
    for query in ["status=bogus", "limit=0", "limit=x", "cursor=-3", "colour=red"]:
        status, doc, _ = server.request("GET", f"/builds?{query}")
        assert_error(status, doc, 400, [])
    done = server.submit({"simulate": "small-cnn", "speed": 8})
    server.wait_status(done["id"], ["succeeded"])
    after_build = snapshot(server)
    status, doc, _ = server.request("POST", f"/builds/{done['id']}/cancel")
    assert_error(status, doc, 409, ["already finished"])
    reader = SseReader(server.port, done["events_url"], last_event_id="abc")
    assert reader.status == 400
    assert snapshot(server) == after_build
    assert len(after_build) == len(before) + 1


def test_malformed_http_is_400(server):
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(b"NONSENSE\r\n\r\n")
        reply = s.recv(4096).decode()
    assert reply.startswith("HTTP/1.1 400")


def test_keep_alive_serves_several_requests_on_one_connection(server):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for _ in range(3):
        conn.request("GET", "/healthz")
        res = conn.getresponse()
        assert res.status == 200
        res.read()
    conn.close()


def test_token_is_required_when_configured(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("0123456789abcdef0123456789abcdef\n")
    token_file.chmod(0o600)
    s = Server(tmp_path, "--token-file", str(token_file)).start()
    try:
        before = snapshot_with(s, "0123456789abcdef0123456789abcdef")
        for headers in [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic abc"},
                        {"Authorization": "Bearer 0123456789abcdef0123456789abcdeX"}]:
            status, doc, hdrs = s.request("POST", "/builds", {"simulate": "small-cnn"}, headers=headers)
            assert_error(status, doc, 401, ["bearer token"])
            assert hdrs["WWW-Authenticate"] == "Bearer"
            status, _, _ = s.request("GET", "/builds", headers=headers)
            assert status == 401
        assert SseReader(s.port, f"/builds/b_{'0' * 32}/events").status == 401
        assert snapshot_with(s, "0123456789abcdef0123456789abcdef") == before
        status, _, _ = s.request("GET", "/healthz")
        assert status == 200
        auth = {"Authorization": "Bearer 0123456789abcdef0123456789abcdef"}
        status, doc, _ = s.request("POST", "/builds", {"simulate": "small-cnn", "speed": 8}, headers=auth)
        assert status == 201
    finally:
        s.stop()


def snapshot_with(server, token):
    _, page, _ = server.request("GET", "/builds?limit=200", headers={"Authorization": f"Bearer {token}"})
    return [(b["id"], b["status"]) for b in page["builds"]]


@pytest.mark.parametrize("args,words", [
    (["--listen", "0.0.0.0:0"], ["needs credentials", "--users", "--token-file"]),
    (["--listen", "nonsense"], ["HOST:PORT"]),
    (["--listen", "127.0.0.1:99999"], ["HOST:PORT"]),
    (["--model-root", "/no/such/folder"], ["--model-root", "not an existing folder"]),
    (["--max-concurrent", "0"], ["--max-concurrent"]),
    (["--on-shutdown", "later"], ["--on-shutdown"]),
    (["--token-file", "/no/such/token"], ["--token-file"]),
])
def test_bad_server_options_exit_2_with_a_message(tmp_path, args, words):
    r = subprocess.run([BIN, "serve", "--data-dir", str(tmp_path / "d"), *args], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2, r.stderr
    for w in words:
        assert w in r.stderr


def test_short_token_is_refused(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("short")
    token_file.chmod(0o600)
    r = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--token-file", str(token_file), "--data-dir",
                        str(tmp_path / "d")], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "at least 16" in r.stderr


@pytest.mark.skipif(not os.environ.get("TRTWATCH_FAKE_DRIVER_DIR"), reason="needs the CUDA driver stand-in")
def test_a_build_asking_for_a_gpu_this_host_lacks_is_refused_naming_the_hosts_gpus(tmp_path, monkeypatch):
    # The CUDA driver stand-in: "Fake GPU H" (9.0) and "Fake GPU A" (8.0).
    monkeypatch.setenv("LD_LIBRARY_PATH", os.environ["TRTWATCH_FAKE_DRIVER_DIR"])
    s = Server(tmp_path, "--gpu-type", "h200=gres:h200,cc=9.0").start()
    try:
        quick = {"simulate": "small-cnn", "speed": 50}
        for need in ({"type": "h200"}, {"compute_capability": "8.0"}):
            doc = s.submit(dict(quick, gpu=need))
            assert s.wait_status(doc["id"], {"succeeded", "failed"}, timeout=30)["status"] == "succeeded"
        status, body, _ = s.request("POST", "/builds", dict(quick, gpu={"compute_capability": "7.5"}))
        assert status == 400, body
        assert body["error"].startswith("this host has no GPU of compute capability 7.5; its GPUs: "
                                        "0: Fake GPU H (9.0), 1: Fake GPU A (8.0)"), body
        status, body, _ = s.request("POST", "/builds", dict(quick, gpu={"type": "h200", "count": 2}))
        assert status == 400 and "\"gpu\" must be an object with one of" in body["error"], body
        status, body, _ = s.request("GET", "/builds")
        assert len(body["builds"]) == 2  # nothing refused was recorded
    finally:
        s.stop()


def test_a_wrong_gpu_type_flag_stops_serve_with_the_rule(tmp_path):
    res = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"),
                          "--gpu-type", "h200"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2, res
    assert "--gpu-type \"h200\"" in res.stderr and "h200=gres:h200,cc=9.0" in res.stderr, res.stderr
