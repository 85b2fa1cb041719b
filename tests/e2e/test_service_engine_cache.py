"""The engine cache through the real service (docs/api.md, the record's `cache`): a
second identical request reuses the engine without a builder and its record says hit,
identical requests at once build once, `"cache": false` builds again, MCP's results
carry the cache's answer, and two replicas sharing one data dir and one PostgreSQL
build once. Real builds on the trtwatch built against the TensorRT double (its
stand-in libraries write engine bytes; the stand-in driver names the GPU, part of the
build key)."""
import json
import os
import re

import pytest

import service_client
import test_mcp_stdio
from conftest import SOURCE_DIR
from pg_server import pg  # noqa: F401  (the fixture)
from service_client import Server, SseReader
from test_engine_cache import write_model
from waiting import wait_for

DOUBLE_BIN = os.environ.get("TRTWATCH_DOUBLE_BIN")
FAKE_TENSORRT_DIR = os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR")
FAKE_DRIVER_DIR = os.environ.get("TRTWATCH_FAKE_DRIVER_DIR")
pytestmark = pytest.mark.skipif(not DOUBLE_BIN, reason="built without TRTWATCH_TENSORRT_DOUBLE_TESTS")

KEY = re.compile(r"^[0-9a-f]{64}$")
STEP_MS = "10"  # a pause per builder step (75 of them in a row): two builds started together overlap


