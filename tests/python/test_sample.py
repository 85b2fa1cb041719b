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
