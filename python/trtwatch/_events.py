"""Events for Python consumers: iterate the stream from any thread."""

from __future__ import annotations

import queue
import threading
from typing import Any, Dict, Iterator, Optional

Event = Dict[str, Any]  # one event of the stream, as docs/events.md shows its JSON

_END = object()


class EventFeed:
    """An iterable event consumer: pass it as ``on_event`` and iterate it elsewhere.

    ::

        feed = trtwatch.EventFeed()
        threading.Thread(target=lambda: [ui.show(e) for e in feed]).start()
        with trtwatch.watch(config, on_event=feed) as w: ...

    Iteration ends after ``build_finish``. The feed holds at most ``maxsize`` events;
    while it is full, trtwatch's delivery thread waits, so a slow reader gets
    coalesced steps (latest per phase) and every structural event, and the build is
    never slowed. A reader that stops early calls :meth:`close`.
    """

    def __init__(self, maxsize: int = 256) -> None:
        self._queue: "queue.Queue[object]" = queue.Queue(maxsize=maxsize)
        self._closed = threading.Event()

    def __call__(self, event: Event) -> None:
        self._put(event)

    def close(self) -> None:
        """No more events: the build finished, or the reader gave up."""
        if not self._closed.is_set():
            self._closed.set()
            try:
                self._queue.put_nowait(_END)
            except queue.Full:
                pass  # the reader sees _closed once the queue drains

    def _put(self, item: object) -> None:
        while not self._closed.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def __iter__(self) -> Iterator[Event]:
        while True:
            try:
                item = self._queue.get(timeout=0.1)
            except queue.Empty:
                if self._closed.is_set():
                    return
                continue
            if item is _END:
                return
            yield item  # type: ignore[misc]


def simulate_events(profile: str = "small-cnn", *, seed: int = 1, speed: float = 1.0,
                    maxsize: int = 256, **options: Any) -> Iterator[Event]:
    """Runs ``trtwatch.simulate`` on a background thread and yields its events.

    ``options`` are :func:`trtwatch.simulate`'s (``progress`` defaults to ``"quiet"``).
    Leaving the loop early cancels the simulated build.
    """
    from ._watch import Watch  # pylint: disable=import-outside-toplevel

    feed = EventFeed(maxsize=maxsize)
    options.setdefault("progress", "quiet")
    options["handle_signals"] = False
    w = Watch(None, on_event=feed, **options)
    worker = threading.Thread(target=w.simulate, args=(profile,), kwargs={"seed": seed, "speed": speed},
                              name="trtwatch-simulate", daemon=True)
    worker.start()
    try:
        yield from feed
    finally:
        if worker.is_alive():
            w.cancel("the event reader stopped", reason="api")
            feed.close()
        worker.join()
