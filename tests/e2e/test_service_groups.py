"""Build groups through the real service with the local executor (docs/api.md, "Build
groups"): one request with "targets" starts one build per GPU type as a group; the
group's document follows its members, its manifest maps each compute capability to its
engine as Triton's cc_model_filenames takes it, its engines download under their group
names, a bad request is refused whole (nothing recorded), and a group cancel cancels
every member. The CUDA driver stand-in gives this host "Fake GPU H" (9.0) and "Fake GPU
A" (8.0); real builds run on the trtwatch built against the TensorRT double. On a real
Slurm cluster: test_slurm_groups.py."""
import base64
import hashlib
import json
import os
import time

import pytest

import service_client
from conftest import SOURCE_DIR
from group_client import download, group, wait_group
from pg_server import pg  # noqa: F401  (the fixture)
from service_client import Server, SseReader, read_until
from test_engine_cache import write_model
from test_service_trust import _mcp_initialize, _mcp_post

DOUBLE_BIN = os.environ.get("TRTWATCH_DOUBLE_BIN")
FAKE_TENSORRT_DIR = os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR")
FAKE_DRIVER_DIR = os.environ.get("TRTWATCH_FAKE_DRIVER_DIR")
pytestmark = pytest.mark.skipif(not FAKE_DRIVER_DIR, reason="needs the CUDA driver stand-in")

GPU_TYPES = ("--gpu-type", "h200=gres:h200,cc=9.0", "--gpu-type", "a100=gres:a100,cc=8.0")


