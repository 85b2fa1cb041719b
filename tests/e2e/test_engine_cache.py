"""`trtwatch build --engine-cache` and `trtwatch cache` as a user runs them, on the
trtwatch built against the TensorRT double (its stand-in libraries write engine bytes;
the stand-in driver names the GPU)."""
import json
import os
import stat
import subprocess

import pytest

from conftest import parse_stream, validate_events

DOUBLE_BIN = os.environ.get("TRTWATCH_DOUBLE_BIN")
FAKE_TENSORRT_DIR = os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR")
FAKE_DRIVER_DIR = os.environ.get("TRTWATCH_FAKE_DRIVER_DIR")
pytestmark = pytest.mark.skipif(not DOUBLE_BIN, reason="built without TRTWATCH_TENSORRT_DOUBLE_TESTS")


def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n])


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def onnx_model(location):
    """A ModelProto whose one initializer is stored externally in `location`."""
    tensor = field(8, b"w") + field(13, field(1, b"location") + field(2, location.encode())) + bytes([14 << 3, 1])
    return field(7, field(5, tensor))


def write_model(folder, stem):
    """STEM.onnx with its weights in STEM.weights, in `folder` (made here): the model root."""
    folder.mkdir()
    (folder / f"{stem}.onnx").write_bytes(onnx_model(f"{stem}.weights"))
    (folder / f"{stem}.weights").write_bytes(b"\x07" * 4096)
    return folder / f"{stem}.onnx"


def trtwatch(*args, cache=None):
    env = {k: v for k, v in os.environ.items() if k not in ("TRTWATCH_PROGRESS", "CUDA_VISIBLE_DEVICES")}
    env["LD_LIBRARY_PATH"] = ":".join([FAKE_TENSORRT_DIR, FAKE_DRIVER_DIR])
    env.pop("TRTWATCH_ENGINE_CACHE", None)
    if cache:
        env["TRTWATCH_ENGINE_CACHE"] = str(cache)
    return subprocess.run([DOUBLE_BIN, *args], capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture
def model(tmp_path):
    (tmp_path / "m.onnx").write_bytes(onnx_model("m.weights"))
    (tmp_path / "m.weights").write_bytes(b"\x01" * 4096)
    return tmp_path / "m.onnx"


def build(model, engine, cache, *flags):
    proc = trtwatch("build", str(model), "-o", str(engine), "--progress", "json", *flags, cache=cache)
    return proc, parse_stream(proc.stdout)


def test_the_second_identical_build_is_a_hit(tmp_path, model, schema):
    cache = tmp_path / "cache"
    first, events = build(model, tmp_path / "a.engine", cache)
    assert first.returncode == 0, first.stderr
    assert events[0]["cache"] == "miss" and len(events[0]["key"]) == 64
    assert events[-1]["cache"] == "miss" and events[-1]["status"] == "succeeded"
    second, hit = build(model, tmp_path / "b.engine", cache)
    assert second.returncode == 0, second.stderr
    assert [e["type"] for e in hit] == ["build_start", "build_finish"]  # no phase: no builder
    assert hit[0]["cache"] == "hit" and hit[0]["key"] == events[0]["key"]
    assert hit[0]["cache_built_seconds"] >= 0 and hit[0]["cache_age_seconds"] >= 0
    assert (tmp_path / "b.engine").read_bytes() == (tmp_path / "a.engine").read_bytes()
    validate_events(events + hit, schema)
    plain = trtwatch("build", str(model), "-o", str(tmp_path / "c.engine"), "--progress", "plain", cache=cache)
    assert plain.returncode == 0 and "reused the engine built " in plain.stderr, plain.stderr
    assert " ago in " in plain.stderr and "(engine cache, key " + events[0]["key"][:12] + ")" in plain.stderr


def test_a_weight_byte_is_a_miss_and_cache_commands_show_the_entries(tmp_path, model):
    cache = tmp_path / "cache"
    assert build(model, tmp_path / "a.engine", cache)[0].returncode == 0
    (tmp_path / "m.weights").write_bytes(b"\x01" * 4095 + b"\x02")
    proc, events = build(model, tmp_path / "a.engine", cache)
    assert proc.returncode == 0 and events[0]["cache"] == "miss"

    key = trtwatch("cache", "key", str(model), "--json")
    assert key.returncode == 0, key.stderr
    doc = json.loads(key.stdout)
    assert doc["key"] == events[0]["key"]
    parts = {p["name"]: p["value"] for p in doc["parts"]}
    assert parts["gpu.name"] and parts["tensorrt.runtime"] == "10.99.0"
    assert "model.external_data[m.weights].sha256" in parts

    ls = json.loads(trtwatch("cache", "ls", "--json", "--engine-cache", str(cache)).stdout)
    assert len(ls) == 2 and ls[0]["key"] == events[0]["key"]  # most recently used first
    stats = json.loads(trtwatch("cache", "stats", "--json", cache=cache).stdout)
    assert stats["entries"] == 2 and stats["misses"] == 2 and stats["hits"] == 0
    pruned = trtwatch("cache", "prune", "--max-entries", "1", cache=cache)
    assert pruned.returncode == 0 and ls[1]["key"] in pruned.stdout
    removed = trtwatch("cache", "rm", ls[0]["key"][:8], cache=cache)
    assert removed.returncode == 0 and ls[0]["key"] in removed.stdout
    assert json.loads(trtwatch("cache", "stats", "--json", cache=cache).stdout)["entries"] == 0


def flip_one_byte(path, at=10):
    """Damage as a disk or a stray tool does: one byte in place, size and time stamp kept."""
    before = os.stat(path)
    os.chmod(path, 0o644)  # entries are read-only
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ 0x01]))
    os.chmod(path, stat.S_IMODE(before.st_mode))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def verify(cache, *flags):
    proc = trtwatch("cache", "verify", "--json", *flags, cache=cache)
    return proc, json.loads(proc.stdout)


