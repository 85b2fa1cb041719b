"""The high-level API: ``trtwatch.watch(config, ...)`` and ``trtwatch.simulate(...)``."""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, Union

from . import _notebook
from ._events import Event
from ._result import Result
from ._trtwatch import Watch as _NativeWatch
from ._trtwatch import parse_duration

Duration = Union[float, int, str]
Consumer = Callable[[Event], Any]

_UNSET = object()
_PROGRESS = ("auto", "tty", "plain", "json", "quiet", "notebook")


def _seconds(value: Optional[Duration]) -> Optional[float]:
    return None if value is None else parse_duration(value)


class Watch:
    """One build watched by trtwatch. Make it with :func:`watch`; use it as a context
    manager around ``build_serialized_network``.

    Thread safety: :meth:`cancel`, :attr:`cancel_requested` and :attr:`build_id` may be
    used from any thread; the rest belongs to the thread that runs the build.
    """

    def __init__(self, config: Any = None, *, progress: str = "auto", color: str = "auto",
                 events: Optional[str] = None, trace: Optional[str] = None,
                 timeout: Optional[Duration] = None, stall: Optional[Duration] = None,
                 stall_action: str = "warn", kill_after: Optional[Duration] = None,
                 handle_signals: Optional[bool] = None,
                 on_event: Union[None, Consumer, Sequence[Consumer]] = None,
                 model: str = "", facts: Optional[Iterable[Tuple[str, str]]] = None,
                 backend: str = "tensorrt", history: Optional[str] = None, no_history: bool = False) -> None:
        if progress not in _PROGRESS:
            raise ValueError(f"progress must be one of {', '.join(_PROGRESS)}, not {progress!r}")
        consumers: List[Consumer] = []
        if on_event is not None:
            consumers = list(on_event) if isinstance(on_event, (list, tuple)) else [on_event]
        for consumer in consumers:
            if not callable(consumer):
                raise TypeError(f"on_event takes callables (or a trtwatch.EventFeed), not {type(consumer).__name__}")
        if progress == "notebook" or (progress == "auto" and _notebook.in_notebook()):
            consumers.append(_notebook.NotebookView())
            progress = "quiet"
        if handle_signals is None:
            # Python delivers signals to the main thread only; elsewhere leave them alone.
            handle_signals = threading.current_thread() is threading.main_thread()
        self._native = _NativeWatch(
            progress=progress, color=color, events=events or "", trace=trace or "",
            timeout=_seconds(timeout), stall=_seconds(stall), stall_action=stall_action,
            kill_after=_seconds(kill_after), handle_signals=handle_signals, model=model,
            backend=backend, facts=[(str(k), str(v)) for k, v in (facts or [])], consumers=consumers,
            history=history or "", no_history=no_history)
        self._config = config
        self._engine: Any = _UNSET
        self._result: Optional[Result] = None
        self.monitor = None
        """The :class:`trtwatch.tensorrt.ProgressMonitor` attached to ``config``."""

    # -- the build ---------------------------------------------------------------------

    def __enter__(self) -> "Watch":
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            self.finish(False, f"{exc_type.__name__}: {exc}")
            return False  # the exception goes on
        self._raise_for_signal(self.finish())
        return False

    def start(self) -> None:
        """The build begins: the view, the timeout and signal handling start, and the
        progress monitor is attached to ``config``. ``with`` calls it."""
        self._attach_monitor()
        self._native.start()

    def returned(self, engine: Any) -> Any:
        """Tells trtwatch what ``build_serialized_network`` returned (None: no engine),
        and returns it. Without it, a build that was not cancelled counts as built."""
        self._engine = engine
        return engine

    def build(self, builder: Any, network: Any, config: Any = None) -> Any:
        """``builder.build_serialized_network(network, config)``, recorded (see returned)."""
        return self.returned(builder.build_serialized_network(network, config if config is not None else self._config))

    def finish(self, engine_built: Optional[bool] = None, error: str = "") -> Result:
        """The build call returned: delivers the rest of the stream and returns the
        result. ``with`` calls it; call it yourself only without ``with``."""
        if engine_built is None:
            if self._engine is not _UNSET:
                engine_built = self._engine is not None
            else:
                engine_built = not self._native.cancel_requested
        native = self._native.finish(engine_built, error)
        self._detach_monitor()
        self._result = self._make_result(native)
        return self._result

    def simulate(self, profile: str = "small-cnn", *, seed: int = 1, speed: float = 1.0) -> Result:
        """Runs a simulated build (no TensorRT, no GPU) through this watch."""
        native = self._native.simulate(profile, seed, float(speed))
        self._result = self._make_result(native)
        return self._result

    def replay(self, path: str, *, speed: float = 1.0, instant: bool = False) -> Result:
        """Plays a saved build stream back through this watch (see :func:`replay`)."""
        native = self._native.replay(os.fspath(path), float(speed), bool(instant))
        self._result = self._make_result(native)
        return self._result

    # -- any thread --------------------------------------------------------------------

    def cancel(self, message: str = "cancelled through the API", reason: str = "api") -> bool:
        """Asks the build to stop at its next step, from any thread. ``reason`` is one of
        "user", "api", "budget", "timeout", "stall", "signal". True if this call made
        the request (False: one was already made)."""
        return self._native.cancel(message, reason)

    @property
    def cancel_requested(self) -> bool:
        return self._native.cancel_requested

    @property
    def build_id(self) -> str:
        """The build's id ("b_" and 32 hex digits), as build_start carries it."""
        return self._native.build_id

    # -- after the build ---------------------------------------------------------------

    @property
    def result(self) -> Optional[Result]:
        """How the build ended; None until it did."""
        return self._result

    def log(self, severity: str, message: str) -> None:
        """A log line in the stream ("error", "warning", "info", "verbose", ...)."""
        self._native.log(severity, message)

    def _attach_monitor(self) -> None:
        if self._config is not None:
            from .tensorrt import ProgressMonitor  # pylint: disable=import-outside-toplevel

            self.monitor = ProgressMonitor(self)
            self._config.progress_monitor = self.monitor

    def _detach_monitor(self) -> None:
        if self._config is not None and getattr(self._config, "progress_monitor", None) is self.monitor:
            try:
                self._config.progress_monitor = None
            except Exception:  # pylint: disable=broad-except
                pass  # a binding that refuses None keeps the (finished) monitor
        self.monitor = None  # no cycle watch <-> monitor once the build is over

    def _run_cached(self, run: Callable[[Any], dict]) -> dict:
        """EngineCache.get_or_build under this watch: the monitor attached as start()
        attaches it, the native build (start, the build or a hit, finish), the result."""
        self._attach_monitor()
        try:
            answer = run(self._native)
        finally:
            self._detach_monitor()
        if answer["result"] is not None:
            self._result = self._make_result(answer["result"])
        return answer

    def _make_result(self, native) -> Result:
        return Result._from_native(native, self._native.build_id, self._native.monitor_failures,
                                   self._native.callback_errors)

    @staticmethod
    def _raise_for_signal(result: Result) -> None:
        if result.cancel_reason != "signal":
            return
        if result.exit_code == 130:
            raise KeyboardInterrupt(f"trtwatch: the build was cancelled by Ctrl+C ({result.error})")
        raise SystemExit(result.exit_code)


