"""A build host with several GPUs (docs/deploy.md, "GPUs"): the local executor gives each
build a GPU of its own. On a stand-in machine of 8 GPUs of two types whose CUDA order
differs from their PCI order (tests/fake_nvml/fake_gpus.h), 16 real builds through
`trtwatch serve` on the trtwatch built against the TensorRT double: never two on one GPU
at once, each worker opening through the CUDA driver the GPU its record names (by PCI
bus id and UUID), routed types respected; a GPU that is lost is taken out of service
with a warning and the builds wait for the others. And `doctor --json` lists every GPU
as item 3 of issue 40 compares with nvidia-smi."""
import json
import os
import threading
import time

import pytest

import service_client
from conftest import run
from service_client import Server, SseReader
from test_engine_cache import write_model

DOUBLE_BIN = os.environ.get("TRTWATCH_DOUBLE_BIN")
FAKE_TENSORRT_DIR = os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR")
FAKE_DRIVER_DIR = os.environ.get("TRTWATCH_FAKE_DRIVER_DIR")
pytestmark = pytest.mark.skipif(not DOUBLE_BIN, reason="built without TRTWATCH_TENSORRT_DOUBLE_TESTS")

GIB = 1024 ** 3
# CUDA's default order (fastest first: the four H, then the four A); PCI order interleaves them.
EIGHT = [("Fake GPU H", "0000:c3:00.0", 9, 0, 141), ("Fake GPU H", "0000:1b:00.0", 9, 0, 141),
         ("Fake GPU H", "0000:e1:00.0", 9, 0, 141), ("Fake GPU H", "0000:5e:00.0", 9, 0, 141),
         ("Fake GPU A", "0000:3b:00.0", 8, 0, 80), ("Fake GPU A", "0000:9a:00.0", 8, 0, 80),
         ("Fake GPU A", "0000:2a:00.0", 8, 0, 80), ("Fake GPU A", "0000:a1:00.0", 8, 0, 80)]
GPU_TYPES = ["--gpu-type", "h=gres:h,cc=9.0", "--gpu-type", "a=gres:a,cc=8.0"]
FINAL = ["succeeded", "failed", "cancelled", "timed_out", "interrupted"]


def uuid(i):
    return f"GPU-{i:08d}-0000-0000-0000-00000000000{i % 10}"


def write_machine(path, gpus, lost=()):
    path.write_text("# NAME|PCI_BUS_ID|UUID|MAJOR.MINOR|MEMORY_GIB[|lost]\n" + "".join(
        f"{name}|{bus}|{uuid(i)}|{major}.{minor}|{gib}{'|lost' if i in lost else ''}\n"
        for i, (name, bus, major, minor, gib) in enumerate(gpus)))


def bus(text):
    """A PCI bus id as one spelling: "00000000:C3:00.0" and "0000:c3:00.0" -> "c3:00.0"."""
    return text.lower().split(":", 1)[1] if text.count(":") == 2 else text.lower()


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """The stand-in driver on the library path, describing the machine of a file."""
    path = tmp_path / "gpus.txt"
    write_machine(path, EIGHT)
    monkeypatch.setattr(service_client, "BIN", DOUBLE_BIN)
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{FAKE_TENSORRT_DIR}:{FAKE_DRIVER_DIR}")
    monkeypatch.setenv("TRTWATCH_FAKE_GPUS", str(path))
    monkeypatch.setenv("FAKE_TENSORRT_STEP_MS", "8")  # 75 steps: a build lasts about 0.6 s
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "TRTWATCH_ENGINE_CACHE", "TRTWATCH_PROGRESS"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def model(tmp_path):
    return write_model(tmp_path / "models", "net")


def start_facts(server, record):
    """The facts of the build's build_start: what its worker saw of its GPU."""
    for event in SseReader(server.port, record["events_url"]).read_all():
        if event["data"]["type"] == "build_start":
            return event["data"]["facts"]
    raise AssertionError(f"no build_start for {record['id']}")


class Sampler:
    """Polls the running builds: no two may hold one GPU at any moment."""

    def __init__(self, server):
        self.server, self.most, self.clashes, self.stop = server, 0, [], threading.Event()
        self.thread = threading.Thread(target=self.loop)
        self.thread.start()

    def loop(self):
        while not self.stop.is_set():
            status, doc, _ = self.server.request("GET", "/builds?status=running&limit=100")
            assert status == 200, doc
            held = [b["job"]["gpu"]["pci_bus_id"] for b in doc["builds"]
                    if b.get("job") and b["job"]["state"] == "RUNNING"]
            self.most = max(self.most, len(held))
            if len(held) != len(set(held)):
                self.clashes.append(held)
            time.sleep(0.02)

    def done(self):
        self.stop.set()
        self.thread.join()


