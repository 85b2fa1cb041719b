"""`trtwatch replay`: a saved stream played back through the views, exit codes as the
original's, and clear refusals (exit 2, nothing played) for what is not one build."""
import json
import re
import urllib.request

import pytest

from conftest import parse_stream, run, validate_events
from service_client import Server


def record(tmp_path, *args):
    events = tmp_path / "build.jsonl"
    done = run("build", "--progress", "plain", "--events", str(events), *args)
    return events, done


def plain_lines(stderr):
    """The plain view up to its outcome line, without times and the first line (the
    title differs); the summary after it lists phases by time spent."""
    lines = [re.sub(r"^\[\s*[\d.]+s\] ", "", line) for line in stderr.splitlines()]
    end = next(i for i, line in enumerate(lines) if line.startswith("build succeeded"))
    return [re.sub(r"\d+\.\d+\s?s", "T", line) for line in lines[1:end]]


def structure(events):
    names = {}
    out = []
    for e in events:
        if e["type"] == "phase_start":
            names[e["id"]] = e["phase"]
            out.append(("start", e["phase"], names.get(e["parent"]), e["total"]))
        elif e["type"] == "phase_finish":
            out.append(("finish", e["phase"], e["completed"], e["early"]))
        elif e["type"] in ("log", "cancel_requested"):
            out.append((e["type"], e["message"]))
    return out


def test_replay_shows_the_original_builds_view(tmp_path):
    events, original = record(tmp_path, "--simulate", "small-cnn", "--speed", "20")
    assert original.returncode == 0, original.stderr
    replayed = run("replay", str(events), "--progress", "plain")  # at the recorded pace
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stderr.splitlines()[0].endswith("REPLAY of build " + parse_stream(events.read_text())[0]["build"]
                                                    + " (simulated build of simulated:small-cnn)")
    assert plain_lines(replayed.stderr) == plain_lines(original.stderr)


def test_replay_as_json_is_the_same_build_under_a_new_id(tmp_path, schema):
    events, _ = record(tmp_path, "--simulate", "small-cnn", "--speed", "20")
    original = parse_stream(events.read_text())
    replayed = run("replay", str(events), "--instant", "--progress", "json")
    assert replayed.returncode == 0, replayed.stderr
    stream = parse_stream(replayed.stdout)
    validate_events(stream, schema)
    start = stream[0]
    assert start["backend"] == "replay" and start["build"] != original[0]["build"]
    assert start["facts"]["replay_of"] == original[0]["build"]
    assert structure(stream) == structure(original)
    assert stream[-1]["status"] == "succeeded"


def test_replay_exits_as_the_original_build_ended(tmp_path):
    events, original = record(tmp_path, "--simulate", "failing", "--speed", "20")
    assert original.returncode == 1
    replayed = run("replay", str(events), "--instant", "--progress", "plain")
    assert replayed.returncode == 1
    assert "build failed" in replayed.stderr

    events, original = record(tmp_path, "--simulate", "large-transformer", "--speed", "20", "--timeout", "0.5")
    assert original.returncode == 124
    replayed = run("replay", str(events), "--instant", "--progress", "plain")
    assert replayed.returncode == 124
    assert "build timed out" in replayed.stderr


@pytest.mark.parametrize("damage, message", [
    (lambda text: text[: text.rfind("\n", 0, len(text) - 1) + 1], "truncated"),
    (lambda text: text + text, "more than one build"),
    (lambda text: '{"name": "resnet50", "layers": 50}\n', "line 1: not an event of trtwatch's stream"),
    (lambda text: text.replace('"seq":3,', '"seq":1,', 1), "line 3: seq 1 after 2"),
    (lambda text: "", "holds no event"),
])
def test_replay_refuses_a_damaged_or_foreign_file_and_plays_nothing(tmp_path, damage, message):
    events, _ = record(tmp_path, "--simulate", "small-cnn", "--speed", "20")
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text(damage(events.read_text()))
    replayed = run("replay", str(damaged), "--progress", "json")
    assert replayed.returncode == 2
    assert replayed.stdout == ""  # nothing played
    assert message in replayed.stderr, replayed.stderr
    assert "trtwatch replay: " + str(damaged) in replayed.stderr


