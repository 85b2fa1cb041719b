"""Issue 23 item 4, models in and engines out: PUT /models/{name}[/{file}] streamed to
the artifact store with its digest checked, builds that name an uploaded model, and
GET /builds/{id}/engine and /timing-cache streamed back with a strong ETag, conditional
requests and byte ranges (RFC 9110 §8.8.3, §13, §14)."""
import base64
import hashlib
import http.client
import json
import os
import socket
import subprocess
import threading
import time

import pytest

import service_client
from service_client import Server, exchange, rss_kib

DOUBLE_BIN = os.environ.get("TRTWATCH_DOUBLE_BIN")
FAKE_TENSORRT_DIR = os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR")
needs_double = pytest.mark.skipif(not DOUBLE_BIN, reason="built without TRTWATCH_TENSORRT_DOUBLE_TESTS")
MiB = 1024 * 1024


def http_request(port, method, path, body=None, headers=None):
    """Returns (status, body bytes, headers dict)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path, body=body, headers=headers or {})
    res = conn.getresponse()
    data = res.read()
    hdrs = dict(res.getheaders())
    conn.close()
    return res.status, data, hdrs


def put(server, path, data, headers=None):
    status, body, hdrs = http_request(server.port, "PUT", path, data, headers)
    return status, json.loads(body) if body else None, hdrs


def get_json(server, path):
    status, body, _ = http_request(server.port, "GET", path)
    return status, json.loads(body) if body else None


def pattern(size):
    """Bytes that differ at every offset that matters to a shifted copy."""
    block = bytes((i * 7 + i // 251) & 0xFF for i in range(65536))
    return (block * (size // len(block) + 1))[:size]


@pytest.fixture
def engine_server(tmp_path, monkeypatch):
    """A service on the TensorRT-enabled binary built against the test double: real
    builds that store an engine (FAKE_TENSORRT_ENGINE_BYTES long)."""
    if not DOUBLE_BIN:
        pytest.skip("built without TRTWATCH_TENSORRT_DOUBLE_TESTS")
    monkeypatch.setattr(service_client, "BIN", DOUBLE_BIN)
    monkeypatch.setenv("LD_LIBRARY_PATH", FAKE_TENSORRT_DIR)
    monkeypatch.setenv("FAKE_TENSORRT_ENGINE_BYTES", str(3 * MiB + 17))
    servers = []

    def start(*extra):
        s = Server(tmp_path, *extra, name=f"server{len(servers)}").start()
        servers.append(s)
        return s
    yield start
    for s in servers:
        s.stop()


def build_uploaded(server, options=None):
    status, doc, _ = put(server, "/models/net", b"onnx bytes")
    assert status == 201, doc
    build = server.submit({"model": "models:net", "options": options or {"fp16": True}})
    record = server.wait_status(build["id"], ["succeeded", "failed"])
    assert record["status"] == "succeeded", record
    return record


# --- Engines out -------------------------------------------------------------------------

def test_engine_download_whole_with_strong_etag_and_head(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    engine = record["engine"]
    on_disk = open(engine["path"], "rb").read()
    assert engine["size"] == len(on_disk) == 3 * MiB + 17 == record["engine_bytes"]
    assert engine["sha256"] == hashlib.sha256(on_disk).hexdigest()
    assert engine["url"] == f"/builds/{record['id']}/engine"
    status, body, hdrs = http_request(s.port, "GET", engine["url"])
    assert status == 200 and body == on_disk
    assert hdrs["Content-Type"] == "application/octet-stream"
    assert hdrs["Content-Length"] == str(len(on_disk))
    assert hdrs["Content-Disposition"] == f'attachment; filename="{record["id"]}.engine"'
    assert hdrs["ETag"] == f'"{engine["sha256"]}"'  # strong: no W/ (RFC 9110 §8.8.3)
    assert hdrs["Accept-Ranges"] == "bytes"
    # HEAD is GET without the body (RFC 9110 §9.3.2).
    status, body, head = http_request(s.port, "HEAD", engine["url"])
    assert status == 200 and body == b""
    assert {k: head[k] for k in ("Content-Length", "ETag", "Content-Type")} == \
        {k: hdrs[k] for k in ("Content-Length", "ETag", "Content-Type")}
    # The digest is kept in a sidecar: no rehash per request.
    assert os.path.exists(os.path.join(os.path.dirname(engine["path"]), f".{record['id']}.engine.sha256"))


def test_if_none_match_gives_304_by_the_weak_comparison_rfc9110_13_1_2(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    url, etag = record["engine"]["url"], f'"{record["engine"]["sha256"]}"'
    for value in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        for method in ("GET", "HEAD"):
            status, body, hdrs = http_request(s.port, method, url, headers={"If-None-Match": value})
            assert status == 304 and body == b"" and hdrs["ETag"] == etag, value
    status, body, _ = http_request(s.port, "GET", url, headers={"If-None-Match": '"other"'})
    assert status == 200 and len(body) == record["engine"]["size"]


def test_single_ranges_give_206_with_content_range_rfc9110_14(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    url, size = record["engine"]["url"], record["engine"]["size"]
    whole = open(record["engine"]["path"], "rb").read()
    cases = {"bytes=0-99": (0, 99), "bytes=-100": (size - 100, size - 1), f"bytes={size - 10}-": (size - 10, size - 1),
             f"bytes=5-{size + 1000}": (5, size - 1), "bytes=1048576-2097151": (MiB, 2 * MiB - 1)}
    for value, (first, last) in cases.items():
        status, body, hdrs = http_request(s.port, "GET", url, headers={"Range": value})
        assert status == 206, value
        assert hdrs["Content-Range"] == f"bytes {first}-{last}/{size}", value
        assert hdrs["Content-Length"] == str(last - first + 1)
        assert body == whole[first:last + 1], value
    # If-Range with the same strong tag lets the range through; any other sends the whole (§13.1.5).
    etag = f'"{record["engine"]["sha256"]}"'
    status, body, _ = http_request(s.port, "GET", url, headers={"Range": "bytes=0-9", "If-Range": etag})
    assert status == 206 and body == whole[:10]
    status, body, _ = http_request(s.port, "GET", url, headers={"Range": "bytes=0-9", "If-Range": '"stale"'})
    assert status == 200 and body == whole


def test_unsatisfiable_range_is_416_with_the_length_rfc9110_15_5_17(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    size = record["engine"]["size"]
    for value in (f"bytes={size}-", f"bytes={size + 5}-{size + 10}", "bytes=-0"):
        status, body, hdrs = http_request(s.port, "GET", record["engine"]["url"], headers={"Range": value})
        assert status == 416, value
        assert hdrs["Content-Range"] == f"bytes */{size}"
        assert "outside" in json.loads(body)["error"]


def test_a_three_part_range_is_answered_whole_rfc9110_14_2(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    whole = open(record["engine"]["path"], "rb").read()
    status, body, hdrs = http_request(s.port, "GET", record["engine"]["url"],
                                      headers={"Range": "bytes=0-9,100-199,-5"})
    assert status == 200 and body == whole and "Content-Range" not in hdrs
    # An invalid range set, or another unit, is ignored too (§14.2).
    for value in ("bytes=9-1", "items=0-1"):
        status, body, _ = http_request(s.port, "GET", record["engine"]["url"], headers={"Range": value})
        assert status == 200 and body == whole, value


def test_timing_cache_download_is_a_copy_taken_when_the_build_ended(engine_server):
    s = engine_server()
    record = build_uploaded(s, {"timing-cache": "shared.cache"})
    cache = record["timing_cache"]
    assert cache and cache["url"] == f"/builds/{record['id']}/timing-cache"
    status, body, hdrs = http_request(s.port, "GET", cache["url"])
    assert status == 200 and len(body) == cache["size"] > 0
    assert hashlib.sha256(body).hexdigest() == cache["sha256"] and hdrs["ETag"] == f'"{cache["sha256"]}"'
    assert hdrs["Content-Disposition"] == f'attachment; filename="{record["id"]}.timing-cache"'
    assert body == open(os.path.join(s.data_dir, "caches", "shared.cache"), "rb").read()
    # Without a timing-cache option there is none: 404 naming why.
    plain = build_uploaded(s)
    status, body, _ = http_request(s.port, "GET", f"/builds/{plain['id']}/timing-cache")
    assert status == 404 and "timing-cache" in json.loads(body)["error"]


def test_no_engine_is_404_naming_why_and_a_running_build_409(tmp_path):
    s = Server(tmp_path).start()
    try:
        sim = s.submit({"simulate": "small-cnn", "speed": 50})
        s.wait_status(sim["id"], ["succeeded"])
        status, body, _ = http_request(s.port, "GET", f"/builds/{sim['id']}/engine")
        assert status == 404 and "simulated" in json.loads(body)["error"]
        status, body, _ = http_request(s.port, "HEAD", f"/builds/{sim['id']}/engine")
        assert status == 404 and body == b""
        for bad in ("b_" + "0" * 32, "nope"):
            status, body, _ = http_request(s.port, "GET", f"/builds/{bad}/engine")
            assert status == 404 and "no build" in json.loads(body)["error"]
        slow = s.submit({"simulate": "large-transformer", "speed": 0.5})
        s.wait_status(slow["id"], ["running"])
        status, body, _ = http_request(s.port, "GET", f"/builds/{slow['id']}/engine")
        assert status == 409 and "still running" in json.loads(body)["error"]
        status, _, hdrs = http_request(s.port, "POST", f"/builds/{sim['id']}/engine")
        assert status == 405 and hdrs["Allow"] == "GET, HEAD"
    finally:
        s.stop()


def test_failed_and_removed_engines_are_404(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    os.remove(record["engine"]["path"])
    status, body, _ = http_request(s.port, "GET", record["engine"]["url"])
    assert status == 404 and "no longer stored" in json.loads(body)["error"]
    # Without a cache file (no fleet cache either) the option is refused by the worker: the build fails.
    failed = s.submit({"model": "models:net", "options": {"timing-cache-ignore-mismatch": True}, "timing_cache": False},
                      expect=201)
    done = s.wait_status(failed["id"], ["succeeded", "failed"])
    assert done["status"] == "failed"
    status, body, _ = http_request(s.port, "GET", f"/builds/{failed['id']}/engine")
    assert status == 404 and "ended failed" in json.loads(body)["error"]


# --- Models in ---------------------------------------------------------------------------

def test_upload_list_describe_build_and_delete(tmp_path):
    s = Server(tmp_path).start()
    try:
        status, doc, hdrs = put(s, "/models/net", b"onnx")
        assert status == 201 and hdrs["Location"] == "/models/net"
        assert doc == {"name": "net", "complete": True, "url": "/models/net", "uploaded_by": None,
                       "files": [{"name": "model.onnx", "size": 4, "sha256": hashlib.sha256(b"onnx").hexdigest()}]}
        status, doc, _ = put(s, "/models/net/net.data", b"weights")
        assert status == 201 and [f["name"] for f in doc["files"]] == ["model.onnx", "net.data"]
        folder = tmp_path / "data" / "artifacts" / "models" / "net"
        assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == ["model.onnx", "net.data"]
        status, listing = get_json(s, "/models")
        assert status == 200 and [m["name"] for m in listing["models"]] == ["net"]
        status, doc = get_json(s, "/models/net")
        assert status == 200 and doc["complete"] and len(doc["files"]) == 2
        # A build names it; no TensorRT in this binary, but the path resolved to the upload.
        build = s.submit({"model": "models:net"})
        assert build["model"] == str(folder / "model.onnx")
        status, doc, _ = put(s, "/models/net", b"onnx v2")  # replaced whole
        assert status == 201 and doc["files"][0]["size"] == 7
        status, _, _ = http_request(s.port, "DELETE", "/models/net")
        assert status == 204 and not folder.exists()
        assert get_json(s, "/models/net")[0] == 404
        assert http_request(s.port, "DELETE", "/models/net")[0] == 404
        status, doc = s.request("POST", "/builds", {"model": "models:net"})[:2]
        assert status == 400 and "PUT /models/net" in doc["error"]
        status, doc = s.request("POST", "/builds", {"model": "models:../x"})[:2]
        assert status == 400 and "A-Z a-z 0-9" in doc["error"]
    finally:
        s.stop()


def test_names_are_confined_with_400_naming_the_rule(tmp_path):
    s = Server(tmp_path).start()
    try:
        for path in ("/models/.hidden", "/models/..", "/models/a%2Fb", "/models/a%00", "/models/" + "a" * 129,
                     "/models/net/..", "/models/net/.x", "/models/net/a%20b"):
            status, body = service_client.raw_request(
                s.port, f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc".encode())
            assert status == 400, path
            assert "A-Z a-z 0-9 . _ -" in json.loads(body)["error"], path
        assert not any((tmp_path / "data" / "artifacts" / "models").iterdir())
    finally:
        s.stop()


def test_digest_headers_are_checked_and_a_mismatch_stores_nothing_rfc9530(tmp_path):
    s = Server(tmp_path).start()
    try:
        data = pattern(100_000)
        digest = hashlib.sha256(data).digest()
        good = {"Content-Digest": "sha-256=:" + base64.b64encode(digest).decode() + ":"}
        assert put(s, "/models/ok", data, good)[0] == 201
        assert put(s, "/models/hex", data, {"X-Content-SHA256": digest.hex()})[0] == 201
        bad = {"Content-Digest": "sha-256=:" + base64.b64encode(hashlib.sha256(b"x").digest()).decode() + ":"}
        status, doc, _ = put(s, "/models/bad", data, bad)
        assert status == 400 and "nothing was stored" in doc["error"]
        status, doc, _ = put(s, "/models/bad", data, {"X-Content-SHA256": "0" * 64})
        assert status == 400 and "nothing was stored" in doc["error"]
        assert get_json(s, "/models/bad")[0] == 404  # a failed first upload leaves no model
        status, doc, _ = put(s, "/models/bad", data, {"Content-Digest": "sha-256=nope"})
        assert status == 400 and "RFC 9530" in doc["error"]
        # An earlier upload stays whole when a replacement's digest is wrong.
        status, doc, _ = put(s, "/models/ok", b"other", bad)
        assert status == 400 and get_json(s, "/models/ok")[1]["files"][0]["size"] == len(data)
    finally:
        s.stop()


def test_size_limit_413_before_the_body_and_when_a_chunked_body_goes_over(tmp_path):
    s = Server(tmp_path, "--max-upload-size", "1M").start()
    try:
        # Content-Length over the limit: refused on the head alone, the body never sent.
        statuses, data, closed = exchange(
            s.port, f"PUT /models/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {2 * MiB}\r\n\r\n".encode(), timeout=5)
        assert statuses == [413] and b"--max-upload-size" in data and closed
        # Chunked: cut off once it passes the limit.
        chunk = b"a" * 65536
        body = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(20)) + b"0\r\n\r\n"
        statuses, data, closed = exchange(
            s.port, b"PUT /models/big HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" + body, timeout=5)
        assert statuses == [413] and closed
        assert get_json(s, "/models/big")[0] == 404
        folder = tmp_path / "data" / "artifacts" / "models" / "big"
        assert not folder.exists()  # no temporary file left either, nor an empty model
        # JSON routes keep their 64 KiB limit.
        status, doc = s.request("POST", "/builds", raw="x" * (65 * 1024))[:2]
        assert status == 413
        # Within the limit, chunked is fine.
        small = b"".join(b"%x\r\n" % len(chunk) + chunk + b"\r\n" for _ in range(4)) + b"0\r\n\r\n"
        statuses, data, _ = exchange(
            s.port, b"PUT /models/small HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + small, timeout=5)
        assert statuses == [201] and get_json(s, "/models/small")[1]["files"][0]["size"] == 4 * 65536
    finally:
        s.stop()


def test_uploads_need_the_token_and_pass_the_browser_checks(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("t" * 32 + "\n")
    os.chmod(token_file, 0o600)
    s = Server(tmp_path, "--token-file", str(token_file)).start()
    try:
        assert put(s, "/models/net", b"onnx")[0] == 401
        auth = {"Authorization": "Bearer " + "t" * 32}
        assert put(s, "/models/net", b"onnx", {**auth, "Origin": "http://evil.example"})[0] == 403
        assert put(s, "/models/net", b"onnx", auth)[0] == 201
        assert http_request(s.port, "GET", "/models")[0] == 401
        assert http_request(s.port, "DELETE", "/models/net")[0] == 401
        assert http_request(s.port, "GET", "/builds/b_" + "0" * 32 + "/engine")[0] == 401
    finally:
        s.stop()


def test_a_client_that_goes_away_mid_upload_leaves_nothing(tmp_path):
    s = Server(tmp_path).start()
    try:
        with socket.create_connection(("127.0.0.1", s.port)) as sock:
            sock.sendall(b"PUT /models/cut HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n" + b"a" * 100_000)
            time.sleep(0.3)
        time.sleep(0.3)
        folder = tmp_path / "data" / "artifacts" / "models" / "cut"
        assert not folder.exists()
        assert get_json(s, "/models")[1] == {"models": []}  # no empty model listed
    finally:
        s.stop()


@pytest.fixture
def tiny_disk(tmp_path):
    """A 1 MiB tmpfs (a real full disk: ENOSPC from write(2)); needs root to mount."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_an_upload_that_fills_the_disk_is_507_without_server_paths_rfc4918_11_5(tmp_path, tiny_disk):
    s = Server(tmp_path, "--artifact-dir", str(tiny_disk / "artifacts")).start()
    try:
        for path in ("/models/big", "/models/small/weights.bin"):
            status, doc, _ = put(s, path, pattern(3 * MiB))
            assert status == 507, (status, doc)  # RFC 4918 §11.5 Insufficient Storage, not 500
            error = doc["error"]
            # What happened and the fix, but none of the server's paths.
            assert "disk is full" in error and "nothing was stored" in error and "--artifact-dir" in error, error
            assert str(tmp_path) not in error and "/" + "tiny" not in error and ".trtwatch-" not in error, error
        assert "No space left on device" in s.log()  # the details go to the service's log
        # Nothing listed, nothing left on the disk: the space is free again for an upload that fits.
        assert get_json(s, "/models")[1] == {"models": []}
        assert get_json(s, "/models/big")[0] == 404
        assert not list((tiny_disk / "artifacts" / "models").iterdir())
        status, doc, _ = put(s, "/models/big", pattern(200_000))
        assert status == 201 and doc["complete"], doc
    finally:
        s.stop()


