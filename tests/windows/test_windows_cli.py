"""trtwatch.exe (cross-built with MinGW-w64) under Wine: the event stream, exit codes,
plain output without escape bytes, the timeout, the atomic replace of --trace files,
Ctrl+C (as Wine delivers a terminal's Ctrl+C, and as Ctrl+Break through
tests/windows/ctrl_break.cc where the console allows), and `serve`'s message.

Each run starts Wine again (~1-3 s): the tests are few and use fast simulated builds."""
import json
import os
import pathlib
import signal
import subprocess
import time

import jsonschema
import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("TRTWATCH_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
EXE = os.environ["TRTWATCH_EXE"]
WINE = os.environ["TRTWATCH_WINE"]
CTRL_BREAK = os.environ.get("TRTWATCH_CTRL_BREAK")
# Wine 8 without a display gives console programs a console that cannot deliver control
# events (GenerateConsoleCtrlEvent fails with error 12), so these run only where
# TRTWATCH_CONSOLE_EVENTS=1 says the console can (real Windows).
CONSOLE_EVENTS = os.environ.get("TRTWATCH_CONSOLE_EVENTS") == "1"


def run(*args, cwd=None, timeout=180, program=None, env=None):
    env = {**os.environ, **(env or {})}
    env.setdefault("WINEDEBUG", "-all")
    for name in ("TRTWATCH_PROGRESS", "CI", "TF_BUILD", "NO_COLOR", "CLICOLOR_FORCE", "FORCE_COLOR"):
        env.pop(name, None)
    command = [WINE, *(program or [EXE]), *args]
    return subprocess.run(command, capture_output=True, timeout=timeout, env=env, cwd=cwd)


def events(stdout):
    return [json.loads(line) for line in stdout.decode("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def schema():
    with open(SOURCE_DIR / "docs" / "events.schema.json") as f:
        return json.load(f)


def test_json_stream_is_valid_and_exit_is_zero(schema):
    r = run("build", "--simulate", "small-cnn", "--speed", "20", "--progress", "json")
    assert r.returncode == 0, r.stderr
    assert b"\r\n" not in r.stdout  # JSON lines, the same bytes as on Linux
    stream = events(r.stdout)
    for event in stream:
        jsonschema.validate(event, schema)
    seqs = [e["seq"] for e in stream]
    assert seqs == sorted(set(seqs)), "seq strictly increases (coalesced steps may skip numbers)"
    assert stream[0]["type"] == "build_start" and stream[-1]["type"] == "build_finish"
    assert stream[-1]["status"] == "succeeded"


def test_plain_output_redirected_has_no_escape_bytes():
    r = run("build", "--simulate", "small-cnn", "--speed", "20", "--progress", "auto")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b""
    assert b"\x1b" not in r.stderr
    assert b"succeeded" in r.stderr


def test_forced_tty_on_a_pipe_is_a_usage_error():
    r = run("build", "--simulate", "small-cnn", "--progress", "tty")
    assert r.returncode == 2
    assert b"terminal" in r.stderr


def test_timeout_exits_124_with_timed_out():
    r = run("build", "--simulate", "large-transformer", "--timeout", "1s", "--progress", "json")
    assert r.returncode == 124, r.stderr
    finish = events(r.stdout)[-1]
    assert finish["type"] == "build_finish" and finish["status"] == "timed_out"


def test_failed_build_exits_1_and_usage_error_2():
    assert run("build", "--simulate", "failing", "--speed", "20", "--progress", "plain").returncode == 1
    r = run("build", "--simulate", "no-such-profile")
    assert r.returncode == 2
    assert b"no-such-profile" in r.stderr


def test_trace_and_events_files_replace_existing_ones(tmp_path):
    for speed in ("20", "25"):  # the second run replaces both files
        r = run("build", "--simulate", "small-cnn", "--speed", speed, "--progress", "quiet",
                "--trace", "timeline.json", "--events", "events.jsonl", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        trace = json.loads((tmp_path / "timeline.json").read_text())
        assert trace["traceEvents"]
        stream = events((tmp_path / "events.jsonl").read_bytes())
        assert stream[0]["facts"]["speed"] == speed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl", "timeline.json"]


def test_paths_outside_the_ansi_code_page(tmp_path):
    # Names no ANSI code page spells: they reach trtwatch through the wide command line
    # and are opened with the wide-character calls (a profile, the events, the trace).
    (tmp_path / "模型-ü.json").write_bytes((SOURCE_DIR / "profiles" / "small-cnn.json").read_bytes())
    r = run("build", "--simulate", "模型-ü.json", "--speed", "50", "--progress", "quiet",
            "--events", "事件-ü.jsonl", "--trace", "跟踪-ü.json", cwd=tmp_path, env={"LC_ALL": "C.UTF-8"})
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    assert events((tmp_path / "事件-ü.jsonl").read_bytes())[-1]["status"] == "succeeded"
    assert json.loads((tmp_path / "跟踪-ü.json").read_text(encoding="utf-8"))["traceEvents"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["事件-ü.jsonl", "模型-ü.json", "跟踪-ü.json"]


def test_serve_explains_it_is_not_available():
    r = run("serve")
    assert r.returncode == 2
    assert b"not part of this trtwatch" in r.stderr
    assert b"docs/windows.md" in r.stderr


def run_with_ctrl_c(args, presses, gap=0.5):
    """Runs trtwatch.exe and presses Ctrl+C `presses` times once the build has started.
    Under Wine a terminal's Ctrl+C reaches a console program as SIGINT to its process,
    which Wine turns into CTRL_C_EVENT for the handlers registered with
    SetConsoleCtrlHandler: the same handler and event a Windows console gives."""
    env = dict(os.environ)
    env.setdefault("WINEDEBUG", "-all")
    env.pop("TRTWATCH_PROGRESS", None)
    proc = subprocess.Popen([WINE, EXE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        first = proc.stdout.readline()  # build_start: the console handler is in place
        for i in range(presses):
            if i:
                time.sleep(gap)
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, first + out, err


def test_ctrl_c_cancels_cooperatively_with_130():
    code, out, err = run_with_ctrl_c(["build", "--simulate", "small-cnn", "--speed", "0.2", "--progress", "json"], 1)
    stream = events(out)
    assert code == 130, (code, err)
    assert stream[0]["type"] == "build_start"
    cancel = [e for e in stream if e["type"] == "cancel_requested"]
    assert cancel and cancel[0]["reason"] == "signal" and "Ctrl+C" in cancel[0]["message"]
    assert stream[-1]["type"] == "build_finish" and stream[-1]["status"] == "cancelled"
    assert b"press Ctrl+C again to force" in err


def test_second_ctrl_c_forces_130():
    # --speed 0.001: each step takes many seconds, so the first cancel is still waiting for
    # the next step when the second Ctrl+C comes.
    code, _, err = run_with_ctrl_c(["build", "--simulate", "small-cnn", "--speed", "0.001", "--progress", "json"], 2)
    assert code == 130, (code, err)
    assert b"forced exit" in err


@pytest.mark.skipif(not (CTRL_BREAK and CONSOLE_EVENTS), reason="needs a console that delivers control events")
def test_ctrl_break_cancels_cooperatively_with_130():
    r = run("build", "--simulate", "large-transformer", "--progress", "json",
            program=[CTRL_BREAK, "3000", EXE])
    stream = events(r.stdout)
    assert r.returncode == 130, (r.returncode, r.stderr)
    cancel = [e for e in stream if e["type"] == "cancel_requested"]
    assert cancel and cancel[0]["reason"] == "signal" and "Ctrl+C" in cancel[0]["message"]
    assert stream[-1]["type"] == "build_finish" and stream[-1]["status"] == "cancelled"


@pytest.mark.skipif(not (CTRL_BREAK and CONSOLE_EVENTS), reason="needs a console that delivers control events")
def test_second_ctrl_break_forces_130():
    # --speed 0.05: each step takes long, so the first cancel is still waiting when
    # the second event comes.
    r = run("build", "--simulate", "large-transformer", "--speed", "0.05", "--progress", "plain",
            program=[CTRL_BREAK, "3000,500", EXE])
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert b"forced exit" in r.stderr
