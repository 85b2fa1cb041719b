"""Drives trtwatch in a real terminal: a tmux pane (send-keys, capture-pane) or a pty."""
import itertools
import json
import os
import pty
import select
import shlex
import subprocess
import time

from conftest import BIN

_counter = itertools.count()

# A build that goes silent for 20 s inside the root's second step, as TensorRT does
# while it assembles an engine: cancellation cannot land until that step ends.
SILENT_PROFILE = {
    "name": "silent-step",
    "description": "Two nested levels, then 20 s without a callback.",
    "root": {
        "name": "Building engine", "steps": 3, "step_ms": 20, "silent_ms": {"1": [20000, 20000]},
        "children": [
            {"name": "Preparing graph for optimization", "at": [0], "steps": 4, "step_ms": 50,
             "children": [{"name": "Fusing layers", "steps": 2, "step_ms": 20}]},
        ],
    },
}


def write_profile(tmp_path, profile=SILENT_PROFILE, silent_ms=20000):
    profile = json.loads(json.dumps(profile))
    step = next(iter(profile["root"].get("silent_ms", {"1": None})))
    profile["root"]["silent_ms"] = {step: [silent_ms, silent_ms]}
    path = tmp_path / f"profile-{silent_ms}.json"
    path.write_text(json.dumps(profile))
    return str(path)


def terminal_env(**extra):
    """The environment of a person's terminal session, without CI markers."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CI", "TF_BUILD", "COLUMNS", "LINES", "NO_COLOR", "TRTWATCH_PROGRESS",
                        "CLICOLOR_FORCE", "FORCE_COLOR")}
    env.update({"TERM": "xterm-256color", "LANG": "C.UTF-8"})
    env.update(extra)
    return env


class Pane:
    """One tmux server (own socket) with one width x height pane running trtwatch."""

    def __init__(self, tmp_path, args, width=100, height=30, env=None, subcommand="build"):
        self.socket = f"trtwatch-e2e-{os.getpid()}-{next(_counter)}"
        self.rc_file = tmp_path / "rc"
        self.pid_file = tmp_path / "pid"
        command = (f"echo $$ > {shlex.quote(str(self.pid_file))}; "
                   f"exec {shlex.quote(BIN)} {subcommand} {' '.join(shlex.quote(a) for a in args)}")
        # The shell records the exit status, then keeps the pane open for inspection.
        # The pane's shell ignores nothing but survives the Ctrl+C sent to the whole
        # foreground group (a trap, reset to the default in trtwatch by exec).
        script = (f"trap : INT TERM; sh -c {shlex.quote(command)}; echo $? > {shlex.quote(str(self.rc_file))}; "
                  f"tmux -L {self.socket} wait-for -S exited; sleep 600")
        full_env = terminal_env(**(env or {}))
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", str(width), "-y", str(height),
                  "bash", "-c", script, env=full_env)
        self.tmux("set-option", "-g", "window-size", "manual")

    def tmux(self, *args, env=None, check=True):
        return subprocess.run(["tmux", "-u", "-L", self.socket, *args], capture_output=True, text=True,
                              env=env, check=check, timeout=20)

    def capture(self):
        return self.tmux("capture-pane", "-p", "-t", "e2e").stdout

    def lines(self):
        return [line.rstrip() for line in self.capture().splitlines()]

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "e2e", *keys)

    def resize(self, width, height):
        self.tmux("resize-window", "-t", "e2e", "-x", str(width), "-y", str(height))

    def cursor_visible(self):
        return self.tmux("display-message", "-p", "-t", "e2e", "#{cursor_flag}").stdout.strip() == "1"

    def pid(self):
        return int(self.pid_file.read_text())

    def wait_for(self, predicate, timeout=10.0, poll=0.01):
        """Polls the pane until predicate(text) holds; returns (text, seconds waited)."""
        start = time.monotonic()
        while True:
            text = self.capture()
            if predicate(text):
                return text, time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise AssertionError(f"timed out after {timeout} s; pane:\n{text}")
            time.sleep(poll)

    def exit_status(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.rc_file.exists() and self.rc_file.read_text().strip():
                return int(self.rc_file.read_text())
            time.sleep(0.02)
        raise AssertionError("trtwatch did not exit; pane:\n" + self.capture())

    def close(self):
        self.tmux("kill-server", check=False)


def run_in_pty(args, env, timeout=60):
    """Runs trtwatch with stdout and stderr on a pseudo-terminal; returns (rc, bytes)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([BIN, "build", *args], stdin=slave, stdout=slave, stderr=slave, env=env,
                            close_fds=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=timeout), bytes(out)