def test_a_temporary_upload_file_of_a_killed_service_is_removed_at_its_next_start(tmp_path):
    s = Server(tmp_path).start()
    models = tmp_path / "data" / "artifacts" / "models"
    try:
        status, _, _ = put(s, "/models/kept", b"onnx")
        assert status == 201
        with socket.create_connection(("127.0.0.1", s.port)) as sock:
            sock.sendall(b"PUT /models/cut HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n" +
                         b"a" * 300_000)
            deadline = time.time() + 10
            while not list((models / "cut").glob(".model.onnx.trtwatch-*")) and time.time() < deadline:
                time.sleep(0.02)
            left = list((models / "cut").glob(".model.onnx.trtwatch-*"))
            assert len(left) == 1, list((models / "cut").iterdir())
            s.proc.kill()  # kill -9 mid-upload: its temporary file stays behind
            s.proc.wait(timeout=10)
        assert left[0].exists()
        s = Server(tmp_path).start()  # the same data dir
        assert not left[0].exists() and not (models / "cut").exists()
        assert "removed 1 unfinished upload" in s.log(), s.log()[-2000:]
        assert [m["name"] for m in get_json(s, "/models")[1]["models"]] == ["kept"]
    finally:
        s.stop()


# --- Memory stays flat: streamed both ways ------------------------------------------------