def test_a_flipped_byte_is_quarantined_rebuilt_and_never_spreads(tmp_path, model, schema):
    cache = tmp_path / "cache"
    first, events = build(model, tmp_path / "a.engine", cache)
    assert first.returncode == 0, first.stderr
    key = events[0]["key"]
    entry = cache / "v1" / key / "engine"
    good = (tmp_path / "a.engine").read_bytes()
    assert entry.read_bytes() == good
    assert os.stat(entry).st_ino != os.stat(tmp_path / "a.engine").st_ino, "the build's engine is linked into the cache"
    assert stat.S_IMODE(os.stat(entry).st_mode) == 0o444, "entries are read-only"
    clean, doc = verify(cache)
    assert clean.returncode == 0 and doc["checked"] == 1 and doc["damaged"] == 0, clean.stdout

    flip_one_byte(entry)
    assert (tmp_path / "a.engine").read_bytes() == good, "the damage reached an earlier build's engine"
    named = trtwatch("cache", "verify", cache=cache)
    assert named.returncode == 1 and key in named.stdout and "damaged" in named.stdout, named.stdout
    found, doc = verify(cache)
    assert found.returncode == 1 and doc["damaged"] == 1, found.stdout
    assert doc["entries"][0]["state"] == "damaged" and doc["entries"][0]["quarantined"] is None
    assert entry.exists(), "verify without --repair changes nothing"

    second, rebuilt = build(model, tmp_path / "b.engine", cache)
    assert second.returncode == 0, second.stderr
    assert rebuilt[0]["cache"] == "miss" and rebuilt[-1]["status"] == "succeeded"
    warnings = [e["message"] for e in rebuilt if e["type"] == "log" and e["severity"] == "warning"]
    quarantine = cache / "v1" / "quarantine"
    assert len(warnings) == 1 and f"quarantined in {quarantine}/{key}-" in warnings[0], warnings
    validate_events(rebuilt, schema)
    assert (tmp_path / "b.engine").read_bytes() == good, "a fresh build's bytes"
    assert entry.read_bytes() == good, "a good entry replaces the damaged one"
    listed = json.loads(trtwatch("cache", "ls", "--json", cache=cache).stdout)
    assert [(e["key"], e["state"]) for e in listed] == [(key, "ok"), (key, "quarantined")]
    assert "bytes are not the ones stored" in listed[1]["reason"] and os.path.isdir(listed[1]["path"])
    assert "QUARANTINED" in trtwatch("cache", "ls", cache=cache).stdout
    third, hit = build(model, tmp_path / "c.engine", cache)
    assert third.returncode == 0 and hit[0]["cache"] == "hit"

    flip_one_byte(entry, at=0)
    repaired, doc = verify(cache, "--repair")
    assert repaired.returncode == 1 and doc["entries"][0]["quarantined"].startswith(str(quarantine)), repaired.stdout
    assert not entry.exists()
    after, doc = verify(cache)
    assert after.returncode == 0 and doc["checked"] == 0


def test_bad_cache_flags_are_usage_errors(tmp_path, model):
    no_output = trtwatch("build", str(model), "--engine-cache", str(tmp_path / "c"))
    assert no_output.returncode == 2 and "-o ENGINE" in no_output.stderr
    bad_size = trtwatch("build", str(model), "-o", str(tmp_path / "e"), "--engine-cache", str(tmp_path / "c"),
                        "--engine-cache-max-size", "lots")
    assert bad_size.returncode == 2 and "--engine-cache-max-size" in bad_size.stderr
    unnamed = trtwatch("cache", "ls")
    assert unnamed.returncode == 2 and "TRTWATCH_ENGINE_CACHE" in unnamed.stderr
