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


def node_profile(tmp_path):
    """Four nodes of three tactics: twelve tactic measurements (docs/simulator.md, "Timing caches")."""
    profile = tmp_path / "nodes.json"
    profile.write_text(json.dumps({"name": "nodes", "root": {
        "name": "Timing graph nodes", "steps": 4, "children": [{
            "name": "Finding fastest tactic for node {step}", "steps": 3, "step_ms": 1,
            "children": [{"name": "Measuring tactic time", "steps": 2, "step_ms": 2}]}]}}))
    return profile


def measurements(profile, *flags, env=None):
    """The build's tactic measurements, and its build_start facts."""
    proc = run("build", "--simulate", str(profile), "--progress", "json", *flags, env=env)
    assert proc.returncode == 0, proc.stderr
    events = parse_stream(proc.stdout)
    measured = sum(1 for e in events if e["type"] == "phase_start" and e["phase"] == "Measuring tactic time")
    return measured, events[0]["facts"]


def test_a_timing_cache_spares_the_next_build_its_tactic_measurements(tmp_path):
    """--timing-cache FILE (trtexec's --timingCacheFile) on the simulator."""
    profile, cache = node_profile(tmp_path), tmp_path / "timing.cache"
    measured, facts = measurements(profile, "--timing-cache", str(cache))
    assert measured == 12 and facts["timing_cache"] == str(cache) and facts["simulated_gpu"] == "simulated GPU"
    assert json.loads(cache.read_text())["gpu"] == "simulated GPU"
    assert measurements(profile, "--timingCacheFile=" + str(cache))[0] == 0
    # Another GPU's cache is refused under --timing-cache-strict, and the file kept.
    before = cache.read_text()
    proc = run("build", "--simulate", str(profile), "--timing-cache", str(cache), "--timing-cache-strict",
               env={"TRTWATCH_SIMULATED_GPU": "NVIDIA A100-SXM4-80GB"})
    assert proc.returncode == 1 and "was made on another GPU" in proc.stderr, proc.stderr
    assert cache.read_text() == before
    proc = run("build", "--simulate", str(profile), env={"TRTWATCH_SIMULATED_GPU": "bad\tname"})
    assert proc.returncode == 2 and "TRTWATCH_SIMULATED_GPU" in proc.stderr


def test_timing_cache_auto_keeps_one_cache_per_gpu_that_ls_and_rm_manage(tmp_path):
    """docs/tensorrt.md, "Timing cache": --timing-cache auto and `trtwatch timing-cache`."""
    profile = node_profile(tmp_path)
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    a100 = env | {"TRTWATCH_SIMULATED_GPU": "NVIDIA A100-SXM4-80GB"}
    folder = tmp_path / "state" / "trtwatch" / "timing-caches"
    measured, facts = measurements(profile, "--timing-cache", "auto", env=env)
    assert measured == 12 and facts["timing_cache"] == str(folder / "trtwatch-simulator-1_simulated-gpu.cache")
    assert measurements(profile, "--timing-cache", "auto", env=env)[0] == 0
    assert measurements(profile, "--timing-cache", "auto", env=a100)[0] == 12, "another GPU: a cache of its own"

    listed = json.loads(run("timing-cache", "ls", "--json", env=env).stdout)
    assert [(c["name"], c["entries"], c["gpu"]) for c in listed] == [
        ("trtwatch-simulator-1_nvidia-a100-sxm4-80gb.cache", 12, "NVIDIA A100-SXM4-80GB"),
        ("trtwatch-simulator-1_simulated-gpu.cache", 12, "simulated GPU")]
    assert "simulated-gpu.cache" in run("timing-cache", "ls", env=env).stdout

    proc = run("timing-cache", "rm", "trtwatch-simulator-1_simulated-gpu.cache", env=env)
    assert proc.returncode == 0 and "removed" in proc.stdout
    assert len(json.loads(run("timing-cache", "ls", "--json", env=env).stdout)) == 1
    proc = run("timing-cache", "rm", "trtwatch-simulator-1_simulated-gpu.cache", env=env)
    assert proc.returncode == 1 and "no timing cache" in proc.stderr
    proc = run("timing-cache", "rm", "../escape.cache", env=env)
    assert proc.returncode == 1 and "not a timing cache's name" in proc.stderr
    assert run("timing-cache", "rm", env=env).returncode == 2
    assert run("timing-cache", "rm", "--all", env=env).returncode == 0
    assert json.loads(run("timing-cache", "ls", "--json", env=env).stdout) == []


def test_timing_cache_merge_makes_one_cache_of_several_of_one_gpu(tmp_path):
    """Issue 37: `trtwatch timing-cache merge A B -o C` (TensorRT's combine; here the simulator's)."""
    profile = node_profile(tmp_path)
    a, b, other = tmp_path / "a.cache", tmp_path / "b.cache", tmp_path / "other.cache"
    assert measurements(profile, "--timing-cache", str(a))[0] == 12
    proc = run("build", "--simulate", "large-transformer", "--speed", "100", "--timing-cache", str(b),
               "--progress", "quiet")
    assert proc.returncode == 0, proc.stderr
    measurements(profile, "--timing-cache", str(other), env={"TRTWATCH_SIMULATED_GPU": "NVIDIA A100-SXM4-80GB"})

    def entries(path):
        return {(node, tactic) for node, tactic, _ in json.loads(path.read_text())["entries"]}
    proc = run("timing-cache", "merge", str(a), str(b), "-o", str(tmp_path / "m.cache"))
    assert proc.returncode == 0 and "merged 2 caches" in proc.stdout, proc.stderr
    assert entries(tmp_path / "m.cache") == entries(a) | entries(b)
    assert measurements(profile, "--timing-cache", str(tmp_path / "m.cache"))[0] == 0

    before = a.read_text()
    proc = run("timing-cache", "merge", str(a), str(other), "-o", str(a))
    assert proc.returncode == 1 and "a cache holds one GPU's timings" in proc.stderr, proc.stderr
    assert a.read_text() == before, "a refused merge writes nothing"
    (tmp_path / "junk.cache").write_text("junk")
    proc = run("timing-cache", "merge", str(a), str(tmp_path / "junk.cache"), "-o", str(tmp_path / "x.cache"))
    assert proc.returncode == 1 and "junk.cache" in proc.stderr
    assert run("timing-cache", "merge", str(a), "-o", str(tmp_path / "x.cache")).returncode == 2
    assert not (tmp_path / "x.cache").exists()


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