class RssWatch:
    """Samples a process's VmRSS every 10 ms; `peak` is the highest seen."""

    def __init__(self, pid):
        self.pid, self.peak, self.running = pid, rss_kib(pid), True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            self.peak = max(self.peak, rss_kib(self.pid))
            time.sleep(0.01)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak


def test_50_mib_upload_and_download_byte_for_byte_with_flat_rss(engine_server, monkeypatch):
    monkeypatch.setenv("FAKE_TENSORRT_ENGINE_BYTES", str(50 * MiB))
    s = engine_server()
    data = pattern(50 * MiB)
    before = rss_kib(s.proc.pid)
    watch = RssWatch(s.proc.pid)
    status, doc, _ = put(s, "/models/big", data, {"X-Content-SHA256": hashlib.sha256(data).hexdigest()})
    upload_peak = watch.stop()
    assert status == 201 and doc["files"][0]["size"] == len(data)
    stored = os.path.join(s.data_dir, "artifacts", "models", "big", "model.onnx")
    assert open(stored, "rb").read() == data
    build = s.submit({"model": "models:big"})
    record = s.wait_status(build["id"], ["succeeded", "failed"])
    assert record["status"] == "succeeded", record
    engine = open(record["engine"]["path"], "rb").read()
    assert len(engine) == 50 * MiB
    watch = RssWatch(s.proc.pid)
    status, body, _ = http_request(s.port, "GET", record["engine"]["url"])
    download_peak = watch.stop()
    assert status == 200 and body == engine
    # Bounded chunks: neither transfer brings the file into the service's memory. Under a
    # sanitizer RSS says nothing about that: AddressSanitizer keeps freed chunks in its
    # quarantine (256 MiB by default), so only the release build asserts it.
    if not os.environ.get("TRTWATCH_SANITIZE"):
        assert upload_peak - before < 16 * 1024, (before, upload_peak)
        assert download_peak - before < 16 * 1024, (before, download_peak)


