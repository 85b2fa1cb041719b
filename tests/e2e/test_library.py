"""The library as a user gets it: `cmake --install` (and the .deb), then examples/cpp
built from the installed package alone, against the TensorRT TEST DOUBLE standing in
for the user's TensorRT (tests/tensorrt_double, built as stand-in libnvinfer.so and libnvonnxparser.so)."""
import json
import os
import pathlib
import shutil
import signal
import subprocess

import jsonschema
import pytest

from conftest import SOURCE_DIR

BUILD_DIR = pathlib.Path(os.environ.get("TRTWATCH_BUILD_DIR", SOURCE_DIR / "build"))
# The double's stand-in libnvinfer/libnvonnxparser (10.x shape), as TensorRT ships them.
FAKE_TENSORRT_DIR = pathlib.Path(os.environ.get("TRTWATCH_FAKE_TENSORRT_DIR", BUILD_DIR / "fake_tensorrt" / "10"))
# The stand-in CUDA driver (libcuda.so.1), whose GPU a build key names.
FAKE_DRIVER_DIR = pathlib.Path(os.environ.get("TRTWATCH_FAKE_DRIVER_DIR", BUILD_DIR / "fake_driver"))

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("TRTWATCH_SANITIZE")),
    reason="the installed-package test runs in the release build; a sanitizer build's library needs its runtime",
)


def check(*args, **kwargs):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True, **kwargs)


