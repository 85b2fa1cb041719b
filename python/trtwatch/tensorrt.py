"""``trtwatch.tensorrt.ProgressMonitor``: TensorRT's ``IProgressMonitor``, backed by trtwatch.

A subclass of the real ``tensorrt.IProgressMonitor`` when ``tensorrt`` is importable
(of ``object`` otherwise, so that this module always imports). Its three methods only
forward to the C++ core and return: they never raise, because TensorRT's binding turns
an exception in ``step_complete`` into a silent cancel. A failure inside is counted
(``Result.monitor_failures``) and reported once as a warning in the stream.

Two ways to use it:

* ``trtwatch.watch(config)`` attaches one for you (the recommended way: you get the
  result, Ctrl+C handling and KeyboardInterrupt after the build);
* as a drop-in for NVIDIA's ``SimpleProgressMonitor``:
  ``config.progress_monitor = trtwatch.tensorrt.ProgressMonitor(progress="auto")``.
  The build is then watched from the first callback to the end of the outermost
  phase; ``monitor.result`` tells how it ended, and a Ctrl+C cancel is raised as
  KeyboardInterrupt in the main thread once the build returned.
"""

from __future__ import annotations

import _thread
import threading
from typing import Any, Optional

try:
    import tensorrt as _trt

    _Base: Any = _trt.IProgressMonitor
except ImportError:  # no TensorRT: the class still works with anything that calls it
    _trt = None
    _Base = object

__all__ = ["ProgressMonitor", "tensorrt_available"]


def tensorrt_available() -> bool:
    """Whether ``import tensorrt`` worked, i.e. ProgressMonitor is a real IProgressMonitor."""
    return _trt is not None


class ProgressMonitor(_Base):  # type: ignore[misc, valid-type]
    """TensorRT's ``IProgressMonitor`` whose callbacks feed trtwatch.

    ``ProgressMonitor(watch)`` forwards to a :class:`trtwatch.Watch` you manage;
    ``ProgressMonitor(**options)`` (options as :func:`trtwatch.watch`) makes and runs
    its own watch around the build (the drop-in form).
    """

    def __init__(self, watch: Any = None, **options: Any) -> None:
        if _Base is not object:
            _Base.__init__(self)  # TensorRT's binding needs its own __init__ called
        from ._watch import Watch  # pylint: disable=import-outside-toplevel

        self._owns_watch = watch is None
        self._interrupt_main = False
        if watch is None:
            self._interrupt_main = options.get("handle_signals", threading.current_thread() is threading.main_thread())
            watch = Watch(None, **options)
        self._watch = watch
        self._native = watch._native  # pylint: disable=protected-access
        self._lock = threading.Lock()  # the drop-in's start/finish, from TensorRT's threads
        self._root: Optional[str] = None
        self._finished = False

    @property
    def watch(self) -> Any:
        """The :class:`trtwatch.Watch` this monitor feeds."""
        return self._watch

    @property
    def result(self) -> Any:
        """How the watched build ended (None until it did)."""
        return self._watch.result

    # TensorRT's three callbacks. Names and parameters as TensorRT's Python API.

    def phase_start(self, phase_name: str, parent_phase: Optional[str], num_steps: int) -> None:
        try:
            if self._owns_watch and parent_phase is None:
                self._begin(phase_name)
            self._native.phase_start(phase_name, parent_phase, num_steps)
        except BaseException as error:  # pylint: disable=broad-except
            self._failed("phase_start", error)

    def step_complete(self, phase_name: str, step: int) -> bool:
        try:
            return self._native.step_complete(phase_name, step)
        except BaseException as error:  # pylint: disable=broad-except
            self._failed("step_complete", error)
            return not self._native.cancel_requested  # a failure here never cancels

    def phase_finish(self, phase_name: str) -> None:
        try:
            self._native.phase_finish(phase_name)
            if self._owns_watch and phase_name == self._root:
                self._end()
        except BaseException as error:  # pylint: disable=broad-except
            self._failed("phase_finish", error)

    # The drop-in form: the outermost phase is the build.

    def _begin(self, phase_name: str) -> None:
        with self._lock:
            if self._root is None and not self._finished:
                self._root = phase_name
                self._watch.start()

    def _end(self) -> None:
        with self._lock:
            if self._finished:
                return
            self._finished = True
        result = self._watch.finish()
        if self._interrupt_main and result.cancel_reason == "signal" and result.exit_code == 130:
            _thread.interrupt_main()  # KeyboardInterrupt in the main thread once the build returns

    def _failed(self, method: str, error: BaseException) -> None:
        try:
            self._native.note_monitor_failure(f"{method}: {type(error).__name__}: {error}")
        except BaseException:  # pylint: disable=broad-except
            pass  # nothing left to report with; the callback still returns normally
