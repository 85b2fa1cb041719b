"""`trtwatch doctor` and `trtwatch build MODEL.onnx` as a user sees them on this machine.

Truthful either way: the expectations follow what this machine has (an NVIDIA driver
or not, a TensorRT backend in the binary or not), checked independently of trtwatch.
"""
import ctypes
import json
import os
import subprocess

import pytest

from conftest import run


def nvml_loadable():
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        return True
    except OSError:
        return False


def doctor_json():
    proc = run("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_doctor_json_is_one_valid_object_and_truthful():
    doc = doctor_json()
    assert set(doc) == {"trtwatch", "driver", "gpus", "tensorrt_runtime", "backends"}
    assert doc["trtwatch"]["version"]
    assert doc["driver"]["nvml"] == nvml_loadable()
    if not doc["driver"]["nvml"]:
        assert doc["gpus"] == []
        assert "libnvidia-ml.so.1" in doc["driver"]["error"]
    for gpu in doc["gpus"]:
        assert gpu["name"] and gpu["memory_bytes"] > 0
        major, minor = gpu["compute_capability"].split(".")
        assert int(major) >= 1 and int(minor) >= 0
    backends = {b["name"]: b for b in doc["backends"]}
    assert backends["simulated"]["ready"] is True
    trt = backends["tensorrt"]
    assert trt["built"] == (doc["trtwatch"]["tensorrt_headers"] is not None)
    if trt["ready"]:
        assert doc["gpus"] and doc["tensorrt_runtime"]["found"]
    runtime = doc["tensorrt_runtime"]
    if runtime["found"]:
        assert os.path.exists(runtime["path"])
    else:
        assert runtime["tried"] and runtime["path"] is None


def test_doctor_text_matches_the_json():
    doc = doctor_json()
    proc = run("doctor")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("trtwatch " + doc["trtwatch"]["version"])
    if doc["driver"]["nvml"]:
        for gpu in doc["gpus"]:
            assert gpu["name"] in text
    else:
        assert "NVIDIA driver: not found" in text
        assert "GPUs: none visible" in text
    assert "Backends:" in text and "simulated" in text and "tensorrt" in text
    assert proc.stderr == ""


def test_build_without_tensorrt_explains_itself(tmp_path):
    if doctor_json()["backends"][1]["built"]:
        return  # this binary has TensorRT; the message below is for binaries without it
    model = tmp_path / "model.onnx"
    model.write_bytes(b"onnx")
    proc = run("build", str(model), "-o", str(tmp_path / "model.engine"))
    assert proc.returncode == 2
    assert "built without TensorRT" in proc.stderr
    assert "TensorRT_ROOT" in proc.stderr and "--simulate" in proc.stderr
    assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


def test_bad_input_is_refused_before_anything_starts(tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"onnx")
    cases = [
        (["build", str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "m.engine")], "missing.onnx"),
        (["build", str(model), "-o", str(tmp_path / "no" / "m.engine")], "mkdir -p"),
        (["build", str(model), "-o", str(tmp_path / "m.engine"), "--optShapes=input:1x3xx224"], "--optShapes"),
        (["build", str(model), "-o", str(tmp_path / "m.engine"), "--minShapes=input:4x3", "--optShapes=input:1x3"],
         "min <= opt <= max"),
        (["build", str(model), "-o", str(tmp_path / "m.engine"), "--memPoolSize=workspace:lots"], "--memPoolSize"),
        # One value per --memPoolSize: the model after it is still the model.
        (["build", "--memPoolSize", "workspace:lots", str(model), "-o", str(tmp_path / "m.engine")], "--memPoolSize"),
        (["build", str(model), "-o", str(tmp_path / "m.engine"), "--stronglyTyped", "--fp16"], "--stronglyTyped"),
        (["build", str(model), "-o", str(tmp_path / "m.engine"), "--builderOptimizationLevel=9"], "0 to 5"),
    ]
    for args, part in cases:
        proc = run(*args, "--progress", "json")
        assert proc.returncode == 2, (args, proc.stderr)
        assert part in proc.stderr, (args, proc.stderr)
        assert proc.stdout == "", args  # nothing started: no event stream
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


# --- A TensorRT-enabled trtwatch (compiled against tests/tensorrt_double) with the
# double's stand-in libraries present (on LD_LIBRARY_PATH) or absent.

