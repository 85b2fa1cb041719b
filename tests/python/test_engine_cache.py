"""trtwatch.EngineCache around a build of your own (docs/cache.md, "Around your own
build code"): keys from model files and options, get/put, get_or_build once across
threads, under a watch whose result says hit or miss, and the errors a user meets."""
import os
import threading
import time

import pytest

import trtwatch

GPU = ("NVIDIA H100", "9.0")


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x08\x08")  # a ModelProto with ir_version 8 and nothing else
    return path


@pytest.fixture
def cache(tmp_path):
    return trtwatch.EngineCache(tmp_path / "cache")


def test_keys_follow_the_models_bytes_the_options_and_tensorrt(cache, model):
    key = cache.key(model, ["fp16"], gpu=GPU)
    assert len(key.digest) == 64 and str(key) == key.digest
    parts = dict(key.parts)
    # TensorRT's module as imported: here the test double's version.
    assert parts["tensorrt.runtime"] == "0.0.0+trtwatch.test.double"
    assert parts["option[0]"] == "fp16" and parts["gpu.name"] == "NVIDIA H100"
    assert cache.key(model, ["fp16"], gpu=GPU) == key
    assert cache.key(model, ["fp16", "sparsity"], gpu=GPU) != key
    assert cache.key(model, ["fp16"], gpu=GPU, tensorrt_version="10.3.0") != key
    assert dict(cache.key(model, gpu=GPU, extra={"calibration": "abc"}).parts)["extra.calibration"] == "abc"
    model.write_bytes(b"\x08\x09")
    assert cache.key(model, ["fp16"], gpu=GPU) != key
    assert trtwatch.EngineCache.key(text="my own key") == cache.key(text="my own key")


def test_a_key_that_cannot_be_computed_says_why(cache, tmp_path):
    with pytest.raises(ValueError, match="absent.onnx"):
        cache.key(tmp_path / "absent.onnx", gpu=GPU)
    with pytest.raises(ValueError, match="tensorrt.__version__"):
        cache.key(options=["fp16"], tensorrt_version="", gpu=GPU)


def test_put_then_get_returns_the_plan(cache, model):
    key = cache.key(model, ["fp16"], gpu=GPU)
    assert cache.get(key) is None
    cache.put(key, b"PLAN-BYTES", build_seconds=7.5, model="model.onnx")
    engine = cache.get(key)
    assert engine.hit and engine.plan == b"PLAN-BYTES" and engine.size == 10
    assert engine.build_seconds == 7.5 and engine.age_seconds >= 0
    with open(engine.path, "rb") as stored:
        assert stored.read() == b"PLAN-BYTES"
    found = cache.find(key)
    assert found.hit and found.plan is None
    stats = cache.stats()
    assert stats["entries"] == 1 and stats["hits"] == 2 and stats["seconds_saved"] == 15.0


def test_a_flipped_byte_is_a_miss_that_names_the_quarantine(cache):
    key = cache.key(text="flipped")
    cache.put(key, b"PLAN-BYTES")
    path = cache.find(key).path
    before = os.stat(path)
    os.chmod(path, 0o644)  # entries are read-only
    with open(path, "r+b") as f:
        f.write(b"p")  # one byte, the size kept
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.warns(RuntimeWarning, match="quarantined in"):
        assert cache.get(key) is None
    assert os.listdir(os.path.join(cache.folder, "quarantine"))[0].startswith(key.digest + "-")
    engine = cache.get_or_build(key, lambda: b"PLAN-BYTES")
    assert not engine.hit and engine.stored and cache.get(key).plan == b"PLAN-BYTES"


def test_put_takes_buffers_and_files_and_refuses_an_empty_plan(cache, tmp_path):
    key = cache.key(text="buffers")
    cache.put(key, memoryview(bytearray(b"FROM-A-BUFFER")))
    assert cache.get(key).plan == b"FROM-A-BUFFER"
    engine_file = tmp_path / "a.engine"
    engine_file.write_bytes(b"FROM-A-FILE")
    other = cache.key(text="file")
    cache.put(other, engine_file, build_seconds=1)
    assert cache.get(other).plan == b"FROM-A-FILE"
    with pytest.raises(trtwatch.EngineCacheError, match="empty plan"):
        cache.put(cache.key(text="empty"), b"")


def test_get_or_build_builds_once_then_hits(cache, model):
    key = cache.key(model, gpu=GPU)
    calls = []

    def build():
        calls.append(1)
        return b"BUILT"

    first = cache.get_or_build(key, build)
    assert not first.hit and first.stored and first.plan == b"BUILT"
    second = cache.get_or_build(key, build)
    assert second.hit and second.plan == b"BUILT"
    assert len(calls) == 1


def test_a_failed_build_stores_nothing_and_an_exception_passes_through(cache):
    key = cache.key(text="fails")
    assert cache.get_or_build(key, lambda: None) is None
    with pytest.raises(ZeroDivisionError):
        cache.get_or_build(key, lambda: 1 / 0)
    with pytest.raises(TypeError, match="plan's bytes"):
        cache.get_or_build(key, lambda: 42)
    assert cache.get(key) is None
    assert cache.get_or_build(key, lambda: b"OK").stored


def test_identical_builds_in_threads_build_once(tmp_path):
    key = trtwatch.EngineCache.key(text="threads")
    calls, results = [], []

    def build():
        calls.append(1)
        time.sleep(0.2)  # the others wait on the key's lock meanwhile
        return b"ONCE"

    def run():
        results.append(trtwatch.EngineCache(tmp_path / "cache").get_or_build(key, build))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert sorted(r.hit for r in results) == [False, True, True, True]
    assert all(r.plan == b"ONCE" for r in results)


def test_under_a_watch_the_result_says_miss_then_hit(cache, model, tmp_path):
    key = cache.key(model, ["fp16"], gpu=GPU)
    events = []

    def watched():
        w = trtwatch.watch(progress="quiet", no_history=True, on_event=events.append)
        engine = cache.get_or_build(key, lambda: b"WATCHED", watch=w)
        return w, engine

    w, first = watched()
    assert first.stored and first.result is w.result
    assert w.result.succeeded and w.result.cache["state"] == "miss" and w.result.cache["key"] == key.digest
    starts = [e for e in events if e["type"] == "build_start"]
    assert starts[-1]["cache"] == "miss"
    w, second = watched()
    assert second.hit and second.plan == b"WATCHED"
    assert w.result.succeeded and w.result.cache["state"] == "hit"
    assert w.result.cache["built_seconds"] is not None


def test_a_watched_build_that_raises_fails_the_watch(cache):
    w = trtwatch.watch(progress="quiet", no_history=True)

    def build():
        raise RuntimeError("the parser refused the model")

    assert cache.get_or_build(cache.key(text="watched failure"), build, watch=w) is None
    assert w.result.failed and "the parser refused the model" in w.result.error


def test_a_cache_without_a_folder_names_the_variable(monkeypatch):
    monkeypatch.delenv("TRTWATCH_ENGINE_CACHE", raising=False)
    with pytest.raises(trtwatch.EngineCacheError, match="TRTWATCH_ENGINE_CACHE"):
        trtwatch.EngineCache()
    assert issubclass(trtwatch.EngineCacheError, OSError)


def test_the_default_folder_is_the_variables(monkeypatch, tmp_path):
    monkeypatch.setenv("TRTWATCH_ENGINE_CACHE", str(tmp_path / "env-cache"))
    assert trtwatch.EngineCache().folder == os.path.join(str(tmp_path / "env-cache"), "v1")
