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
        self._phases: Dict[int, Dict[str, Any]] = {}  # by id, in start order
        self.phases_started = 0
        self.phases_finished = 0
        self.status: Optional[str] = None  #: the build's status, once it finished
        self._header = "trtwatch: waiting for the build"
        self._footer = ""

    def __call__(self, event: Dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "build_start":
            self._header = f"trtwatch: building {event.get('model') or event.get('backend', '')}".rstrip()
        elif kind in ("phase_start", "step", "phase_finish"):
            self._apply_phase(kind, event)
        elif kind == "cancel_requested":
            self._footer = f"cancelling ({event.get('reason')}): {event.get('message', '')}"
        elif kind == "stall":
            self._footer = f"no progress for {event.get('silent_for', 0):.0f}s"
        elif kind == "build_finish":
            self.status = event.get("status")
            self._footer = f"{self.status} in {event.get('elapsed', 0):.2f}s"
            if event.get("error"):
                self._footer += f": {event['error']}"
            self._show(force=True)
            return
        self._show(force=False)

    def _apply_phase(self, kind: str, event: Dict[str, Any]) -> None:
        """Folds a phase event as the core's PhaseTree does (tests/contract/phase_tree):
        ids are the keys; a start for a known id, or a step or finish for an unknown or
        finished one, changes nothing."""
        pid = event.get("id")
        if kind == "phase_start":
            if pid in self._phases:
                return
            parent = self._phases.get(event.get("parent"))
            active_parent = parent is not None and not parent["finished"]
            self._phases[pid] = {"id": pid, "name": event["phase"], "total": event["total"], "done": 0,
                                 "finished": False, "parent": event["parent"] if active_parent else None,
                                 "depth": parent["depth"] + 1 if active_parent else 0}
            self.phases_started += 1
            return
        phase = self._phases.get(pid)
        if phase is None or phase["finished"]:
            return
        if kind == "step":
            phase["done"] = max(phase["done"], event["step"] + 1)  # a late, lower step never lowers it
        else:
            phase["finished"] = True
            phase["done"] = event.get("completed", phase["done"])
            self.phases_finished += 1

    def _depth_first(self, phases: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """`phases` in tree order: each after its parent, siblings in start order; one
        whose parent is not among them is a root."""
        ids = {p["id"] for p in phases}
        children: Dict[Any, List[Dict[str, Any]]] = {}
        for phase in phases:
            children.setdefault(phase["parent"] if phase["parent"] in ids else None, []).append(phase)
        ordered: List[Dict[str, Any]] = []
        stack = list(reversed(children.get(None, [])))
        while stack:
            phase = stack.pop()
            ordered.append(phase)
            stack.extend(reversed(children.get(phase["id"], [])))
        return ordered

    def active_tree(self) -> List[Dict[str, Any]]:
        """The active phases depth-first, as the phase-tree contract writes them (none once
        the build finished)."""
        if self.status is not None:
            return []
        active = [p for p in self._phases.values() if not p["finished"]]
        return [{key: p[key] for key in ("id", "name", "depth", "total", "done")} for p in self._depth_first(active)]

    def text(self) -> str:
        """The view as plain text: active phases nested, finished ones folded away."""
        lines = [self._header]
        shown = [p for p in self._phases.values() if not p["finished"] or p["depth"] == 0]
        for phase in self._depth_first(shown):
            mark = "done" if phase["finished"] else f"{phase['done']}/{phase['total']}"
            lines.append(f"{'  ' * phase['depth']}{phase['name']:<40} [{_bar(phase['done'], phase['total'])}] {mark}")
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