DOUBLE_BIN = os.environ.get("TRTWATCH_DOUBLE_BIN")
FAKE_TENSORRT_DIR = os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR")
needs_double = pytest.mark.skipif(not DOUBLE_BIN, reason="built without TRTWATCH_TENSORRT_DOUBLE_TESTS")


FAKE_DRIVER_DIR = os.environ.get("TRTWATCH_FAKE_DRIVER_DIR")


def run_double(*args, libraries, driver=False, env=None, timeout=120):
    """Runs the double-built trtwatch with TensorRT's stand-in libraries present or not,
    and with the stand-in NVIDIA driver (libcuda.so.1, libnvidia-ml.so.1) or not."""
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("TRTWATCH_PROGRESS", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")}
    paths = ([FAKE_TENSORRT_DIR] if libraries else []) + ([FAKE_DRIVER_DIR] if driver else [])
    if paths:
        full_env["LD_LIBRARY_PATH"] = ":".join(paths)
    full_env.update(env or {})
    return subprocess.run([DOUBLE_BIN, *args], capture_output=True, text=True, timeout=timeout, env=full_env)


@needs_double
def test_tensorrt_build_without_tensorrt_installed_still_runs_everything_else(tmp_path):
    doc = json.loads(run_double("doctor", "--json", libraries=False).stdout)
    assert doc["trtwatch"]["tensorrt_headers"] == "10.99.0"
    runtime = doc["tensorrt_runtime"]
    assert runtime["found"] is False and runtime["tried"] == ["libnvinfer.so.10"]  # the compiled major only
    trt = {b["name"]: b for b in doc["backends"]}["tensorrt"]
    assert trt["built"] is True and trt["ready"] is False
    text = run_double("doctor", libraries=False)
    assert text.returncode == 0 and "TensorRT at run time: not found (tried libnvinfer.so.10)" in text.stdout

    sim = run_double("build", "--simulate", "small-cnn", "--speed", "50", "--progress", "plain", libraries=False)
    assert sim.returncode == 0, sim.stderr

    model = tmp_path / "m.onnx"
    model.write_bytes(b"onnx")
    real = run_double("build", str(model), "-o", str(tmp_path / "m.plan"), libraries=False)
    assert real.returncode == 2, real.stderr
    assert "TensorRT 10 is not installed" in real.stderr and "libnvinfer.so.10" in real.stderr
    assert "LD_LIBRARY_PATH" in real.stderr and real.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]


@needs_double
def test_tensorrt_build_serves_simulated_builds_without_tensorrt(tmp_path, monkeypatch):
    import service_client
    monkeypatch.setattr(service_client, "BIN", DOUBLE_BIN)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    server = service_client.Server(tmp_path).start()
    try:
        build = server.submit({"simulate": "small-cnn", "speed": 50})
        assert server.wait_status(build["id"], {"succeeded", "failed"})["status"] == "succeeded"
    finally:
        server.stop()


@needs_double
def test_the_service_keeps_a_real_builds_engine_with_its_size(tmp_path, monkeypatch):
    import service_client
    monkeypatch.setattr(service_client, "BIN", DOUBLE_BIN)
    monkeypatch.setenv("LD_LIBRARY_PATH", FAKE_TENSORRT_DIR)
    models = tmp_path / "models"
    models.mkdir()
    (models / "m.onnx").write_bytes(b"onnx")
    server = service_client.Server(tmp_path, "--model-root", str(models)).start()
    try:
        build = server.submit({"model": "m.onnx", "options": {"fp16": True}})
        record = server.wait_status(build["id"], {"succeeded", "failed"})
        assert record["status"] == "succeeded", record
        assert record["engine_bytes"] == record["engine"]["size"] == os.path.getsize(record["engine"]["path"]) > 0
    finally:
        server.stop()


@needs_double
def test_doctor_compares_compiled_and_loaded_versions():
    same = json.loads(run_double("doctor", "--json", libraries=True).stdout)["tensorrt_runtime"]
    assert same["found"] and same["version"] == "10.99.0" and same["matches_headers"] is True
    assert same["path"].startswith(FAKE_TENSORRT_DIR) and same["onnx_parser"] and same["plugins"]
    assert same["version_note"] is None

    older = json.loads(run_double("doctor", "--json", libraries=True,
                                  env={"FAKE_TENSORRT_LIB_VERSION": "100300"}).stdout)["tensorrt_runtime"]
    assert older["matches_headers"] is True and "older than the headers" in older["version_note"]

    other = run_double("doctor", libraries=True, env={"FAKE_TENSORRT_LIB_VERSION": "9200"})
    assert other.returncode == 0
    assert "MISMATCH: built with TensorRT 10.99.0 headers, loaded 9.2.0" in other.stdout