def build_examples(prefix, tensorrt_root, out):
    check("cmake", "-S", SOURCE_DIR / "examples" / "cpp", "-B", out, "-G", "Ninja",
          f"-DCMAKE_PREFIX_PATH={prefix}", f"-DTensorRT_ROOT={tensorrt_root}", "-DCMAKE_BUILD_TYPE=Release")
    check("cmake", "--build", out)
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The install prefix, a TensorRT root made of the double, and the built examples."""
    root = tmp_path_factory.mktemp("library")
    prefix = root / "prefix"
    check("cmake", "--install", BUILD_DIR, "--prefix", prefix)

    tensorrt = root / "tensorrt"
    (tensorrt / "include").mkdir(parents=True)
    (tensorrt / "lib").mkdir()
    for header in (SOURCE_DIR / "tests" / "tensorrt_double").glob("Nv*.h"):
        shutil.copy(header, tensorrt / "include")
    for library in [*FAKE_TENSORRT_DIR.glob("libnvinfer.so*"), *FAKE_TENSORRT_DIR.glob("libnvonnxparser.so*")]:
        shutil.copy(library, tensorrt / "lib")

    examples = build_examples(prefix, tensorrt, root / "examples")
    model = root / "model.onnx"
    model.write_bytes(b"an ONNX model (the double's parser only opens it)")
    return {"root": root, "prefix": prefix, "tensorrt": tensorrt, "examples": examples, "model": model}


def env_for(installed, step_ms=0):
    env = dict(os.environ)
    env.pop("TRTWATCH_PROGRESS", None)
    env["LD_LIBRARY_PATH"] = str(installed["tensorrt"] / "lib")
    env["FAKE_TENSORRT_STEP_MS"] = str(step_ms)
    return env


def example(installed, name, *args, step_ms=0, **kwargs):
    return subprocess.run([str(installed["examples"] / name), str(installed["model"]), *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=env_for(installed, step_ms), **kwargs)


def events_of(text, schema):
    events = [json.loads(line) for line in text.splitlines() if line.strip()]
    validator = jsonschema.Draft202012Validator(schema)
    for event in events:
        validator.validate(event)
    assert [e["seq"] for e in events] == sorted({e["seq"] for e in events})
    assert events[0]["type"] == "build_start" and events[-1]["type"] == "build_finish"
    return events


def test_installed_package_holds_headers_library_config_and_no_source_paths(installed):
    prefix = installed["prefix"]
    for path in ["bin/trtwatch", "include/trtwatch/watch.h", "include/trtwatch/tensorrt.h", "lib/libtrtwatch.a",
                 "lib/cmake/trtwatch/trtwatchConfig.cmake", "lib/cmake/trtwatch/trtwatchConfigVersion.cmake",
                 "lib/pkgconfig/trtwatch.pc"]:
        assert (prefix / path).exists(), path
    for config in (prefix / "lib" / "cmake" / "trtwatch").glob("*.cmake"):
        assert str(SOURCE_DIR) not in config.read_text(), f"{config.name} points into the source tree"
    assert not any(p.name.endswith(".h") and p.parent.name != "trtwatch" for p in (prefix / "include").rglob("*"))


def test_example_builds_with_nested_progress_from_several_threads(installed, schema, tmp_path):
    engine = tmp_path / "model.engine"
    # Steps that take a few ms, as real ones do, so the builder threads overlap.
    proc = example(installed, "build_engine", engine, "--progress", "json", step_ms=5)
    assert proc.returncode == 0, proc.stderr
    assert engine.read_bytes().startswith(b"FAKE-ENGINE")
    events = events_of(proc.stdout, schema)
    assert events[-1]["status"] == "succeeded"
    assert events[0]["facts"]["tensorrt_headers"] == "10.99.0"
    root = next(e for e in events if e["type"] == "phase_start" and e["parent"] is None)
    workers = [e for e in events if e["type"] == "phase_start" and e["parent"] == root["id"]]
    assert len(workers) == 12  # 3 root steps x 4 builder threads
    # Several builder threads report at once: worker phases overlap in the stream.
    open_ids, most_open = set(), 0
    worker_ids = {w["id"] for w in workers}
    for e in events:
        if e["type"] == "phase_start" and e["id"] in worker_ids:
            open_ids.add(e["id"])
            most_open = max(most_open, len(open_ids))
        elif e["type"] == "phase_finish":
            open_ids.discard(e["id"])
    assert most_open >= 2


def test_example_plain_progress_is_nested_and_escape_free(installed, tmp_path):
    proc = example(installed, "build_engine", tmp_path / "m.engine", "--progress", "plain")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stderr

    def indent(line):  # "[    0.1s]   text": spaces after the time column
        text = line.split("] ", 1)[1]
        return len(text) - len(text.lstrip(" "))

    root = [line for line in proc.stderr.splitlines() if "] Building engine" in line]
    workers = [line for line in proc.stderr.splitlines() if "Timing tactics" in line]
    assert root and workers, proc.stderr
    assert all(indent(line) > indent(root[0]) for line in workers), proc.stderr


def test_example_timeout_ends_timed_out_without_an_engine(installed, schema, tmp_path):
    engine = tmp_path / "m.engine"
    proc = example(installed, "build_engine", engine, "--progress", "json", "--timeout", "0.3", step_ms=20)
    assert proc.returncode == 124, proc.stderr
    events = events_of(proc.stdout, schema)
    assert events[-1]["status"] == "timed_out"
    assert any(e["type"] == "cancel_requested" and e["reason"] == "timeout" for e in events)
    assert not engine.exists() and not list(tmp_path.iterdir()), "no engine and no partial file"


def test_example_sigint_cancels_at_the_next_step(installed, schema, tmp_path):
    engine = tmp_path / "m.engine"
    proc = subprocess.Popen([str(installed["examples"] / "build_engine"), str(installed["model"]), str(engine),
                             "--progress", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env_for(installed, step_ms=20))
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if json.loads(line)["type"] == "step":
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    events = events_of("".join(lines) + out, schema)
    cancel = next(e for e in events if e["type"] == "cancel_requested")
    assert cancel["reason"] == "signal"
    finish = events[-1]
    assert finish["status"] == "cancelled"
    # Stopped at the next step: well inside one root step (25 steps of 20 ms per thread).
    assert finish["cancel_latency"]["to_return"] < 0.5, finish
    assert any(e["type"] == "phase_finish" and e["early"] for e in events)
    assert not engine.exists()


def test_custom_sink_example_sees_every_phase(installed, tmp_path):
    proc = example(installed, "custom_sink", tmp_path / "m.engine")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("finished Timing tactics") == 12
    assert "succeeded in" in proc.stdout and "13 phases finished" in proc.stdout


def test_cached_engine_example_builds_once_then_reuses_the_engine(installed, schema, tmp_path):
    model = tmp_path / "model.onnx"
    model.write_bytes(b"\x08\x08")  # a ModelProto (ir_version 8): the key reads its external data
    env = env_for(installed)
    env["LD_LIBRARY_PATH"] += os.pathsep + str(FAKE_DRIVER_DIR)

    def cached_engine(engine):
        return subprocess.run([str(installed["examples"] / "cached_engine"), str(model), str(engine),
                               "--cache", str(tmp_path / "cache"), "--progress", "json"],
                              capture_output=True, text=True, timeout=120, env=env)

    first = cached_engine(tmp_path / "a.engine")
    assert first.returncode == 0, first.stderr
    built = events_of(first.stdout, schema)
    assert built[0]["cache"] == "miss" and len(built[0]["key"]) == 64
    assert built[-1]["cache"] == "miss" and built[-1]["status"] == "succeeded"
    assert "miss: built in" in first.stderr and ", stored" in first.stderr, first.stderr
    second = cached_engine(tmp_path / "b.engine")
    assert second.returncode == 0, second.stderr
    hit = events_of(second.stdout, schema)
    assert hit[0]["cache"] == "hit" and hit[0]["key"] == built[0]["key"]
    assert hit[-1]["status"] == "succeeded" and hit[-1]["cache_built_seconds"] >= 0
    assert not any(e["type"] == "phase_start" for e in hit), "a hit runs no builder"
    assert "hit: engine built" in second.stderr, second.stderr
    assert (tmp_path / "b.engine").read_bytes() == (tmp_path / "a.engine").read_bytes()
    assert (tmp_path / "a.engine").read_bytes().startswith(b"FAKE-ENGINE")


def test_pkg_config_compiles_a_program(installed, tmp_path):
    source = tmp_path / "hello.cc"
    source.write_text(
        "#include <trtwatch/trtwatch.h>\n"
        "int main() {\n"
        "  trtwatch::Watch watch({.progress = trtwatch::Progress::kQuiet});\n"
        "  return watch.Run([&] { watch.phaseStart(\"Building engine\", nullptr, 1);\n"
        "                         bool go = watch.stepComplete(\"Building engine\", 0);\n"
        "                         watch.phaseFinish(\"Building engine\"); return go; }).exit_code;\n"
        "}\n")
    env = dict(os.environ, PKG_CONFIG_PATH=str(installed["prefix"] / "lib" / "pkgconfig"))
    flags = check("pkg-config", "--cflags", "--libs", "--static", "trtwatch", env=env).stdout.split()
    check("g++", "-std=c++20", "-o", tmp_path / "hello", source, *flags)
    assert subprocess.run([str(tmp_path / "hello")], timeout=30).returncode == 0


def test_debian_package_installs_a_usable_library(installed, tmp_path):
    check("cpack", "-G", "DEB", "-B", tmp_path / "pkg", "--config", BUILD_DIR / "CPackConfig.cmake")
    debs = list((tmp_path / "pkg").glob("trtwatch_*_amd64.deb"))
    assert len(debs) == 1, list((tmp_path / "pkg").iterdir())
    fields = check("dpkg-deb", "--field", debs[0], "Package", "Version", "Depends").stdout
    assert "Package: trtwatch" in fields and "libsqlite3" in fields, fields
    root = tmp_path / "root"
    check("dpkg-deb", "--extract", debs[0], root)
    assert (root / "usr" / "bin" / "trtwatch").exists()
    examples = build_examples(root / "usr", installed["tensorrt"], tmp_path / "examples")
    proc = subprocess.run([str(examples / "build_engine"), str(installed["model"]), str(tmp_path / "m.engine"),
                           "--progress", "quiet"], capture_output=True, text=True, timeout=60,
                          env=env_for(installed))
    assert proc.returncode == 0, proc.stderr
