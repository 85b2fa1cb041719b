"""`trtwatch run -- COMMAND` attached to unmodified programs that build TensorRT engines
(docs/attach.md), on the ABI-faithful TensorRT test double of 10.x and 11.x
(tests/tensorrt_abi_double) with the test programs of tests/attach: one loading
libnvinfer as trtexec does (dlopen + dlsym), one linked to it."""
import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

from conftest import BIN, parse_stream, validate_events

BUILD_DIR = pathlib.Path(os.environ.get("TRTWATCH_BUILD_DIR", pathlib.Path(BIN).parent))
PROGRAMS = BUILD_DIR / "attach_tests"
MAJORS = (10, 11)
pytestmark = pytest.mark.skipif(not PROGRAMS.is_dir(), reason="the attach test programs are not built")


def program(major, loader="dlopen"):
    return str(PROGRAMS / f"attach_{loader}_builder{major}")


def environment(major, **extra):
    """The environment of a machine with (the double of) TensorRT `major` installed."""
    env = dict(os.environ)
    env.pop("TRTWATCH_PROGRESS", None)
    env["LD_LIBRARY_PATH"] = str(BUILD_DIR / "fake_tensorrt_abi" / str(major))
    env["TRTWATCH_HISTORY"] = "off"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run(major, args, timeout=60, **extra):
    return subprocess.run([BIN, "run", *args], capture_output=True, text=True, timeout=timeout,
                          env=environment(major, **extra))


def bare(major, args, **extra):
    return subprocess.run(args, capture_output=True, text=True, timeout=60, env=environment(major, **extra))


def streams(tmp_path):
    """The event streams written with --events tmp_path/events-{n}.jsonl, by build number."""
    found = {}
    for path in tmp_path.glob("events-*.jsonl"):
        found[int(path.stem.split("-")[1])] = parse_stream(path.read_text())
    return found


def finish(events):
    return next(e for e in events if e["type"] == "build_finish")


@pytest.mark.parametrize("major", MAJORS)
@pytest.mark.parametrize("loader", ["dlopen", "linked"])
def test_a_build_call_is_a_watched_build_and_the_program_runs_as_without(major, loader, tmp_path, schema):
    events = str(tmp_path / "events-{n}.jsonl")
    done = run(major, ["--progress", "plain", "--events", events, "--", program(major, loader)])
    assert done.returncode == 0, done.stderr
    assert done.stdout == bare(major, [program(major, loader)]).stdout  # COMMAND's output, untouched
    assert "build succeeded" in done.stderr
    [stream] = streams(tmp_path).values()
    validate_events(stream, schema)
    assert stream[0]["type"] == "build_start" and stream[0]["backend"] == "tensorrt"
    assert {"Building engine", "Timing worker 0", "Serializing"} <= {e.get("phase") for e in stream}
    assert finish(stream)["status"] == "succeeded"


@pytest.mark.parametrize("major", MAJORS)
def test_the_programs_own_monitor_gets_exactly_its_callbacks_and_its_cancel_is_obeyed(major, tmp_path):
    args = [program(major), "--own-monitor"]
    assert run(major, ["--progress", "quiet", "--", *args]).stdout == bare(major, args).stdout
    events = str(tmp_path / "events-{n}.jsonl")
    cancelled = run(major, ["--progress", "quiet", "--events", events, "--", program(major), "--own-cancel-at", "3"])
    assert cancelled.returncode == 3  # COMMAND's own code: its build failed
    # (How many steps the other workers make before they see the refusal is the double's
    # timing, with or without trtwatch: the counts after a cancel are not compared.)
    assert cancelled.stdout.startswith("build 1: failed\nbuilt 0 of 1;")
    assert finish(streams(tmp_path)[1])["status"] == "failed"


@pytest.mark.parametrize("major", MAJORS)
def test_three_builds_from_two_threads_are_three_numbered_builds(major, tmp_path):
    events = str(tmp_path / "events-{n}.jsonl")
    done = run(major, ["--progress", "quiet", "--events", events, "--", program(major, "linked"),
                       "--builds", "3", "--threads", "2", "--call", "engine"])
    assert done.returncode == 0, done.stderr
    found = streams(tmp_path)
    assert sorted(found) == [1, 2, 3]
    assert all(finish(s)["status"] == "succeeded" for s in found.values())
    assert len({s[0]["build"] for s in found.values()}) == 3


@pytest.mark.parametrize("major", MAJORS)
def test_a_forked_child_that_builds_is_attached_too(major, tmp_path):
    events = str(tmp_path / "events-{n}.jsonl")
    # ThreadSanitizer: the child of a process with threads starts threads of its own.
    tsan = (os.environ.get("TSAN_OPTIONS", "") + " die_after_fork=0").strip()
    done = run(major, ["--progress", "quiet", "--events", events, "--", program(major), "--fork"], TSAN_OPTIONS=tsan)
    assert done.returncode == 0, done.stderr
    found = streams(tmp_path)
    assert sorted(found) == [1, 2]
    pids = {dict(s[0]["facts"])["pid"] if isinstance(s[0]["facts"], list) else s[0]["facts"]["pid"]
            for s in found.values()}
    assert len(pids) == 2


