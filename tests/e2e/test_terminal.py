"""The live terminal view and process control, driven as a person would: in a real
terminal (a 100x30 tmux pane), with Ctrl+C, Ctrl+Z and resizes."""
import re
import signal
import subprocess
import time

import pytest

from conftest import BIN, run
from terminal_harness import Pane, run_in_pty, terminal_env, write_profile

HEADER = "SIMULATED build of"
PHASE_LINE = re.compile(r"^( *)(\S.*?)\s+\S*\s+(\d+)/(\d+)\s+(\d+(\.\d)?s|\d+m\d\ds)$")


@pytest.fixture
def pane_factory(tmp_path):
    panes = []

    def make(args, **kwargs):
        pane = Pane(tmp_path, args, **kwargs)
        panes.append(pane)
        return pane

    yield make
    for pane in panes:
        pane.close()


def phase_lines(text):
    return [m for m in (PHASE_LINE.match(line.rstrip()) for line in text.splitlines()) if m]


def test_live_view_shows_three_nested_levels_updating_then_ctrl_c_cancels(pane_factory):
    pane = pane_factory(["--simulate", "large-transformer", "--speed", "4"])
    text, _ = pane.wait_for(lambda t: len({len(m.group(1)) for m in phase_lines(t)}) >= 3, timeout=15)
    assert HEADER in text and "building" in text
    depths = sorted({len(m.group(1)) // 2 for m in phase_lines(text)})
    assert depths[:3] == [0, 1, 2], text
    for m in phase_lines(text):
        assert int(m.group(3)) <= int(m.group(4)), m.group(0)  # k/n never past n
    assert "ETA" not in text

    # It updates: the elapsed times and steps move on.
    later, _ = pane.wait_for(lambda t: t != text and len(phase_lines(t)) >= 3, timeout=3)
    assert later != text

    pane.keys("C-c")
    sent = time.monotonic()
    # The simulator stops at its next step, often before a frame could say
    # "Cancelling"; either way the reaction is visible at once.
    _, waited = pane.wait_for(lambda t: "Cancelling" in t or "build cancelled" in t, timeout=5, poll=0.005)
    assert waited < 0.2, f"no reaction to Ctrl+C for {waited * 1000:.0f} ms"

    assert pane.exit_status() == 130
    assert time.monotonic() - sent < 5
    final = pane.capture()
    assert "build cancelled" in final
    assert "cancel latency" in final
    assert "phases by time" in final
    assert "Cancelling" not in final  # the live frame was cleared, the summary stays
    assert pane.cursor_visible()


def test_ctrl_c_says_cancelling_at_once_and_a_second_forces(tmp_path, pane_factory):
    pane = pane_factory(["--simulate", write_profile(tmp_path)])
    # Inside the 20 s silent step the view keeps moving and says how long it has been quiet.
    text, _ = pane.wait_for(lambda t: "last activity 3 s ago" in t, timeout=10)
    assert HEADER in text
    pane.keys("C-c")
    cancelling, waited = pane.wait_for(lambda t: "Cancelling" in t, timeout=5, poll=0.005)
    assert waited < 0.2, f"cancelling notice took {waited * 1000:.0f} ms"
    assert "waiting for TensorRT to finish the current step" in cancelling
    assert "interrupted (SIGINT)" in cancelling
    assert "press Ctrl+C again to force" in cancelling
    time.sleep(0.3)
    assert not pane.rc_file.exists(), "the silent step cannot be cancelled cooperatively"
    pane.keys("C-c")
    start = time.monotonic()
    assert pane.exit_status(timeout=5) == 130
    assert time.monotonic() - start < 1.0
    final = pane.capture()
    assert "forced exit" in final
    assert "Cancelling" not in final  # the terminal was restored: frame cleared
    assert pane.cursor_visible()


def test_resize_relays_the_view(pane_factory):
    pane = pane_factory(["--simulate", "large-transformer", "--speed", "4"])
    pane.wait_for(lambda t: len(phase_lines(t)) >= 3, timeout=15)
    for width in (60, 100, 72):
        pane.resize(width, 30)

        def relaid(text, width=width):
            lines = text.splitlines()
            phases = phase_lines(text)
            return (sum(HEADER in line for line in lines) == 1 and len(phases) >= 3
                    and all(len(m.group(0)) <= width - 1 for m in phases))
        text, _ = pane.wait_for(relaid, timeout=3)
        # One frame on screen, laid out for the new width: each phase line ends with its
        # k/n and elapsed time (nothing cut off at the edge), none wraps.
        assert sum(HEADER in line for line in text.splitlines()) == 1, text
    pane.keys("C-c")
    assert pane.exit_status() == 130
    assert pane.cursor_visible()


def test_ctrl_z_restores_the_terminal_and_sigcont_redraws(tmp_path, pane_factory):
    pane = pane_factory(["--simulate", write_profile(tmp_path)])
    pane.wait_for(lambda t: HEADER in t, timeout=10)
    pane.keys("C-z")
    text, _ = pane.wait_for(lambda t: HEADER not in t, timeout=3)
    pid = pane.pid()
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout
    assert state.startswith("T"), state  # stopped
    assert pane.cursor_visible()
    subprocess.run(["kill", "-CONT", str(pid)], check=True)
    pane.wait_for(lambda t: HEADER in t and "last activity" in t, timeout=3)
    pane.keys("C-c")
    pane.wait_for(lambda t: "Cancelling" in t, timeout=2)
    pane.keys("C-c")
    assert pane.exit_status(timeout=5) == 130


@pytest.mark.parametrize("how", ["pipe", "ci"])
def test_pipes_and_ci_get_no_escape_bytes(how):
    if how == "pipe":
        out = subprocess.run(f"{BIN} build --simulate small-cnn --speed 8 2>&1 | cat", shell=True,
                             capture_output=True, env=terminal_env(), timeout=60).stdout
        assert b"SIMULATED build" in out
    else:
        # A CI runner that gives the job a pseudo-terminal: still no escape codes.
        rc, out = run_in_pty(["--simulate", "small-cnn", "--speed", "8"], terminal_env(CI="true"))
        assert rc == 0
        assert b"SIMULATED build" in out
    assert b"\x1b" not in out
    assert b"build succeeded" in out


def test_a_terminal_gets_the_live_view_with_colour_unless_no_color():
    # The control for the test above: the same pty without CI does draw.
    start = time.monotonic()
    rc, out = run_in_pty(["--simulate", "small-cnn", "--speed", "3"], terminal_env())
    wall = time.monotonic() - start
    assert rc == 0
    assert b"\x1b[?25l" in out and b"\x1b[?25h" in out  # cursor hidden only around frames
    assert out.rfind(b"\x1b[?25h") > out.rfind(b"\x1b[?25l")
    # Nothing in the first 0.5 s, then at most 10 frames a second.
    assert out.count(b"\x1b[?25l") <= 10 * max(wall - 0.5, 0) + 2, (out.count(b"\x1b[?25l"), wall)
    assert b"\x1b[32m" in out or b"\x1b[36m" in out
    rc, out = run_in_pty(["--simulate", "small-cnn", "--speed", "3"], terminal_env(NO_COLOR="1"))
    assert rc == 0
    assert b"\x1b[?25l" in out
    assert re.search(rb"\x1b\[[0-9;]*m", out) is None  # no SGR colour at all


def test_forced_tty_on_a_pipe_is_a_usage_error():
    result = run("build", "--simulate", "small-cnn", "--progress", "tty")
    assert result.returncode == 2
    assert "--progress tty" in result.stderr and "not" in result.stderr
    result = run("build", "--simulate", "small-cnn", env={"TRTWATCH_PROGRESS": "tty"})
    assert result.returncode == 2
    assert "TRTWATCH_PROGRESS=tty" in result.stderr
    result = run("build", "--simulate", "small-cnn", "--color", "rainbow")
    assert result.returncode == 2 and "--color" in result.stderr


def test_trtwatch_progress_applies_while_the_flag_is_auto():
    result = run("build", "--simulate", "small-cnn", "--speed", "8", env={"TRTWATCH_PROGRESS": "json"})
    assert result.returncode == 0
    assert result.stdout.startswith("{")
    result = run("build", "--simulate", "small-cnn", "--speed", "8", "--progress", "quiet",
                 env={"TRTWATCH_PROGRESS": "json"})
    assert result.returncode == 0 and result.stdout == ""


def test_sigterm_cancels_cooperatively_with_143():
    proc = subprocess.Popen([BIN, "build", "--simulate", "large-transformer", "--speed", "4", "--progress",
                             "plain"], stderr=subprocess.PIPE, text=True, env=terminal_env())
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 143
    assert "terminated (SIGTERM)" in err
    assert "build cancelled" in err


def test_kill_after_exits_137_when_the_builder_does_not_stop(tmp_path):
    start = time.monotonic()
    result = run("build", "--simulate", write_profile(tmp_path), "--timeout", "1s", "--kill-after", "1s",
                 "--progress", "plain", timeout=15)
    elapsed = time.monotonic() - start
    assert result.returncode == 137
    assert "--kill-after 1s" in result.stderr
    assert "exit 137" in result.stderr
    assert 1.8 < elapsed < 6


def test_stall_timeout_warns_or_cancels(tmp_path):
    profile = write_profile(tmp_path, silent_ms=3000)  # returns 3 s after a cancel request
    result = run("build", "--simulate", profile, "--stall-timeout", "1s", "--stall-action", "cancel",
                 "--progress", "plain", timeout=30)
    assert result.returncode == 124
    assert "no progress callback for" in result.stderr
    assert "no progress from the builder" in result.stderr

    result = run("build", "--simulate", profile, "--stall-timeout", "1s", "--timeout", "2.5s", "--progress",
                 "json", timeout=30)
    types = [line.split('"type":"')[1].split('"')[0] for line in result.stdout.splitlines() if '"type":"' in line]
    assert "stall" in types
    assert result.returncode == 124  # the stall only warned; the timeout ended it

    result = run("build", "--simulate", "small-cnn", "--stall-action", "cancel")
    assert result.returncode == 2 and "--stall-timeout" in result.stderr
    result = run("build", "--simulate", "small-cnn", "--stall-timeout", "1s", "--stall-action", "panic")
    assert result.returncode == 2 and "--stall-action" in result.stderr


def test_ctrl_c_in_the_first_half_second_is_answered_at_once(tmp_path, pane_factory):
    # Silent from the start: no frame is due yet (first frame after 0.5 s), but a
    # cancel request is shown at once.
    profile = {"name": "silent-first", "description": "silent from the start",
               "root": {"name": "Building engine", "steps": 2, "step_ms": 10, "silent_ms": {"0": [5000, 5000]}}}
    events = tmp_path / "events.jsonl"
    pane = pane_factory(["--simulate", write_profile(tmp_path, profile, silent_ms=5000), "--events", str(events)])
    # The build has started (so Ctrl+C is handled) once build_start is in the event file.
    pane.wait_for(lambda t: events.exists() and "build_start" in events.read_text(), timeout=5, poll=0.005)
    pane.keys("C-c")
    text, waited = pane.wait_for(lambda t: "Cancelling" in t, timeout=3, poll=0.005)
    assert waited < 0.2, f"cancelling notice took {waited * 1000:.0f} ms"
    pane.keys("C-c")
    assert pane.exit_status(timeout=5) == 130
    assert pane.cursor_visible()
