"""The build history end to end (docs/history.md): four simulated builds of one profile,
then a fifth shows an ETA range in the terminal and in the JSON stream; history, report
and compare read it back; a damaged or newer history never fails a build."""
import json
import re


from conftest import parse_stream, run, validate_events
from terminal_harness import run_in_pty, terminal_env

PROFILE = ["--simulate", "small-cnn", "--speed", "4"]


def build(history, seed, *extra):
    return run("build", *PROFILE, "--seed", str(seed), "--history", str(history), *extra)


def estimates(events):
    return [e for e in events if e["type"] == "estimate"]


def test_the_fifth_build_shows_an_eta_range_in_the_terminal_and_the_stream(tmp_path, schema):
    history = tmp_path / "history"
    for seed in range(1, 5):
        done = build(history, seed, "--progress", "json")
        assert done.returncode == 0, done.stderr
        events = parse_stream(done.stdout)
        validate_events(events, schema)
        first = estimates(events)[0]
        assert first["based_on"] == {"builds": seed - 1, "match": "exact"}
        if seed <= 3:
            assert len(estimates(events)) == 1 and first["remaining"] is None, "too little history: said once"
    stream = tmp_path / "fifth.jsonl"
    rc, out = run_in_pty([*PROFILE, "--seed", "5", "--history", str(history), "--events", str(stream)],
                         terminal_env())
    assert rc == 0
    assert re.search(r"about \d+\u2013\d+ s left, from 4 earlier builds", out.decode("utf-8", "replace"))
    events = parse_stream(stream.read_text())
    ranged = [e for e in estimates(events) if e["remaining"] is not None]
    assert ranged, "the fifth build's stream has an estimate with a range"
    validate_events(ranged, schema)
    for event in ranged:
        assert event["based_on"] == {"builds": 4, "match": "exact"}
        assert 0 <= event["remaining"]["p10"] <= event["remaining"]["p50"] <= event["remaining"]["p90"]
    # How close the range comes is bench/eta_calibration.py's to measure on a quiet
    # machine: under a sanitizer or load, the builds here vary more than real ones.
    assert ranged[-1]["t"] < events[-1]["t"], "estimates while the build runs, not after it"


def test_the_plain_view_prints_the_range_and_history_report_compare_read_it_back(tmp_path):
    history = tmp_path / "history"
    for seed in range(1, 5):
        assert build(history, seed, "--progress", "quiet").returncode == 0
    plain = build(history, 5, "--progress", "plain")
    assert plain.returncode == 0
    assert re.search(r"about \d+-\d+ s left, from 4 earlier builds", plain.stderr), plain.stderr

    listed = run("history", "--history", str(history), "--json")
    assert listed.returncode == 0, listed.stderr
    builds = json.loads(listed.stdout)
    assert len(builds) == 5 and {b["status"] for b in builds} == {"succeeded"}
    assert len({b["key"] for b in builds}) == 1, "one profile, speed and backend: one build key"
    assert run("history", "--history", str(history), "--model", "no-such-model", "--json").stdout.strip() == "[]"

    report = json.loads(run("report", "--history", str(history), "--json").stdout)
    assert len(report) == 1 and report[0]["succeeded"] == 5
    assert report[0]["elapsed"]["median"] > 0 and report[0]["families"]

    compared = run("compare", builds[0]["build"], builds[4]["build"], "--history", str(history))
    assert compared.returncode == 0, compared.stderr
    assert builds[4]["build"] in compared.stdout.splitlines()[-1]
    against_median = json.loads(run("compare", builds[4]["build"], "--history", str(history), "--json").stdout)
    assert against_median["before"] == "the median of 4 builds"
    unknown = run("compare", "b_nope", "--history", str(history))
    assert unknown.returncode == 2 and 'no build "b_nope"' in unknown.stderr


def test_a_damaged_or_newer_history_is_a_warning_and_the_build_runs(tmp_path):
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "history.jsonl").write_text('{"trtwatch_history": 1}\n{not json\n')
    done = build(damaged, 1, "--progress", "quiet")
    assert done.returncode == 0
    assert "damaged entry skipped" in done.stderr
    assert len(json.loads(run("history", "--history", str(damaged), "--json").stdout)) == 1

    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "history.jsonl").write_text('{"trtwatch_history": 99}\n')
    done = build(newer, 1, "--progress", "quiet")
    assert done.returncode == 0
    assert "newer trtwatch" in done.stderr
    assert (newer / "history.jsonl").read_text() == '{"trtwatch_history": 99}\n'


def test_no_history_reads_and_writes_nothing(tmp_path):
    history = tmp_path / "history"
    done = run("build", *PROFILE, "--history", str(history), "--no-history", "--progress", "json")
    assert done.returncode == 0
    assert not estimates(parse_stream(done.stdout))
    assert not history.exists()