def repr_digest(data):
    """sha-256=:BASE64: of `data` (RFC 9530 §3; a Structured Fields byte sequence, RFC 8941 §3.3.5)."""
    return "sha-256=:" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


def test_downloads_carry_repr_digest_of_the_whole_file_rfc9530_3(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    url, whole = record["engine"]["url"], open(record["engine"]["path"], "rb").read()
    expected = repr_digest(whole)
    etag = f'"{hashlib.sha256(whole).hexdigest()}"'
    status, body, hdrs = http_request(s.port, "GET", url)
    assert status == 200 and body == whole and hdrs["Repr-Digest"] == expected and hdrs["ETag"] == etag
    # HEAD (RFC 9110 §9.3.2) and a 304 (§15.4.5) carry the same digest.
    assert http_request(s.port, "HEAD", url)[2]["Repr-Digest"] == expected
    status, _, hdrs = http_request(s.port, "GET", url, headers={"If-None-Match": etag})
    assert status == 304 and hdrs["Repr-Digest"] == expected
    # A 206 keeps the whole representation's digest, not the part's (RFC 9530 §3).
    status, body, hdrs = http_request(s.port, "GET", url, headers={"Range": "bytes=0-99"})
    assert status == 206 and body == whole[:100] and hdrs["Repr-Digest"] == expected
    assert "Content-Digest" not in hdrs


def test_want_repr_digest_is_honoured_rfc9530_4(engine_server):
    s = engine_server()
    record = build_uploaded(s)
    url = record["engine"]["url"]
    expected = repr_digest(open(record["engine"]["path"], "rb").read())
    # Asked for sha-256, or for algorithms the service does not have: sha-256 is sent.
    for want in ("sha-256=10", "sha-512=3, sha-256=1", "sha-512=10", "garbage"):
        assert http_request(s.port, "GET", url, headers={"Want-Repr-Digest": want})[2]["Repr-Digest"] == expected, want
    # sha-256 "not acceptable" (weight 0): none is sent.
    hdrs = http_request(s.port, "GET", url, headers={"Want-Repr-Digest": "sha-256=0, sha-512=5"})[2]
    assert "Repr-Digest" not in hdrs


def test_timing_cache_and_uploaded_model_files_download_with_their_digest_rfc9530_3(engine_server):
    s = engine_server()
    record = build_uploaded(s, {"timing-cache": "shared.cache"})
    status, body, hdrs = http_request(s.port, "GET", record["timing_cache"]["url"])
    assert status == 200 and hdrs["Repr-Digest"] == repr_digest(body)
    data = pattern(MiB + 3)
    assert put(s, "/models/big/big.data", data)[0] == 201
    status, body, hdrs = http_request(s.port, "GET", "/models/big/big.data")
    assert status == 200 and body == data
    assert hdrs["Repr-Digest"] == repr_digest(data) and hdrs["ETag"] == f'"{hashlib.sha256(data).hexdigest()}"'
    assert hdrs["Content-Disposition"] == 'attachment; filename="big.data"'
    status, body, hdrs = http_request(s.port, "GET", "/models/big/big.data", headers={"Range": "bytes=10-19"})
    assert status == 206 and body == data[10:20] and hdrs["Repr-Digest"] == repr_digest(data)
    assert http_request(s.port, "GET", "/models/big/other.data")[0] == 404
    assert http_request(s.port, "GET", "/models/none/model.onnx")[0] == 404
    # The store's own dotfiles (digest sidecars) are not files of the model.
    assert http_request(s.port, "GET", "/models/big/.big.data.sha256")[0] == 400