def test_a_shell_script_running_two_programs_of_two_versions(tmp_path):
    events = str(tmp_path / "events-{n}.jsonl")
    script = tmp_path / "build.sh"
    script.write_text(f"#!/bin/sh\nset -e\nLD_LIBRARY_PATH=$LD_LIBRARY_PATH:{BUILD_DIR}/fake_tensorrt_abi/11 "
                      f"{program(11, 'linked')}\n{program(10)}\n")
    script.chmod(0o755)
    done = run(10, ["--progress", "quiet", "--events", events, "--", str(script)])
    assert done.returncode == 0, done.stderr
    assert sorted(streams(tmp_path)) == [1, 2]


def test_a_program_that_never_uses_tensorrt_passes_through_untouched():
    done = run(10, ["--", "sh", "-c", "echo out; echo err >&2; exit 7"])
    assert (done.returncode, done.stdout, done.stderr) == (7, "out\n", "err\n")


def test_command_not_found_exits_127_as_a_shell():
    done = run(10, ["--", "no-such-command-of-trtwatch"])
    assert done.returncode == 127
    assert "command not found" in done.stderr


def test_progress_json_is_refused_naming_events_instead():
    done = run(10, ["--progress", "json", "--", "true"])
    assert done.returncode == 2
    assert "--events" in done.stderr


@pytest.mark.parametrize("major", MAJORS)
def test_timeout_cancels_cooperatively_the_program_sees_a_failed_build_and_run_exits_124(major, tmp_path):
    events = str(tmp_path / "events-{n}.jsonl")
    done = run(major, ["--progress", "quiet", "--timeout", "300ms", "--events", events, "--", program(major)],
               TRTWATCH_FAKE_STEP_MS=50)
    assert done.returncode == 124, done.stderr
    assert "build 1: failed" in done.stdout
    stream = streams(tmp_path)[1]
    assert any(e["type"] == "cancel_requested" and e["reason"] == "timeout" for e in stream)
    assert finish(stream)["status"] == "timed_out"


def test_ctrl_c_first_cancels_the_build_then_exits_130(tmp_path):
    out = tmp_path / "program.out"
    with open(out, "w") as stdout:
        proc = subprocess.Popen([BIN, "run", "--progress", "plain", "--", program(10)], stdout=stdout,
                                stderr=subprocess.PIPE, text=True, env=environment(10, TRTWATCH_FAKE_STEP_MS=50))
        seen = ""
        while "Timing worker" not in seen:  # the build is under way
            line = proc.stderr.readline()
            assert line, seen
            seen += line
        proc.send_signal(signal.SIGINT)
        err = seen + proc.communicate(timeout=30)[1]
    assert proc.returncode == 130, err
    assert "cancelling the build at its next step" in err
    assert "build 1: failed" in out.read_text()


def test_a_killed_run_leaves_the_program_to_finish_its_build(tmp_path):
    out = tmp_path / "program.out"
    with open(out, "w") as stdout:
        proc = subprocess.Popen([BIN, "run", "--progress", "plain", "--", program(11)], stdout=stdout,
                                stderr=subprocess.PIPE, text=True, env=environment(11, TRTWATCH_FAKE_STEP_MS=40))
        line = "x"
        while line and "Timing worker" not in line:  # killed mid-build
            line = proc.stderr.readline()
        assert line, "the build never started"
        proc.kill()
        proc.wait(timeout=10)
    deadline = time.monotonic() + 30
    while "built 1 of 1" not in out.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "build 1: built" in out.read_text()


def test_a_command_killed_mid_build_is_said_and_its_build_ends_failed(tmp_path):
    events = str(tmp_path / "events-{n}.jsonl")
    # The shell becomes the builder (exec) and is killed 1 s into its 4 s build.
    script = f"(sleep 1; kill -9 $$) & exec {program(10)}"
    done = run(10, ["--progress", "quiet", "--events", events, "--", "sh", "-c", script], TRTWATCH_FAKE_STEP_MS=200)
    assert done.returncode == 137
    assert "killed by SIGKILL" in done.stderr
    last = finish(streams(tmp_path)[1])
    assert last["status"] == "failed" and "ended during the build" in last["error"]


PYTHON_SCRIPT = """
import ctypes, sys
ctypes.CDLL(sys.argv[1])           # the real library by absolute path, as tensorrt_libs does
bindings = ctypes.CDLL(sys.argv[2])  # then the bindings, linked to libnvinfer.so.N
print("built", bindings.trtwatch_test_build(1))
"""


@pytest.mark.skipif(bool(os.environ.get("TRTWATCH_SANITIZE")),
                    reason="an instrumented module cannot load into the uninstrumented interpreter")