def watch(config: Any = None, **options: Any) -> Watch:
    """Watches one TensorRT build: ``with trtwatch.watch(config, ...) as w:``.

    ``config`` is the ``IBuilderConfig`` (a ProgressMonitor is attached on entry);
    None watches a build you feed yourself (``w.monitor`` stays None). Options:

    progress
        "auto" (a live view on a terminal, plain lines otherwise, a display in
        Jupyter), "tty", "plain", "json" (events on stdout), "quiet", "notebook".
    events, trace
        also write the event stream (JSON lines) / a Chrome trace to this path.
    timeout, stall, kill_after
        seconds or text like "2h", "90s": cancel after ``timeout``; warn (or with
        ``stall_action="cancel"`` cancel) when TensorRT is silent for ``stall``; exit
        the process 137 when a cancel has no effect for ``kill_after``.
    handle_signals
        Ctrl+C / SIGTERM cancel cooperatively (default: on the main thread). After the
        build returns, a Ctrl+C cancel raises KeyboardInterrupt and a SIGTERM one
        SystemExit(143); a second Ctrl+C exits at once.
    on_event
        a callable (or a list of them, or an :class:`EventFeed`) called with each
        event's dict on a trtwatch thread.
    model, facts
        what build_start says about the build.
    history, no_history
        the build history's folder (default: TRTWATCH_HISTORY, else the user's state
        folder), or none. Builds with a build key (simulated ones) are remembered and
        show an ETA from the earlier ones; ``result.estimate`` holds the last one.

    Raises ValueError for bad options (an unwritable events path, a zero timeout ...).
    """
    return Watch(config, **options)


def simulate(profile: str = "small-cnn", *, seed: int = 1, speed: float = 1.0, **options: Any) -> Result:
    """Runs a simulated TensorRT build (no TensorRT, no GPU, no engine) through the same
    path as a real one, and returns its result. ``profile`` is one of
    :func:`simulation_profiles` or a profile JSON file; ``speed`` > 1 runs faster.
    ``options`` are :func:`watch`'s. Ctrl+C cancels it as it would a real build."""
    options.setdefault("model", "")
    w = Watch(None, backend="simulated", **options)
    result = w.simulate(profile, seed=seed, speed=speed)
    Watch._raise_for_signal(result)  # pylint: disable=protected-access
    return result


def replay(path: "str | os.PathLike[str]", *, speed: float = 1.0, instant: bool = False, **options: Any) -> Result:
    """Plays a saved build stream (a ``events=`` / ``--events`` file, or a service build's
    ``GET /builds/{id}/events`` saved as Server-Sent Events) through the same views and
    consumers as a live build, at its recorded pace, ``speed`` times faster, or at once
    with ``instant``; returns the result, concluded as the original build's was.
    ``options`` are :func:`watch`'s. Raises ValueError, before anything is shown, for a
    file that is not one whole build's stream (the message names the line)."""
    options.setdefault("model", "")
    w = Watch(None, backend="replay", **options)
    result = w.replay(path, speed=speed, instant=instant)
    Watch._raise_for_signal(result)  # pylint: disable=protected-access
    return result