def test_replay_of_a_service_build_saved_with_curl(tmp_path):
    server = Server(tmp_path).start()
    try:
        doc = server.submit({"simulate": "small-cnn", "speed": 20, "seed": 3})
        url = f"http://127.0.0.1:{server.port}{doc['events_url']}"
        with urllib.request.urlopen(url, timeout=60) as response:  # ends after build_finish
            saved = response.read()
    finally:
        server.stop()
    capture = tmp_path / "build.sse"
    capture.write_bytes(saved)
    replayed = run("replay", str(capture), "--instant", "--progress", "json")
    assert replayed.returncode == 0, replayed.stderr
    stream = parse_stream(replayed.stdout)
    assert stream[0]["facts"]["replay_of"] == doc["id"]
    assert stream[-1]["status"] == "succeeded"
    assert json.loads(saved.split(b"data: ", 1)[1].split(b"\n", 1)[0])["type"] == "build_start"


def phase_starts(events):
    """The phases started (name, parent, steps announced): what a history entry keeps of
    a build, up to its 200th event (without steps, a replayed phase finishes with none
    done, and a log that was cut ends with its open phases finished by the build's end)."""
    return [item for item in structure(events) if item[0] == "start"]


def test_replay_of_a_build_from_the_history_shows_its_phases(tmp_path, schema):
    history = tmp_path / "history"
    events, original = record(tmp_path, "--simulate", "small-cnn", "--speed", "20", "--history", str(history))
    assert original.returncode == 0, original.stderr
    recorded = parse_stream(events.read_text())
    build_id = recorded[0]["build"]
    # By a unique prefix of its id, from the folder TRTWATCH_HISTORY names.
    replayed = run("replay", "--build", build_id[:10], "--instant", "--progress", "json",
                   env={"TRTWATCH_HISTORY": str(history)})
    assert replayed.returncode == 0, replayed.stderr
    stream = parse_stream(replayed.stdout)
    validate_events(stream, schema)
    assert stream[0]["backend"] == "replay" and stream[0]["facts"]["replay_of"] == build_id
    assert stream[-1]["status"] == "succeeded"
    assert not any(e["type"] == "step" for e in stream), "the history keeps no steps"
    played, original_starts = phase_starts(stream), phase_starts(recorded)
    assert len(played) >= 10 and played == original_starts[:len(played)]

    # --history DIR names the folder too, and the plain view plays it.
    plain = run("replay", "--build", build_id, "--instant", "--progress", "plain", "--history", str(history))
    assert plain.returncode == 0, plain.stderr
    assert "REPLAY of build " + build_id in plain.stderr


def test_replay_from_the_history_refuses_an_unknown_id_or_a_file_as_well(tmp_path):
    history = tmp_path / "history"
    events, original = record(tmp_path, "--simulate", "small-cnn", "--speed", "20", "--history", str(history))
    assert original.returncode == 0, original.stderr
    unknown = run("replay", "--build", "b_nosuchbuild", "--history", str(history), "--progress", "json")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert 'no build "b_nosuchbuild" in ' + str(history) in unknown.stderr, unknown.stderr
    assert "`trtwatch history` lists them" in unknown.stderr
    both = run("replay", str(events), "--build", "b_", "--history", str(history))
    assert both.returncode == 2 and "one of the two" in both.stderr
    neither = run("replay")
    assert neither.returncode == 2 and "--build ID" in neither.stderr
    off = run("replay", "--build", "b_", env={"TRTWATCH_HISTORY": "off"})
    assert off.returncode == 2 and "give --history DIR" in off.stderr, off.stderr