def test_doctor_lists_every_gpu_in_both_numberings(machine):
    env = {**os.environ, "LD_LIBRARY_PATH": FAKE_DRIVER_DIR}
    proc = run("doctor", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    gpus = json.loads(proc.stdout)["gpus"]
    assert len(gpus) == 8
    pci_order = sorted(range(8), key=lambda i: EIGHT[i][1])
    for i, gpu in enumerate(gpus):
        name, bus_id, major, minor, gib = EIGHT[i]
        assert gpu["cuda_device"] == i and gpu["nvml_index"] == pci_order.index(i), gpu
        assert (gpu["name"], bus(gpu["pci_bus_id"]), gpu["uuid"]) == (name, bus(bus_id), uuid(i)), gpu
        assert (gpu["compute_capability"], gpu["memory_bytes"]) == (f"{major}.{minor}", gib * GIB), gpu


def test_sixteen_builds_on_eight_gpus_each_on_its_own(tmp_path, machine, model):
    s = Server(tmp_path, "--model-root", str(model.parent), *GPU_TYPES).start()
    try:
        sampler = Sampler(s)
        needs = [{"type": "h"}] * 6 + [{"type": "a"}] * 6 + [None] * 4
        docs = [s.submit({"model": str(model), "cache": False, **({"gpu": need} if need else {})}) for need in needs]
        records = [s.wait_status(d["id"], FINAL, timeout=120) for d in docs]
        sampler.done()
        assert sampler.clashes == [], sampler.clashes
        assert 2 <= sampler.most <= 8, sampler.most  # --max-concurrent: one per GPU
        for need, record in zip(needs, records):
            assert record["status"] == "succeeded", record
            job, facts = record["job"], start_facts(s, record)
            assert job["executor"] == "local" and job["state"] == "COMPLETED", job  # its worker exited 0
            # The GPU its worker opened through the CUDA driver is the one its record names.
            assert bus(facts["gpu_pci_bus_id"]) == bus(job["gpu"]["pci_bus_id"]), (facts, job)
            assert facts["gpu_uuid"] == job["gpu"]["cuda_visible_devices"], (facts, job)
            assert (facts["gpu_device"], facts["gpu_count"]) == ("0", "1"), facts  # it sees its GPU alone
            wanted = "8.0" if need == {"type": "a"} else "9.0"  # a build naming none gets GPU 0's kind
            assert facts["gpu_compute_capability"] == wanted, (need, facts)
        used = {bus(r["job"]["gpu"]["pci_bus_id"]) for r in records}
        assert len(used) >= 4, used
    finally:
        assert s.stop() == 0, s.log()[-4000:]


def test_gpus_and_builds_per_gpu_bound_what_the_service_uses(tmp_path, machine, model):
    s = Server(tmp_path, "--model-root", str(model.parent), "--gpus", "4,6", "--builds-per-gpu", "2",
               *GPU_TYPES).start()
    try:
        sampler = Sampler(s)
        docs = [s.submit({"model": str(model), "cache": False, "gpu": {"type": "a"}}) for _ in range(6)]
        records = [s.wait_status(d["id"], FINAL, timeout=120) for d in docs]
        sampler.done()
        assert {bus(r["job"]["gpu"]["pci_bus_id"]) for r in records} == {bus(EIGHT[4][1]), bus(EIGHT[6][1])}
        assert sampler.most <= 4
        refused = s.request("POST", "/builds", {"model": str(model), "gpu": {"type": "h"}})
        assert refused[0] == 400 and "this host has no GPU of GPU type h" in refused[1]["error"], refused
    finally:
        assert s.stop() == 0, s.log()[-4000:]
    bad = Server(tmp_path, "--gpus", "9", name="bad")
    with pytest.raises(AssertionError, match="--gpus names GPU 9, which this host lacks"):
        bad.start()


def test_a_lost_gpu_is_taken_out_of_service_with_a_warning(tmp_path, machine, model):
    write_machine(machine, EIGHT[:2] + EIGHT[4:6])  # H, H, A, A
    s = Server(tmp_path, "--model-root", str(model.parent), *GPU_TYPES).start()
    try:
        first = s.submit({"model": str(model), "cache": False})
        s.wait_status(first["id"], ["running", "succeeded"], timeout=30)
        write_machine(machine, EIGHT[:2] + EIGHT[4:6], lost={1})  # the second H falls off the bus
        docs = [s.submit({"model": str(model), "cache": False, "gpu": {"type": "h"}}) for _ in range(3)]
        records = [s.wait_status(d["id"], FINAL, timeout=120) for d in [first, *docs]]
        for record in records:
            assert record["status"] == "succeeded", record
        assert all(bus(r["job"]["gpu"]["pci_bus_id"]) == bus(EIGHT[0][1]) for r in records[1:]), records
        assert f"GPU 1 (Fake GPU H, PCI {EIGHT[1][1]}, {uuid(1)}) is gone from the CUDA driver's list" in s.log()
        assert "taken out of service" in s.log()
    finally:
        assert s.stop() == 0, s.log()[-4000:]