@pytest.fixture
def double(monkeypatch):
    """Services and MCP servers on the TensorRT double's binary, with its libraries."""
    monkeypatch.setattr(service_client, "BIN", DOUBLE_BIN)
    monkeypatch.setattr(test_mcp_stdio, "BIN", DOUBLE_BIN)
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{FAKE_TENSORRT_DIR}:{FAKE_DRIVER_DIR}")
    for name in ("CUDA_VISIBLE_DEVICES", "TRTWATCH_ENGINE_CACHE", "TRTWATCH_PROGRESS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def model(tmp_path):
    """An ONNX model with external weights, inside the folder the services may build from."""
    return write_model(tmp_path / "models", "net")


@pytest.fixture
def service(tmp_path, double, model):
    servers = []

    def start(*extra, **kwargs):
        s = Server(tmp_path, "--model-root", str(model.parent), *extra, name=f"server{len(servers)}", **kwargs)
        servers.append(s)
        return s.start()
    yield start
    for s in servers:
        assert s.stop() == 0, s.log()[-4000:]


@pytest.fixture(scope="module")
def cache_schema():
    import jsonschema
    with open(SOURCE_DIR / "docs" / "openapi.json") as f:
        api = json.load(f)
    return jsonschema.Draft202012Validator(api["components"]["schemas"]["BuildRecord"]["properties"]["cache"])


def request(model, **extra):
    return {"model": str(model), "options": {"fp16": True}, **extra}


def finished(server, doc):
    record = server.wait_status(doc["id"], ["succeeded", "failed", "cancelled", "timed_out", "interrupted"], timeout=60)
    assert record["status"] == "succeeded", record
    return record


def event_types(server, record):
    return [e["data"]["type"] for e in SseReader(server.port, record["events_url"]).read_all()]


def metric(server, name):
    status, text, _ = server.request("GET", "/metrics")
    assert status == 200
    m = re.search(rf"^{name}(?:\{{[^}}]*\}})? (\d+)$", text, re.M)
    assert m, f"no {name} in /metrics"
    return int(m.group(1))


def cache_entries(data_dir):
    """The keys the engine cache holds (DATA/engine-cache/v1/<key>/)."""
    folder = os.path.join(data_dir, "engine-cache", "v1")
    return sorted(name for name in os.listdir(folder) if KEY.match(name))


def assert_one_built_once(server, records):
    """Two records of one build key: one miss that ran the builder, one hit that did not."""
    by_state = {r["cache"]["state"]: r for r in records}
    assert sorted(by_state) == ["hit", "miss"], [r["cache"] for r in records]
    miss, hit = by_state["miss"], by_state["hit"]
    assert hit["cache"]["key"] == miss["cache"]["key"]
    assert "phase_start" in event_types(server, miss)
    assert event_types(server, hit) == ["build_start", "build_finish"]
    assert hit["engine"]["sha256"] == miss["engine"]["sha256"]
    return miss, hit


def test_the_second_identical_request_reuses_the_engine_and_runs_no_builder(service, model, cache_schema):
    s = service()
    first = finished(s, s.submit(request(model)))
    miss = first["cache"]
    assert miss["state"] == "miss" and KEY.match(miss["key"]), first
    assert miss["age_seconds"] is None and miss["built_seconds"] is None
    assert "phase_start" in event_types(s, first) and first["phase"]["phases_started"] > 0
    first_finish = SseReader(s.port, first["events_url"]).read_all()[-1]["data"]

    second = finished(s, s.submit(request(model)))
    hit = second["cache"]
    assert hit["state"] == "hit" and hit["key"] == miss["key"], second
    # "reused the engine built N seconds ago in T": the first build's own duration.
    assert 0 <= hit["age_seconds"] < 60
    assert hit["built_seconds"] == pytest.approx(first_finish["elapsed"], abs=0.05)
    # No builder: the stream holds the start and the finish only, and no phase ran.
    assert event_types(s, second) == ["build_start", "build_finish"]
    assert second["phase"]["phases_started"] == 0
    assert second["engine"]["sha256"] == first["engine"]["sha256"]
    assert second["engine"]["path"] != first["engine"]["path"]
    for record in (first, second):
        cache_schema.validate(record["cache"])
    assert (metric(s, "trtwatch_engine_cache_misses_total"), metric(s, "trtwatch_engine_cache_hits_total")) == (1, 1)
    # The stored document keeps it: a restarted service reads the same answer back.
    s.stop()
    s.start()
    assert s.get(second["id"])["cache"] == hit and s.get(first["id"])["cache"] == miss


def test_two_identical_requests_at_once_build_once(service, model, double):
    double.setenv("FAKE_TENSORRT_STEP_MS", STEP_MS)
    s = service("--max-concurrent", "2")
    docs = [s.submit(request(model)) for _ in range(2)]
    records = [finished(s, d) for d in docs]
    miss, hit = assert_one_built_once(s, records)
    # The hit ran beside the miss, waiting for its engine: they were at once.
    assert hit["started_at"] < miss["finished_at"], (hit, miss)
    assert cache_entries(s.data_dir) == [miss["cache"]["key"]]


def test_cache_false_builds_again_and_its_record_has_no_cache(service, model):
    s = service()
    stored = finished(s, s.submit(request(model)))
    assert stored["cache"]["state"] == "miss"
    again = finished(s, s.submit(request(model, cache=False)))
    assert again["request"]["cache"] is False
    assert again["cache"] is None, again["cache"]
    assert "phase_start" in event_types(s, again)  # built, though the cache had the engine
    simulated = finished(s, s.submit({"simulate": "small-cnn", "speed": 100}))
    assert simulated["cache"] is None
    # The cache was left alone: the next plain request still hits the stored engine.
    assert finished(s, s.submit(request(model)))["cache"]["state"] == "hit"


def test_mcp_results_carry_the_cache_answer(tmp_path, double, model, cache_schema):
    m = test_mcp_stdio.McpProcess(tmp_path / "data", "--model-root", str(model.parent))
    try:
        m.initialize()
        tools = {t["name"]: t for t in m.request("tools/list")["result"]["tools"]}
        for name in ("build_engine", "get_build", "cancel_build"):
            assert tools[name]["outputSchema"]["properties"]["cache"]["properties"]["state"]["enum"] == ["hit", "miss"]
        assert tools["build_engine"]["inputSchema"]["properties"]["cache"]["type"] == "boolean"

        first = m.call("build_engine", {"model": str(model), "options": {"fp16": True}})
        assert first["isError"] is False, first
        assert first["structuredContent"]["cache"]["state"] == "miss"
        assert "built and stored in the engine cache" in first["content"][0]["text"]
        second = m.call("build_engine", {"model": str(model), "options": {"fp16": True}})
        cache = second["structuredContent"]["cache"]
        assert cache["state"] == "hit" and cache["key"] == first["structuredContent"]["cache"]["key"]
        assert "reused the engine built " in second["content"][0]["text"]
        assert f"(engine cache, key {cache['key'][:12]})" in second["content"][0]["text"]
        cache_schema.validate(cache)
        got = m.call("get_build", {"id": second["structuredContent"]["id"]})["structuredContent"]
        assert got["cache"] == cache
        uncached = m.call("build_engine", {"model": str(model), "options": {"fp16": True}, "cache": False})
        assert uncached["isError"] is False and uncached["structuredContent"]["cache"] is None
    finally:
        assert m.close() == 0


def test_two_replicas_sharing_a_data_dir_build_identical_requests_once(tmp_path, pg, double, model):  # noqa: F811
    double.setenv("FAKE_TENSORRT_STEP_MS", STEP_MS)
    uri = pg.create_database("engine_cache")
    shared = tmp_path / "shared"
    replicas = [Server(tmp_path, "--store", uri, "--replica", name, "--max-concurrent", "1", "--model-root",
                       str(model.parent), data_dir=shared, name=name) for name in ("a", "b")]
    started = []
    try:
        for r in replicas:
            started.append(r.start())
        a, b = started
        docs = [a.submit(request(model)), b.submit(request(model))]
        # One slot each: two builds at once run on the two replicas.
        records = [finished(a, d) for d in docs]
        miss, hit = assert_one_built_once(a, records)
        assert hit["started_at"] < miss["finished_at"], (hit, miss)
        assert cache_entries(str(shared)) == [miss["cache"]["key"]]
        wait_for(lambda: b.get(hit["id"])["cache"] == hit["cache"], 10, "the other replica reads the same record")
    finally:
        for r in started:
            r.stop()


def entry_sha256(data_dir, key):
    with open(os.path.join(data_dir, "engine-cache", "v1", key, "entry.json")) as f:
        return json.load(f)["engine"]["sha256"]


def test_the_record_digest_and_etag_are_the_cache_entrys_never_a_hash_of_the_placed_engine(service, model):
    """Issue 38: a placed engine damaged in place (one byte flipped, size kept, its
    sidecar gone so nothing cached in the folder could hide it) is served with the digest
    the engine cache recorded, so a client that checks the body (RFC 9530 §3
    Repr-Digest, RFC 9110 §8.8.3 ETag) sees the damage."""
    import base64
    import hashlib
    s = service()
    first = finished(s, s.submit(request(model)))
    second = finished(s, s.submit(request(model)))
    recorded = entry_sha256(s.data_dir, first["cache"]["key"])
    assert first["engine"]["sha256"] == second["engine"]["sha256"] == recorded
    path = second["engine"]["path"]
    sidecar = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".sha256")
    with open(sidecar) as f:
        assert f.read().split()[0] == recorded
    os.remove(sidecar)
    os.chmod(path, 0o600)
    with open(path, "r+b") as f:
        placed = f.read()
        f.seek(len(placed) // 2)
        f.write(bytes([placed[len(placed) // 2] ^ 0xFF]))
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
    conn.request("GET", f"/builds/{second['id']}/engine")
    res = conn.getresponse()
    body, headers = res.read(), dict(res.getheaders())
    conn.close()
    assert res.status == 200
    assert headers["ETag"] == f'"{recorded}"'
    assert headers["Repr-Digest"] == "sha-256=:" + base64.b64encode(bytes.fromhex(recorded)).decode() + ":"
    assert hashlib.sha256(body).hexdigest() != recorded, "the damaged bytes differ from the recorded digest"
