"""Issue 22, service trust: one service per data dir, bounded client text, and the
edges of option and body validation."""
import json
import os
import stat
import subprocess

from conftest import BIN
from service_client import Server


def _refused_beside(server, *command):
    """Runs a second service on `server`'s data dir; returns the CompletedProcess."""
    return subprocess.run([BIN, *command, "--data-dir", server.data_dir], input="", capture_output=True, text=True,
                          timeout=30)


# A second `serve`, or an `mcp`, on a data dir in use once recovered (SIGKILLed) the
# first one's workers and ran its queued builds a second time.
def test_a_second_service_on_a_data_dir_in_use_exits_2_and_touches_nothing(tmp_path):
    first = Server(tmp_path, "--max-concurrent", "1").start()
    try:
        doc = first.submit({"simulate": "large-transformer", "speed": 8})
        running = first.wait_status(doc["id"], ["running"])
        queued = [first.submit({"simulate": "small-cnn", "speed": 8}) for _ in range(3)]
        for command in (["serve", "--listen", "127.0.0.1:0"], ["mcp"]):
            second = _refused_beside(first, *command)
            assert second.returncode == 2, second.stderr
            assert f'"{first.data_dir}"' in second.stderr and f"PID {first.proc.pid}" in second.stderr, second.stderr
        assert first.get(doc["id"])["status"] == "running"
        os.kill(running["worker_pid"], 0)  # the first one's worker is alive
        assert first.wait_status(doc["id"], ["succeeded", "failed", "cancelled"])["status"] == "succeeded"
        for q in queued:
            assert first.wait_status(q["id"], ["succeeded", "failed", "cancelled"])["status"] == "succeeded"
    finally:
        first.stop()
    again = Server(tmp_path, name="again").start()  # the dir is free once the first has stopped
    again.stop()


def test_the_data_dir_and_database_are_private(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    s = Server(tmp_path).start()
    try:
        s.submit({"simulate": "small-cnn", "speed": 8})
        assert stat.S_IMODE(os.stat(data).st_mode) == 0o700
        for name in ("trtwatch.db", "trtwatch.db-wal", "trtwatch.db-shm"):
            assert stat.S_IMODE(os.stat(data / name).st_mode) == 0o600, name
    finally:
        s.stop()