@pytest.mark.parametrize("major", MAJORS)
def test_a_python_module_loaded_as_the_tensorrt_wheel_loads_it_is_attached_with_preload(major, tmp_path):
    script = tmp_path / "build.py"
    script.write_text(PYTHON_SCRIPT)
    real = BUILD_DIR / "fake_tensorrt_abi" / str(major) / f"libnvinfer.so.{major}"
    bindings = PROGRAMS / f"libattach_python_bindings{major}.so"
    events = str(tmp_path / "events-{n}.jsonl")
    python = ["/usr/bin/python3", str(script), str(real), str(bindings)]
    # Without --preload the soname is never searched for: the build runs, unwatched.
    plain = run(major, ["--progress", "quiet", "--events", events, "--", *python])
    assert (plain.returncode, plain.stdout) == (0, "built 1\n"), plain.stderr
    assert streams(tmp_path) == {}
    done = run(major, ["--progress", "quiet", "--preload", str(major), "--events", events, "--", *python])
    assert (done.returncode, done.stdout) == (0, "built 1\n"), done.stderr
    assert finish(streams(tmp_path)[1])["status"] == "succeeded"


def test_ctrl_c_in_a_real_terminal_cancels_the_attached_build_cleanly(tmp_path):
    from terminal_harness import Pane

    out = tmp_path / "program.out"  # kept apart: the live view redraws the lines it drew over
    pane = Pane(tmp_path, ["--", "sh", "-c", f"exec {program(10)} > {out}"], subcommand="run",
                env={"LD_LIBRARY_PATH": environment(10)["LD_LIBRARY_PATH"], "TRTWATCH_HISTORY": "off",
                     "TRTWATCH_FAKE_STEP_MS": "100"})
    try:
        pane.wait_for(lambda text: "Timing worker 0" in text, timeout=15)  # the live view
        pane.keys("C-c")
        pane.wait_for(lambda text: "cancelling the build at its next step" in text, timeout=10)
        assert pane.exit_status() == 130
        assert "build cancelled" in pane.capture()
        assert "build 1: failed" in out.read_text()  # the program saw the failed build TensorRT reports
    finally:
        pane.close()


def test_attached_builds_are_remembered_by_command_call_and_place(tmp_path):
    history = str(tmp_path / "history")
    for _ in range(2):
        done = run(10, ["--progress", "quiet", "--history", history, "--", program(10), "--builds", "2"])
        assert done.returncode == 0, done.stderr
    listed = subprocess.run([BIN, "history", "--history", history, "--json"], capture_output=True, text=True,
                            timeout=60, env=environment(10))
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)
    entries = entries if isinstance(entries, list) else entries.get("builds", entries.get("entries"))
    assert len(entries) == 4
    keys = [e.get("key") or e.get("build_key") for e in entries]
    assert len(set(map(json.dumps, keys))) == 2  # the command's first and second build, each twice


def test_a_stalled_build_is_reported_and_with_cancel_cancelled(tmp_path):
    events = str(tmp_path / "events-{n}.jsonl")
    done = run(11, ["--progress", "quiet", "--stall-timeout", "200ms", "--stall-action", "cancel", "--events", events,
                    "--", program(11), "--own-monitor"], TRTWATCH_FAKE_STEP_MS=700, TRTWATCH_FAKE_STEPS=3)
    assert done.returncode == 124, done.stderr
    stream = streams(tmp_path)[1]
    assert any(e["type"] == "stall" for e in stream)
    assert any(e["type"] == "cancel_requested" and e["reason"] == "stall" for e in stream)
    assert "build 1: failed" in done.stdout


def test_missing_attach_libraries_are_said_and_the_program_runs_unwatched(tmp_path):
    done = run(10, ["--progress", "quiet", "--", program(10)], TRTWATCH_ATTACH_DIR=tmp_path)
    assert done.returncode == 0
    assert "no attach libraries" in done.stderr and "TRTWATCH_ATTACH_DIR" in done.stderr
    assert "build 1: built" in done.stdout


def test_the_real_library_is_found_through_trtwatch_nvinfer_when_nowhere_else(tmp_path):
    env = {"LD_LIBRARY_PATH": ""}
    lost = subprocess.run([BIN, "run", "--progress", "quiet", "--", program(10)], capture_output=True, text=True,
                          timeout=60, env={**environment(10), **env})
    assert "TRTWATCH_NVINFER" in lost.stderr and "build 1: failed" in lost.stdout
    real = BUILD_DIR / "fake_tensorrt_abi" / "10" / "libnvinfer.so.10"
    found = subprocess.run([BIN, "run", "--progress", "quiet", "--", program(10)], capture_output=True, text=True,
                           timeout=60, env={**environment(10), **env, "TRTWATCH_NVINFER": str(real)})
    assert found.returncode == 0, found.stderr
    assert "build 1: built" in found.stdout


def test_a_child_started_by_python_subprocess_closing_descriptors_is_attached(tmp_path):
    # subprocess closes inherited descriptors by default (close_fds=True): the child
    # reaches the run through its address instead, as Model Optimizer's trtexec would.
    events = str(tmp_path / "events-{n}.jsonl")
    script = f"import subprocess, sys; sys.exit(subprocess.run([{program(10)!r}]).returncode)"
    done = run(10, ["--progress", "quiet", "--events", events, "--", "/usr/bin/python3", "-c", script])
    assert done.returncode == 0, done.stderr
    assert finish(streams(tmp_path)[1])["status"] == "succeeded"