@pytest.fixture
def driver(monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", FAKE_DRIVER_DIR)
    for name in ("CUDA_VISIBLE_DEVICES", "TRTWATCH_ENGINE_CACHE", "TRTWATCH_PROGRESS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def model(tmp_path):
    return write_model(tmp_path / "models", "resnet50")


def contract(name):
    """The OpenAPI document's schema `name` (docs/openapi.json), as the service serves it."""
    import jsonschema
    with open(SOURCE_DIR / "docs" / "openapi.json") as f:
        api = json.load(f)
    return jsonschema.Draft202012Validator(dict(api, **{"$ref": f"#/components/schemas/{name}"}))


@pytest.mark.skipif(not DOUBLE_BIN, reason="built without TRTWATCH_TENSORRT_DOUBLE_TESTS")
def test_a_group_of_two_targets_ends_with_two_engines_and_their_manifest(tmp_path, driver, model):
    driver.setattr(service_client, "BIN", DOUBLE_BIN)
    driver.setenv("LD_LIBRARY_PATH", f"{FAKE_TENSORRT_DIR}:{FAKE_DRIVER_DIR}")
    s = Server(tmp_path, "--model-root", str(model.parent), *GPU_TYPES).start()
    try:
        status, doc, headers = s.request("POST", "/builds", {"model": str(model), "options": {"fp16": True},
                                                             "targets": ["h200", "A100"]})
        assert status == 201, doc
        gid = doc["id"]
        assert gid.startswith("g_") and headers["Location"] == f"/groups/{gid}"
        assert doc["targets"] == ["h200", "a100"] and doc["model"] == str(model)
        assert [m["compute_capability"] for m in doc["members"]] == ["9.0", "8.0"]

        final = wait_group(s, gid, timeout=90)
        assert final["state"] == "succeeded", final
        names = {"9.0": "resnet50.h200.sm90.engine", "8.0": "resnet50.a100.sm80.engine"}
        assert [m["engine_name"] for m in final["members"]] == [names["9.0"], names["8.0"]]
        # Each engine's SHA-256 and size beside Triton's map, as its download carries them.
        records = {m["engine_name"]: s.get(m["build"]) for m in final["members"]}
        assert final["manifest"] == {"cc_model_filenames": names,
                                     "engines": {name: {"sha256": r["engine"]["sha256"], "size": r["engine"]["size"]}
                                                 for name, r in records.items()}}
        contract("GroupDocument").validate(final)
        contract("BuildRecord").validate(s.get(final["members"][0]["build"]))
        status, manifest, headers = s.request("GET", f"/groups/{gid}/manifest")
        assert status == 200 and manifest == final["manifest"]
        # The manifest itself carries its digest (RFC 9530 §3) and the same as a strong ETag.
        raw = download(s, f"/groups/{gid}/manifest")[1]
        assert headers["Repr-Digest"] == "sha-256=:" + base64.b64encode(hashlib.sha256(raw).digest()).decode() + ":"
        assert headers["ETag"] == f'"{hashlib.sha256(raw).hexdigest()}"'

        # Each member is a build of its own, routed to the device of its type, and says its group.
        for member in final["members"]:
            record = s.get(member["build"])
            assert record["group"] == {"id": gid, "target": member["target"]}
            assert record["request"]["gpu"] == {"type": member["target"]}
            status, body, headers = download(s, f"/groups/{gid}/engines/{member['engine_name']}")
            assert status == 200 and headers["Content-Disposition"] == \
                f"attachment; filename=\"{member['engine_name']}\""
            assert hashlib.sha256(body).hexdigest() == record["engine"]["sha256"]
            assert headers["Repr-Digest"] == "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
        status, listed, _ = s.request("GET", f"/builds?group={gid}")
        assert status == 200 and [b["id"] for b in listed["builds"]] == [m["build"] for m in final["members"]]

        # The group's folder: the engines under their names beside manifest.json, for a model repository.
        folder = tmp_path / "data" / "groups" / gid
        assert json.loads((folder / "manifest.json").read_text()) == final["manifest"]
        for name in names.values():
            assert (folder / name).is_file()

        status, body, _ = download(s, f"/groups/{gid}/engines/resnet50.l4.sm89.engine")
        assert status == 404 and b"has no engine" in body
    finally:
        assert s.stop() == 0, s.log()[-4000:]


def test_retention_removes_a_group_folder_with_its_builds(tmp_path, driver):
    """The folder's engine links would keep their disk space after the builds are pruned."""
    s = Server(tmp_path, *GPU_TYPES).start()
    try:
        status, doc, _ = s.request("POST", "/builds", {"simulate": "small-cnn", "speed": 20, "targets": ["h200", "a100"]})
        assert status == 201, doc
        gid = doc["id"]
        assert wait_group(s, gid, timeout=60)["state"] == "succeeded"
    finally:
        assert s.stop() == 0, s.log()[-4000:]
    folder = tmp_path / "data" / "groups" / gid
    assert (folder / "manifest.json").is_file()
    time.sleep(1.1)
    s2 = Server(tmp_path, "--retain-for", "1s", *GPU_TYPES, name="server2").start()
    try:
        assert "pruned 2 finished builds" in s2.log()
        assert "removed the folders of 1 build groups" in s2.log()
        assert not folder.exists()
        assert s2.request("GET", f"/groups/{gid}")[0] == 404
    finally:
        assert s2.stop() == 0, s2.log()[-4000:]


def test_a_group_request_is_refused_whole_and_nothing_is_recorded(tmp_path, driver):
    s = Server(tmp_path, *GPU_TYPES).start()
    try:
        quick = {"simulate": "small-cnn", "speed": 50}
        refusals = {
            "unknown target \"v100\"; this service knows h200 (9.0), a100 (8.0)": ["h200", "v100"],
            "is named twice": ["h200", "H200"],
            "1 to 16 distinct": [],
        }
        for expected, targets in refusals.items():
            status, body, _ = s.request("POST", "/builds", dict(quick, targets=targets))
            assert status == 400 and expected in body["error"], (targets, body)
        status, body, _ = s.request("POST", "/builds", dict(quick, targets=["h200"] * 17))
        assert status == 400 and "1 to 16" in body["error"], body
        status, body, _ = s.request("POST", "/builds", dict(quick, targets=["h200"], gpu={"type": "h200"}))
        assert status == 400 and "not both" in body["error"], body
        # A member's own request is checked too, before any member is recorded.
        status, body, _ = s.request("POST", "/builds", {"simulate": "no-such", "targets": ["h200", "a100"]})
        assert status == 400 and body["error"].startswith("target \"h200\": unknown simulation profile"), body
        status, body, _ = s.request("GET", "/builds")
        assert body["builds"] == []

        status, body, _ = s.request("GET", "/groups/g_" + "0" * 32)
        assert status == 404 and "no group" in body["error"], body
        status, body, _ = s.request("GET", "/groups/nonsense")
        assert status == 404, body
        status, body, _ = s.request("GET", "/builds?group=nonsense")
        assert status == 400 and "g_ and 32 hex digits" in body["error"], body
    finally:
        assert s.stop() == 0, s.log()[-4000:]


def test_cancelling_a_group_cancels_every_member(tmp_path, driver):
    s = Server(tmp_path, *GPU_TYPES, "--cancel-grace", "5s").start()
    try:
        doc = s.submit({"simulate": "large-transformer", "seed": 3, "targets": ["h200", "a100"]})
        gid = doc["id"]
        assert doc["state"] in ("queued", "running"), doc
        status, body, _ = s.request("GET", f"/groups/{gid}/manifest")
        assert status == 409 and "once every member has ended" in body["error"], body

        for member in doc["members"]:  # both run, their workers past their start
            read_until(SseReader(s.port, f"/builds/{member['build']}/events"), lambda e: e["event"] == "step")
        status, after, _ = s.request("POST", f"/groups/{gid}/cancel", {"grace": 5})
        assert status == 202, after
        assert after["id"] == gid and after["state"] in ("cancelling", "cancelled"), after
        final = wait_group(s, gid, timeout=30)
        assert final["state"] == "cancelled" and [m["state"] for m in final["members"]] == ["cancelled"] * 2, final
        for document in (doc, after, final):
            contract("GroupDocument").validate(document)
        status, api, _ = s.request("GET", "/openapi.json")
        assert {"/groups/{gid}", "/groups/{gid}/cancel", "/groups/{gid}/manifest",
                "/groups/{gid}/engines/{name}"} <= set(api["paths"])
        # Each member names the group's cancel (docs/api.md's reasons): not a cancel of its own.
        for member in final["members"]:
            record = s.get(member["build"])
            cancel = record["cancel"]
            assert cancel["reason"] == "group" and cancel["grace_seconds"] == 5, cancel
            assert cancel["message"] == f"cancelled by POST /groups/{gid}/cancel", cancel
            contract("BuildRecord").validate(record)
            asked = [e["data"] for e in SseReader(s.port, record["events_url"]).read_all()
                     if e["event"] == "cancel_requested"]
            # Each worker's stop is told with the same reason.
            assert [e["reason"] for e in asked] == ["group"], asked
            assert all(e["message"] == cancel["message"] for e in asked), asked
        # Ended with no engine: the manifest maps nothing.
        assert final["manifest"] == {"cc_model_filenames": {}, "engines": {}}
        status, listed, _ = s.request("GET", f"/builds?group={gid}&status=cancelled")
        assert status == 200 and len(listed["builds"]) == 2
        status, listed, _ = s.request("GET", "/builds")
        assert all(b["group"] is None or b["group"]["id"] == gid for b in listed["builds"])
    finally:
        assert s.stop() == 0, s.log()[-4000:]


def mcp_call(server, session, name, arguments):
    """One tools/call over the service's /mcp; its JSON-RPC result (answered as JSON or
    as an event stream)."""
    status, _, doc = _mcp_post(server, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                        "params": {"name": name, "arguments": arguments}}, session)
    assert status == 200, doc
    if isinstance(doc, str):
        doc = [json.loads(line[5:]) for line in doc.splitlines() if line.startswith("data:")][-1]
    return doc["result"]


def test_mcp_build_engine_with_targets_starts_the_group_and_names_its_members(tmp_path, driver):
    s = Server(tmp_path, *GPU_TYPES).start()
    try:
        status, session, _ = _mcp_initialize(s)
        assert status == 200 and session
        result = mcp_call(s, session, "build_engine", {"simulate": "small-cnn", "speed": 50,
                                                        "targets": ["h200", "a100"]})
        assert not result["isError"], result
        doc = result["structuredContent"]
        gid = doc["id"]
        assert gid.startswith("g_") and doc["targets"] == ["h200", "a100"]
        builds = [m["build"] for m in doc["members"]]
        text = result["content"][0]["text"]
        assert gid in text and f"{builds[0]} (h200)" in text and f"{builds[1]} (a100)" in text, text
        # The same group as the REST API's, and its members are builds an agent follows with get_build.
        assert wait_group(s, gid, timeout=90)["state"] == "succeeded"
        for build in builds:
            record = mcp_call(s, session, "get_build", {"id": build})["structuredContent"]
            assert record["status"] == "succeeded" and record["group"]["id"] == gid

        refused = mcp_call(s, session, "build_engine", {"simulate": "small-cnn", "targets": ["v100"]})
        assert refused["isError"] and "unknown target \"v100\"" in refused["content"][0]["text"], refused
        refused = mcp_call(s, session, "build_engine", {"simulate": "small-cnn", "targets": ["h200"], "wait": True})
        assert refused["isError"] and "returns at once" in refused["content"][0]["text"], refused
    finally:
        assert s.stop() == 0, s.log()[-4000:]


def test_any_replica_answers_a_group_and_cancels_it(tmp_path, driver, pg):
    """Replicas on one PostgreSQL database: the group submitted through one is read,
    listed and cancelled through another, which finds its members from its id alone."""
    uri = pg.create_database("groups")
    a, b = (Server(tmp_path, "--store", uri, "--replica", n, *GPU_TYPES, "--cancel-grace", "5s",
                   data_dir=tmp_path / n, name=n) for n in ("a", "b"))
    a.start()
    try:
        b.start()
        doc = a.submit({"simulate": "large-transformer", "seed": 3, "targets": ["h200", "a100"]})
        gid = doc["id"]
        seen = group(b, gid)
        assert [m["build"] for m in seen["members"]] == [m["build"] for m in doc["members"]]
        assert seen["model"] == "large-transformer" and seen["targets"] == ["h200", "a100"]
        status, listed, _ = b.request("GET", f"/builds?group={gid}")
        assert status == 200 and [r["id"] for r in listed["builds"]] == [m["build"] for m in doc["members"]]

        status, after, _ = b.request("POST", f"/groups/{gid}/cancel")
        assert status == 202, after
        for s in (a, b):
            final = wait_group(s, gid, timeout=30)
            assert final["state"] == "cancelled" and final["manifest"] == {"cc_model_filenames": {}, "engines": {}}, final
            # Carried to the owner through the database, the group's reason and message too.
            for member in final["members"]:
                cancel = s.get(member["build"])["cancel"]
                assert (cancel["reason"], cancel["message"]) == ("group", f"cancelled by POST /groups/{gid}/cancel")
    finally:
        b.stop()
        a.stop()
