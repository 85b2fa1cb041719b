"""--trace FILE.json: a Chrome Trace Event timeline that nests per tid."""
import json
import os
from collections import defaultdict

from conftest import run


def check_trace(doc):
    """Validates the parts of the format that Perfetto and chrome://tracing rely on."""
    assert isinstance(doc["traceEvents"], list)
    spans = defaultdict(list)
    names = {}
    for e in doc["traceEvents"]:
        assert {"name", "ph", "pid", "tid"} <= e.keys(), e
        if e["ph"] == "M":
            names[(e["name"], e["tid"])] = e["args"]["name"] if "name" in e["args"] else e["args"]
        elif e["ph"] == "X":
            assert isinstance(e["ts"], int) and isinstance(e["dur"], int) and e["dur"] >= 0, e
            spans[e["tid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    assert ("process_name", 0) in names
    for tid, intervals in spans.items():
        assert ("thread_name", tid) in names, f"tid {tid} has no name"
        intervals.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for start, end, name in intervals:
            while stack and stack[-1][1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1][1], f"tid {tid}: {name} [{start},{end}) overlaps {stack[-1]}"
            stack.append((start, end, name))
    return spans, names


def test_trace_of_a_full_build(tmp_path):
    path = tmp_path / "build.json"
    result = run("build", "--simulate", "small-cnn", "--speed", "8", "--trace", str(path))
    assert result.returncode == 0, result.stderr
    doc = json.loads(path.read_text())
    spans, names = check_trace(doc)
    assert "SIMULATED build of small-cnn" in names[("process_name", 0)]
    all_names = {name for intervals in spans.values() for _, _, name in intervals}
    assert {"Building engine", "Timing graph nodes", "build (succeeded)"} <= all_names
    assert os.listdir(tmp_path) == ["build.json"]  # no temporary file left


def test_trace_of_a_concurrent_cancelled_build_nests_per_lane(tmp_path):
    path = tmp_path / "t.json"
    result = run("build", "--simulate", "large-transformer", "--speed", "20", "--timeout", "2s",
                 "--trace", str(path), "--progress", "quiet")
    assert result.returncode == 124
    doc = json.loads(path.read_text())
    spans, _ = check_trace(doc)
    assert len(spans) > 1, "4 builder threads time tactics at once: more than one lane"
    assert any(e["ph"] == "i" and e["name"] == "cancel requested" for e in doc["traceEvents"])


def test_unwritable_trace_fails_before_the_build(tmp_path):
    result = run("build", "--simulate", "small-cnn", "--trace", str(tmp_path / "missing" / "t.json"))
    assert result.returncode == 2
    assert "--trace" in result.stderr and "missing" in result.stderr
    assert "SIMULATED" not in result.stderr  # nothing started