@needs_double
def test_a_mismatched_library_refuses_the_build_with_the_fix(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"onnx")
    proc = run_double("build", str(model), "-o", str(tmp_path / "m.plan"), libraries=True,
                      env={"FAKE_TENSORRT_LIB_VERSION": "9200"})
    assert proc.returncode == 2
    assert "built against TensorRT 10.99.0 but loaded libnvinfer 9.2.0" in proc.stderr


@needs_double
def test_builds_against_the_stand_in_libraries(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"onnx")
    proc = run_double("build", str(model), "-o", str(tmp_path / "m.plan"), "--progress", "json", libraries=True)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    start = events[0]
    assert start["type"] == "build_start" and start["backend"] == "tensorrt"
    assert start["facts"]["tensorrt_version"] == "10.99.0"
    assert (tmp_path / "m.plan").read_bytes().startswith(b"FAKE-ENGINE")


@needs_double
def test_device_picks_the_gpu_in_cudas_numbering(tmp_path):
    # The stand-in machine: NVML lists GPU A then H (PCI order), CUDA numbers H then A.
    model = tmp_path / "m.onnx"
    model.write_bytes(b"onnx")

    def facts(*args, env=None):
        proc = run_double("build", str(model), "-o", str(tmp_path / "m.plan"), "--progress", "json", *args,
                          libraries=True, driver=True, env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.splitlines()[0])["facts"]

    first = facts()
    assert (first["gpu"], first["gpu_device"], first["gpu_count"]) == ("Fake GPU H", "0", "2")
    assert first["gpu_uuid"] == "GPU-00000000-0000-0000-0000-000000000001" and "gpu_note" not in first
    second = facts("--device=1")
    assert (second["gpu"], second["gpu_device"], second["gpu_compute_capability"]) == ("Fake GPU A", "1", "8.0")
    hidden = facts(env={"CUDA_VISIBLE_DEVICES": "1"})
    assert (hidden["gpu"], hidden["gpu_device"], hidden["gpu_count"]) == ("Fake GPU A", "0", "1")

    missing = run_double("build", str(model), "-o", str(tmp_path / "refused.plan"), "--device=1", libraries=True,
                         driver=True, env={"CUDA_VISIBLE_DEVICES": "1"})
    assert missing.returncode == 2
    assert "--device=1: CUDA has no device 1: it sees 1, numbered 0-0 (CUDA_VISIBLE_DEVICES=1)" in missing.stderr
    no_driver = run_double("build", str(model), "-o", str(tmp_path / "refused.plan"), "--device=0", libraries=True)
    assert no_driver.returncode == 2 and "libcuda.so.1" in no_driver.stderr
    assert not (tmp_path / "refused.plan").exists()

    doctor = run_double("doctor", libraries=True, driver=True, env={"CUDA_VISIBLE_DEVICES": "1"})
    assert "  0: Fake GPU A, compute capability 8.0, 80.0 GiB (NVML 0, PCI 0000:3b:00.0)" in doctor.stdout
    assert "  hidden from CUDA (CUDA_VISIBLE_DEVICES): Fake GPU H" in doctor.stdout


def run_double_in(folder, *args, env=None):
    full_env = {k: v for k, v in os.environ.items() if k not in ("TRTWATCH_PROGRESS",)}
    full_env["LD_LIBRARY_PATH"] = FAKE_TENSORRT_DIR
    full_env.update(env or {})
    return subprocess.run([DOUBLE_BIN, *args], capture_output=True, text=True, timeout=120, env=full_env, cwd=folder)


@needs_double
def test_trtexec_command_lines_run_unchanged(tmp_path):
    (tmp_path / "m.onnx").write_bytes(b"onnx")
    first = run_double_in(tmp_path, "build", "--onnx=m.onnx", "--saveEngine=m.plan", "--best", "--skipInference")
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "m.plan").exists()
    notices = [line for line in first.stderr.splitlines() if "ignored (trtexec's inference options" in line]
    assert len(notices) == 1 and "--skipInference" in notices[0], first.stderr

    (tmp_path / "m.plan").unlink()
    second = run_double_in(tmp_path, "build", "--onnx=m.onnx", "--minShapes=x:1x3x224x224",
                           "--maxShapes=x:8x3x224x224", "--fp16", "--timingCacheFile=t.cache",
                           env={"FAKE_TENSORRT_INPUTS": "x:-1x3x224x224"})
    assert second.returncode == 0, second.stderr
    assert "--optShapes not given for \"x\": using --maxShapes (8x3x224x224)" in second.stderr
    # No --saveEngine: built, not saved (as trtexec); the timing cache is written.
    assert "the engine is built and not saved" in second.stderr
    assert not (tmp_path / "m.plan").exists() and (tmp_path / "t.cache").read_bytes().startswith(b"FAKECACHE")


