"""The Jupyter view: one display updated in place, not thousands of printed lines.

A notebook has no terminal, so ``progress="auto"`` (or ``"notebook"``) puts this
consumer of the event stream in place of the terminal view. It runs on trtwatch's
delivery thread, keeps the phase tree from the events, and updates one IPython display
handle at most ``fps`` times a second, plus once at the end.
"""

from __future__ import annotations

import html
import sys
import time
from typing import Any, Dict, List, Optional

LAST_VIEW: Optional["NotebookView"] = None  # the latest view, for tests and curious users


def in_notebook() -> bool:
    """True inside a Jupyter kernel (an IPython shell with a kernel, not a terminal)."""
    ipython_module = sys.modules.get("IPython")
    if ipython_module is None:
        return False
    try:
        shell = ipython_module.get_ipython()
    except Exception:  # pylint: disable=broad-except
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _bar(done: int, total: int, width: int = 20) -> str:
    filled = 0 if total <= 0 else min(width, done * width // total)
    return "#" * filled + "." * (width - filled)


class NotebookView:
    """Renders the build as a nested text tree into one display, updated in place."""

    def __init__(self, fps: float = 4.0) -> None:
        global LAST_VIEW  # pylint: disable=global-statement
        LAST_VIEW = self
        self.updates = 0  #: how many times the display was updated (after the first show)
        self._interval = 1.0 / fps
        self._handle: Any = None
        self._last = 0.0
        self._phases: Dict[int, Dict[str, Any]] = {}
        self._order: List[int] = []
        self._header = "trtwatch: waiting for the build"
        self._footer = ""

    def __call__(self, event: Dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "build_start":
            self._header = f"trtwatch: building {event.get('model') or event.get('backend', '')}".rstrip()
        elif kind == "phase_start":
            self._phases[event["id"]] = {"name": event["phase"], "parent": event.get("parent"),
                                         "total": event["total"], "done": 0, "finished": False}
            self._order.append(event["id"])
        elif kind == "step" and event.get("id") in self._phases:
            self._phases[event["id"]]["done"] = event["step"] + 1
        elif kind == "phase_finish" and event.get("id") in self._phases:
            phase = self._phases[event["id"]]
            phase["finished"] = True
            phase["done"] = event.get("completed", phase["done"])
        elif kind == "cancel_requested":
            self._footer = f"cancelling ({event.get('reason')}): {event.get('message', '')}"
        elif kind == "stall":
            self._footer = f"no progress for {event.get('silent_for', 0):.0f}s"
        elif kind == "build_finish":
            self._footer = f"{event.get('status')} in {event.get('elapsed', 0):.2f}s"
            if event.get("error"):
                self._footer += f": {event['error']}"
            self._show(force=True)
            return
        self._show(force=False)

    def text(self) -> str:
        """The view as plain text: active phases nested, finished ones folded away."""
        lines = [self._header]
        depth: Dict[int, int] = {}
        for pid in self._order:
            phase = self._phases[pid]
            depth[pid] = depth.get(phase["parent"], -1) + 1 if phase["parent"] else 0
            if phase["finished"] and phase["parent"]:
                continue
            mark = "done" if phase["finished"] else f"{phase['done']}/{phase['total']}"
            lines.append(f"{'  ' * depth[pid]}{phase['name']:<40} [{_bar(phase['done'], phase['total'])}] {mark}")
        if self._footer:
            lines.append(self._footer)
        return "\n".join(lines)

    def _show(self, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._last < self._interval:
            return
        self._last = now
        from IPython.display import display  # pylint: disable=import-outside-toplevel

        text = self.text()
        bundle = {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)
            self.updates += 1
