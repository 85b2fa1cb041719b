"""`trtwatch doctor` and `trtwatch build MODEL.onnx` as a user sees them on this machine.

Truthful either way: the expectations follow what this machine has (an NVIDIA driver
or not, a TensorRT backend in the binary or not), checked independently of trtwatch.
"""
import ctypes
import json
import os

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
        (["build", str(model)], "-o ENGINE"),
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
