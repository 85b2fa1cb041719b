"""End-to-end tests of `trtwatch build` on the simulator, as a script or CI job uses it."""
import json
import signal
import subprocess
import time

import pytest

from conftest import BIN, parse_stream, run, validate_events


def validate_stream(events, schema):
    validate_events(events, schema)
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)), "seq must strictly increase"
    times = [e["t"] for e in events]
    assert times == sorted(times), "t must not go backwards"
    assert events[0]["type"] == "build_start"
    assert events[-1]["type"] == "build_finish"
    starts = {e["id"]: e for e in events if e["type"] == "phase_start"}
    finishes = [e["id"] for e in events if e["type"] == "phase_finish"]
    assert sorted(finishes) == sorted(starts), "every phase_start has exactly one phase_finish"
    for e in events:
        if e["type"] == "phase_start" and e["parent"] is not None:
            assert e["parent"] in starts


def test_timeout_cancels_cooperatively_and_exits_124(schema):
    proc = run("build", "--simulate", "large-transformer", "--progress", "json", "--timeout", "2s")
    assert proc.returncode == 124, proc.stderr
    events = parse_stream(proc.stdout)
    validate_stream(events, schema)
    types = [e["type"] for e in events]
    cancel = types.index("cancel_requested")
    assert events[cancel]["reason"] == "timeout"
    assert cancel < types.index("build_finish")
    assert events[-1]["status"] == "timed_out"
    assert events[-1]["cancel_latency"]["to_return"] >= 0
    assert any(e["type"] == "phase_finish" and e["early"] for e in events)


def test_successful_build_stream_is_valid_and_says_it_is_simulated(schema):
    proc = run("build", "--simulate", "small-cnn", "--speed", "10", "--progress", "json")
    assert proc.returncode == 0, proc.stderr
    events = parse_stream(proc.stdout)
    validate_stream(events, schema)
    start = events[0]
    assert start["backend"] == "simulated"
    assert start["facts"]["simulated"] == "true"
    assert "no TensorRT" in start["facts"]["note"]
    assert events[-1]["status"] == "succeeded"
    assert events[-1]["error"] is None
    depth = {}
    for e in events:
        if e["type"] == "phase_start":
            depth[e["id"]] = 0 if e["parent"] is None else depth[e["parent"]] + 1
    assert max(depth.values()) == 7


def test_same_seed_gives_the_same_tree_and_another_seed_does_not():
    def tree(seed):
        proc = run("build", "--simulate", "small-cnn", "--speed", "20", "--seed", str(seed), "--progress", "json")
        return [(e["phase"], e["total"]) for e in parse_stream(proc.stdout) if e["type"] == "phase_start"]

    assert tree(5) == tree(5)
    assert tree(5) != tree(6)


def test_failing_build_exits_1_with_the_error(schema):
    proc = run("build", "--simulate", "failing", "--speed", "10", "--progress", "json")
    assert proc.returncode == 1
    events = parse_stream(proc.stdout)
    validate_stream(events, schema)
    assert events[-1]["status"] == "failed"
    assert "Could not find any implementation" in events[-1]["error"]
    assert any(e["type"] == "log" and e["severity"] == "error" for e in events)


def test_events_file_in_plain_mode_and_plain_output_has_no_escape_codes(tmp_path, schema):
    events_file = tmp_path / "events.jsonl"
    proc = run("build", "--simulate", "small-cnn", "--speed", "10", "--progress", "plain", "--events",
               str(events_file))
    assert proc.returncode == 0
    assert proc.stdout == "", "plain mode keeps stdout for scripts"
    assert "\x1b" not in proc.stderr
    assert "SIMULATED build" in proc.stderr
    assert "build succeeded" in proc.stderr
    assert "Building engine: done, 6/6 steps" in proc.stderr
    validate_stream(parse_stream(events_file.read_text()), schema)


def test_quiet_mode_prints_nothing():
    proc = run("build", "--simulate", "small-cnn", "--speed", "20", "--progress", "quiet")
    assert proc.returncode == 0
    assert proc.stdout == "" and proc.stderr == ""


@pytest.mark.parametrize("args, expected", [
    (["--simulate", "no-such-profile"], "unknown profile \"no-such-profile\""),
    (["--simulate", "small-cnn", "--timeout", "soon"], "invalid duration \"soon\""),
    (["--simulate", "small-cnn", "--timeout", "0"], "greater than zero"),
    (["--simulate", "small-cnn", "--speed", "0"], "--speed"),
    (["--simulate", "small-cnn", "--progress", "fancy"], "--progress"),
    (["--simulate", "small-cnn", "--events", "/no/such/dir/e.jsonl"], "cannot write events"),
    ([], "nothing to build"),
])
def test_bad_input_exits_2_with_a_message_naming_the_problem(args, expected):
    proc = run("build", *args)
    assert proc.returncode == 2
    assert expected in proc.stderr
    assert proc.stdout == ""


def test_custom_profile_file(tmp_path):
    profile = tmp_path / "mine.json"
    profile.write_text(json.dumps({
        "name": "mine",
        "root": {"name": "Building engine", "steps": 3, "step_ms": 1,
                 "children": [{"name": "My phase", "at": [1], "steps": 4, "step_ms": 1}]},
    }))
    proc = run("build", "--simulate", str(profile), "--progress", "json")
    assert proc.returncode == 0, proc.stderr
    names = [e["phase"] for e in parse_stream(proc.stdout) if e["type"] == "phase_start"]
    assert names == ["Building engine", "My phase"]

    broken = tmp_path / "broken.json"
    broken.write_text('{"root": {"name": "x", "steps": "many"}}')
    proc = run("build", "--simulate", str(broken))
    assert proc.returncode == 2
    assert "broken.json" in proc.stderr and "steps" in proc.stderr


@pytest.mark.parametrize("signo, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_cancels_cooperatively(signo, code, schema):
    proc = subprocess.Popen([BIN, "build", "--simulate", "large-transformer", "--progress", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    proc.send_signal(signo)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == code
    events = parse_stream(out)
    validate_stream(events, schema)
    cancel = [e for e in events if e["type"] == "cancel_requested"]
    assert len(cancel) == 1 and cancel[0]["reason"] == "signal"
    assert events[-1]["status"] == "cancelled"


def test_version_and_help():
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("trtwatch ")
    proc = run("build", "--help")
    assert proc.returncode == 0
    for flag in ("--simulate", "--seed", "--speed", "--progress", "--events", "--timeout"):
        assert flag in proc.stdout
    proc = run("--no-such-flag")
    assert proc.returncode == 2


@pytest.mark.parametrize("args, named, commands", [
    (["frobnicate"], '"frobnicate"', "build"),
    (["cache", "frobnicate"], '"frobnicate"', "verify"),
])
def test_an_unknown_command_is_named_in_the_error_with_the_commands_there_are(args, named, commands):
    r = run(*args)
    assert r.returncode == 2
    assert f"unknown command {named}" in r.stderr and commands in r.stderr, r.stderr
    assert "--help" in r.stderr


def test_a_missing_command_keeps_cli11s_own_error():
    r = run("cache")
    assert r.returncode == 2 and "unknown command" not in r.stderr and r.stderr.strip(), r.stderr
