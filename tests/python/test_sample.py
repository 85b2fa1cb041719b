"""NVIDIA's Python progress-monitor sample, rewritten for trtwatch
(examples/python/simple_progress_monitor.py), runs against the TensorRT TEST DOUBLE."""
import json
import os
import subprocess
import sys

from conftest import SOURCE

SAMPLE = os.path.join(SOURCE, "examples", "python", "simple_progress_monitor.py")


def test_the_rewritten_sample_builds_and_reports(tmp_path):
    events = tmp_path / "build.jsonl"
    proc = subprocess.run([sys.executable, SAMPLE, "--layers", "6", "--timeout", "2m", "--events", str(events)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("succeeded in "), proc.stdout
    stream = [json.loads(line) for line in events.read_text().splitlines()]
    assert stream[-1]["type"] == "build_finish" and stream[-1]["status"] == "succeeded"
    # Plain lines on a non-terminal stderr: the nested phases are named there.
    assert "Building engine" in proc.stderr


CACHED = os.path.join(SOURCE, "examples", "python", "cached_engine.py")


def test_the_cached_engine_example_builds_once_then_reuses(tmp_path):
    def run():
        return subprocess.run([sys.executable, CACHED, "--cache", str(tmp_path / "cache"), "--layers", "3",
                               "--gpu", "Test GPU,9.0"], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, TRTWATCH_PROGRESS="quiet", TRTWATCH_HISTORY="off"))

    first = run()
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("built and stored: "), first.stdout
    second = run()
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("reused: "), second.stdout
    assert first.stdout.split("key ")[1][:12] == second.stdout.split("key ")[1][:12]
