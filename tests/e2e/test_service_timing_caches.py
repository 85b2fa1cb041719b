"""The fleet's timing caches through the real service (issue 37, docs/api.md, "Timing
caches"): every build is given the cache of its builder and GPU from the artifact dir,
a later build skips the tactic measurements an earlier one made, the API lists,
downloads (with its digest, RFC 9530) and deletes the caches, a request may opt out,
and replicas that merge into one cache at the same moment lose no entry. Simulated
builds: the simulator models TensorRT's cache (docs/simulator.md)."""
import base64
import hashlib
import json
import os

import pytest

from conftest import run
from pg_server import pg  # noqa: F401  (the fixture)
from service_client import Server, SseReader, replica, start_all
from test_service_artifacts import http_request

CACHE = "trtwatch-simulator-1_simulated-gpu.cache"
FINAL = ["succeeded", "failed", "cancelled", "timed_out", "interrupted"]


def build_events(server, **request):
    """The succeeded build's record and its stream's events."""
    doc = server.submit({"simulate": "small-cnn", "speed": 20, **request})
    record = server.wait_status(doc["id"], FINAL, timeout=60)
    assert record["status"] == "succeeded", record
    return record, SseReader(server.port, record["events_url"]).read_all()


def build(server, **request):
    record, events = build_events(server, **request)
    measured = sum(1 for e in events if e["event"] == "phase_start" and e["data"]["phase"] == "Measuring tactic time")
    return record, measured


def caches(server):
    status, doc, _ = server.request("GET", "/timing-caches")
    assert status == 200, doc
    return doc["timing_caches"]


def test_builds_share_their_gpus_cache_that_the_api_lists_downloads_and_deletes(tmp_path):
    server = Server(tmp_path).start()
    try:
        first, cold = build(server)
        assert first["fleet_timing_cache"] == {"name": CACHE, "url": f"/timing-caches/{CACHE}"}
        second, warm = build(server)
        assert cold > 0 and warm == 0, "the second build reuses every measurement of the first"
        [cache] = caches(server)
        assert (cache["name"], cache["builder"], cache["gpu"]) == (CACHE, "trtwatch simulator 1", "simulated GPU")
        assert cache["builds_served"] == 2 and cache["builds_contributed"] == 1, "the second taught it nothing"
        assert cache["entries"] > 0 and cache["last_merged"].endswith("Z")

        opted_out, measured = build(server, timing_cache=False)
        assert opted_out["fleet_timing_cache"] is None and measured >= cold
        assert opted_out["request"]["timing_cache"] is False
        assert caches(server)[0]["builds_served"] == 2

        # A download: its ETag and Repr-Digest are the SHA-256 of its bytes (RFC 9530 §3).
        status, body, headers = http_request(server.port, "GET", cache["url"],
                                             headers={"Want-Repr-Digest": "sha-256=1"})
        assert status == 200 and len(body) == cache["size"]
        digest = hashlib.sha256(body).digest()
        assert headers["ETag"] == f'"{digest.hex()}"'
        assert headers["Repr-Digest"] == f"sha-256=:{base64.b64encode(digest).decode()}:"
        assert json.loads(body)["gpu"] == "simulated GPU"
        status, _, _ = http_request(server.port, "GET", cache["url"], headers={"If-None-Match": headers["ETag"]})
        assert status == 304  # RFC 9110 §13.1.2

        status, doc, _ = server.request("PUT", cache["url"], raw="x")
        assert status == 405 and "DELETE" in doc["error"]
        assert server.request("DELETE", cache["url"])[0] == 204
        assert caches(server) == []
        for method in ("GET", "DELETE"):
            status, doc, _ = server.request(method, cache["url"])
            assert status == 404 and "GET /timing-caches" in doc["error"], (method, doc)
        _, again = build(server)
        assert again == cold, "a deleted cache starts again from nothing"
    finally:
        assert server.stop() == 0, server.log()[-4000:]


def test_a_damaged_fleet_cache_is_refused_with_a_warning_and_replaced(tmp_path):
    """Issue 37 item 5: the build runs without it, says so, and a fresh cache takes its place."""
    server = Server(tmp_path).start()
    try:
        _, cold = build(server)
        path = tmp_path / "data" / "artifacts" / "timing-caches" / CACHE
        path.write_text('{"format": "trtwatch-simulated-timing-cache", "version": 1, "entries": [')
        record, events = build_events(server)
        warnings = [e["data"]["message"] for e in events
                    if e["event"] == "log" and e["data"]["severity"] == "warning"]
        assert any("is unreadable by the simulator" in w and "replaces it" in w for w in warnings), warnings
        assert record["fleet_timing_cache"]["name"] == CACHE
        assert len(json.loads(path.read_text())["entries"]) > 0, "a fresh cache replaced the damaged one"
        assert build(server)[1] == 0, "and serves the next build"
    finally:
        assert server.stop() == 0, server.log()[-4000:]