@needs_double
def test_inference_and_refused_options(tmp_path):
    (tmp_path / "m.onnx").write_bytes(b"onnx")
    ok = run_double_in(tmp_path, "build", "m.onnx", "-o", "m.plan", "--iterations=10", "--warmUp", "200",
                       "--duration=3", "--useCudaGraph", "--noDataTransfers", "--separateProfileRun",
                       "--dumpProfile", "--exportTimes=t.json")
    assert ok.returncode == 0, ok.stderr
    assert "--iterations --warmUp --duration --useCudaGraph" in ok.stderr
    assert not (tmp_path / "t.json").exists()
    refused = run_double_in(tmp_path, "build", "m.onnx", "-o", "x.plan", "--loadEngine=m.plan")
    assert refused.returncode == 2 and "--loadEngine: trtwatch builds engines" in refused.stderr
    assert not (tmp_path / "x.plan").exists()
    maxthreads_help = run_double_in(tmp_path, "build", "--help").stdout
    assert "trtwatch's own option" in maxthreads_help


@needs_double
def test_several_profiles_from_the_command_line(tmp_path):
    (tmp_path / "m.onnx").write_bytes(b"onnx")
    proc = run_double_in(tmp_path, "build", "m.onnx", "-o", "m.plan", "--profile=0", "--minShapes=x:1x4",
                         "--optShapes=x:2x4", "--maxShapes=x:4x4", "--profile=1", "--optShapes=x:8x4",
                         env={"FAKE_TENSORRT_INPUTS": "x:-1x4"})
    assert proc.returncode == 0, proc.stderr
    assert "--minShapes not given for \"x\" (--profile=1): using --optShapes (8x4)" in proc.stderr


@needs_double
def test_two_builds_sharing_one_timing_cache_both_land_their_entries(tmp_path):
    (tmp_path / "m.onnx").write_bytes(b"onnx")
    env = {k: v for k, v in os.environ.items() if k != "TRTWATCH_PROGRESS"}
    env.update({"LD_LIBRARY_PATH": FAKE_TENSORRT_DIR, "FAKE_TENSORRT_STEP_MS": "4"})
    procs = []
    for key in ("first", "second"):
        procs.append(subprocess.Popen(
            [DOUBLE_BIN, "build", "m.onnx", "-o", f"{key}.plan", "--timing-cache", "shared.cache", "--progress", "quiet"],
            cwd=tmp_path, env={**env, "FAKE_TENSORRT_CACHE_KEY": key}, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    blob = (tmp_path / "shared.cache").read_text()
    for key in ("first", "second"):
        for n in range(4):
            assert f"{key}{n}|" in blob, blob


@needs_double
def test_timing_cache_merge_combines_tensorrt_caches_of_one_gpu(tmp_path):
    """`trtwatch timing-cache merge` on TensorRT's caches: ITimingCache::combine, with the
    TensorRT loaded (the double's cache format: FAKECACHE;device=...;keys=...)."""
    def blob(device, keys):
        return f"FAKECACHE;device={device};entries={len(keys)};keys={''.join(k + '|' for k in keys)}"
    (tmp_path / "a.cache").write_text(blob("fake-gpu", ["a0", "a1"]))
    (tmp_path / "b.cache").write_text(blob("fake-gpu", ["a1", "b0"]))
    (tmp_path / "other.cache").write_text(blob("other-gpu", ["c0"]))
    proc = run_double_in(tmp_path, "timing-cache", "merge", "a.cache", "b.cache", "-o", "m.cache")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "m.cache").read_text() == blob("fake-gpu", ["a0", "a1", "b0"])
    proc = run_double_in(tmp_path, "timing-cache", "merge", "a.cache", "other.cache", "-o", "x.cache")
    assert proc.returncode == 1 and "a cache holds one GPU's timings" in proc.stderr, proc.stderr
    assert "TensorRT 10" in proc.stderr and not (tmp_path / "x.cache").exists()
