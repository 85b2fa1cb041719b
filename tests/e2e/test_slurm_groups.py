"""Build groups on a real Slurm 22.05 cluster the tests start (slurm_cluster.py: nodes n1
with h200 GPUs, n2 with a100, n3 with l4): one request for three targets ends with three
engines, each built by a job on the node of its GPU type, and a manifest that maps each
compute capability to the right engine, downloadable through the group; a group cancel
stops every member's job. The jobs run the trtwatch built against the TensorRT double:
a job inherits the submitting environment (sbatch's default --export=ALL), so the
service's LD_LIBRARY_PATH brings the double's libraries and the CUDA driver stand-in to
every node. Every wait is bounded; every test ends with no job left on the cluster."""
import hashlib
import os

import pytest

import service_client
from group_client import download, group, wait_group
from service_client import Server
from slurm_cluster import NODES, slurm  # noqa: F401  (the fixture)
from test_engine_cache import write_model
from waiting import wait_for

DOUBLE_BIN = os.environ.get("TRTWATCH_DOUBLE_BIN")
FAKE_TENSORRT_DIR = os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR")
FAKE_DRIVER_DIR = os.environ.get("TRTWATCH_FAKE_DRIVER_DIR")
pytestmark = pytest.mark.skipif(not DOUBLE_BIN, reason="built without TRTWATCH_TENSORRT_DOUBLE_TESTS")

GPU_TYPES = ("--gpu-type", "h200=gres:h200,cc=9.0", "--gpu-type", "a100=gres:a100,cc=8.0",
             "--gpu-type", "l4=gres:l4,cc=8.9")


@pytest.fixture(autouse=True)
def _slurm_conf(slurm, monkeypatch):
    """As test_slurm.py: the service reaches the test cluster, on the double's binary and
    libraries; each test ends with no job left."""
    monkeypatch.setenv("SLURM_CONF", slurm.conf)
    monkeypatch.setattr(service_client, "BIN", DOUBLE_BIN)
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{FAKE_TENSORRT_DIR}:{FAKE_DRIVER_DIR}")
    for name in ("CUDA_VISIBLE_DEVICES", "TRTWATCH_ENGINE_CACHE", "TRTWATCH_PROGRESS"):
        monkeypatch.delenv(name, raising=False)
    yield
    slurm.run("scancel", "--user=root", check=False)
    wait_for(lambda: not slurm.run("squeue", "-h").stdout.strip(), 30, "no job left on the cluster")


@pytest.fixture
def model(tmp_path):
    return write_model(tmp_path / "models", "resnet50")


def slurm_server(tmp_path, model, *extra):
    return Server(tmp_path, "--executor", "slurm", "--slurm-partition", "gpu", "--cancel-grace", "5s",
                  "--max-concurrent", "4", "--model-root", str(model.parent), *GPU_TYPES, *extra,
                  data_dir=tmp_path / "data")


def test_a_group_of_three_targets_ends_with_three_engines_built_on_their_nodes_and_a_manifest(tmp_path, slurm,
                                                                                              model):
    s = slurm_server(tmp_path, model).start()
    try:
        doc = s.submit({"model": str(model), "options": {"fp16": True}, "cache": False,
                        "targets": ["h200", "a100", "l4"]})
        gid = doc["id"]
        final = wait_group(s, gid, timeout=120)
        assert final["state"] == "succeeded", (final, [s.get(m["build"])["error"] for m in final["members"]])
        expected = {"9.0": "resnet50.h200.sm90.engine", "8.0": "resnet50.a100.sm80.engine",
                    "8.9": "resnet50.l4.sm89.engine"}
        assert final["manifest"]["cc_model_filenames"] == expected
        assert sorted(final["manifest"]["engines"]) == sorted(expected.values())
        status, manifest, _ = s.request("GET", f"/groups/{gid}/manifest")
        assert status == 200 and manifest == final["manifest"]
        for member in final["members"]:
            record = s.get(member["build"])
            # Built by a Slurm job on the node whose GPUs are of the member's type.
            assert record["job"]["executor"] == "slurm" and record["job"]["state"] == "COMPLETED", record["job"]
            assert NODES[record["job"]["node"]] == member["target"], (member, record["job"])
            assert slurm.job(record["job"]["id"])["NodeList"] == record["job"]["node"]
            # Its engine, under the name the manifest gives its compute capability.
            assert expected[member["compute_capability"]] == member["engine_name"]
            status, body, _ = download(s, f"/groups/{gid}/engines/{member['engine_name']}")
            assert status == 200 and len(body) == record["engine"]["size"] > 0
            assert hashlib.sha256(body).hexdigest() == record["engine"]["sha256"]
        folder = tmp_path / "data" / "groups" / gid
        assert sorted(p.name for p in folder.iterdir() if p.name.endswith(".engine")) == sorted(expected.values())
    finally:
        assert s.stop() == 0, s.log()[-4000:]


def test_cancelling_a_group_on_slurm_cancels_every_members_job(tmp_path, slurm, model):
    s = slurm_server(tmp_path, model).start()
    try:
        doc = s.submit({"simulate": "large-transformer", "seed": 3, "targets": ["h200", "a100", "l4"]})
        gid = doc["id"]
        # Every member's job runs on its node before the cancel.
        for member in doc["members"]:
            wait_for(lambda: (lambda j: j and j["state"] == "RUNNING")(s.get(member["build"])["job"]), 30,
                     f"job of {member['build']} running")
        status, after, _ = s.request("POST", f"/groups/{gid}/cancel")
        assert status == 202, after
        final = wait_group(s, gid, timeout=60)
        assert final["state"] == "cancelled", final
        for member in final["members"]:
            record = s.get(member["build"])
            # The group's cancel, named as such: not the member's own (docs/api.md's reasons).
            assert record["status"] == "cancelled" and record["cancel"]["reason"] == "group", record
            assert record["cancel"]["message"] == f"cancelled by POST /groups/{gid}/cancel", record["cancel"]
            assert record["reason"] is None, record  # asked by trtwatch: not Slurm's doing
            assert NODES[record["job"]["node"]] == member["target"]
        wait_for(lambda: not slurm.run("squeue", "-h").stdout.strip(), 30, "the group's jobs gone from the queue")
    finally:
        assert s.stop() == 0, s.log()[-4000:]