def test_a_service_without_fleet_caches_gives_builds_none(tmp_path):
    server = Server(tmp_path, "--no-timing-caches").start()
    try:
        record, measured = build(server)
        assert record["fleet_timing_cache"] is None and measured > 0
        assert server.request("GET", "/timing-caches")[1] == {"enabled": False, "timing_caches": []}
        status, doc, _ = server.request("GET", f"/timing-caches/{CACHE}")
        assert status == 404 and "--no-timing-caches" in doc["error"]
    finally:
        assert server.stop() == 0, server.log()[-4000:]


@pytest.mark.skipif(not os.environ.get("TRTWATCH_FAKE_DRIVER_DIR"), reason="needs the stand-in GPU driver")
def test_builds_routed_to_two_gpu_types_keep_a_cache_for_each(tmp_path, monkeypatch):
    """A simulated build the local executor places on a GPU simulates that GPU's cache
    (docs/simulator.md): one fleet cache per GPU type, never mixed."""
    gpus = tmp_path / "gpus.txt"
    gpus.write_text("Fake GPU H|0000:1b:00.0|GPU-00000000-0000-0000-0000-000000000000|9.0|80\n"
                    "Fake GPU A|0000:3b:00.0|GPU-00000001-0000-0000-0000-000000000001|8.0|80\n")
    monkeypatch.setenv("LD_LIBRARY_PATH", os.environ["TRTWATCH_FAKE_DRIVER_DIR"])
    monkeypatch.setenv("TRTWATCH_FAKE_GPUS", str(gpus))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    server = Server(tmp_path, "--gpu-type", "h=gres:h,cc=9.0", "--gpu-type", "a=gres:a,cc=8.0").start()
    try:
        names = {gpu: build(server, gpu={"type": gpu})[0]["fleet_timing_cache"]["name"] for gpu in ("h", "a")}
        assert names == {"h": "trtwatch-simulator-1_fake-gpu-h-sm-9.0.cache",
                         "a": "trtwatch-simulator-1_fake-gpu-a-sm-8.0.cache"}
        assert build(server, gpu={"type": "h"})[1] == 0, "the second build on H reuses H's cache"
        assert sorted((c["gpu"], c["builds_served"]) for c in caches(server)) == [
            ("Fake GPU A sm 8.0", 1), ("Fake GPU H sm 9.0", 2)]
    finally:
        assert server.stop() == 0, server.log()[-4000:]


def entries_of(path):
    return {(node, tactic) for node, tactic, _ in json.loads(path.read_text())["entries"]}


def test_replicas_merging_into_one_cache_at_once_lose_no_entry(tmp_path, pg):
    """Issue 37 item 5: builds of different seeds (different nodes) on two replicas
    sharing an artifact dir end at about the same time; the cache holds every entry of
    every build, as one cache file written by the same builds one after another does."""
    seeds = [11, 12, 13, 14, 15, 16]
    expected = tmp_path / "sequential.cache"
    for seed in seeds:
        proc = run("build", "--simulate", "small-cnn", "--seed", str(seed), "--speed", "50",
                   "--timing-cache", str(expected))
        assert proc.returncode == 0, proc.stderr
    uri = pg.create_database("timing_caches")
    artifacts = str(tmp_path / "shared-artifacts")
    servers = start_all([replica(tmp_path, uri, name, "--artifact-dir", artifacts, "--max-concurrent", "3")
                         for name in ("a", "b")])
    try:
        docs = [servers[i % 2].submit({"simulate": "small-cnn", "seed": seed, "speed": 20})
                for i, seed in enumerate(seeds)]
        for doc in docs:
            record = servers[0].wait_status(doc["id"], FINAL, timeout=90)
            assert record["status"] == "succeeded", record
        fleet = tmp_path / "shared-artifacts" / "timing-caches" / CACHE
        assert entries_of(fleet) == entries_of(expected)
        [cache] = caches(servers[1])
        assert cache["builds_served"] == len(seeds) and cache["entries"] == len(entries_of(expected))
    finally:
        for s in servers:
            s.stop()
