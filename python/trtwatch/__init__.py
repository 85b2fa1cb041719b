"""trtwatch: live progress, clean cancellation and timing for TensorRT engine builds.

The two-line pattern around TensorRT's Python builder::

    import trtwatch
    with trtwatch.watch(config, progress="auto", timeout="2h", events="build.jsonl") as w:
        plan = w.returned(builder.build_serialized_network(network, config))
    print(w.result.status, w.result.elapsed)

``watch`` attaches a :class:`trtwatch.tensorrt.ProgressMonitor` to ``config`` and
gives you, from the C++ core that ``trtwatch build`` uses:

* a live nested view on a terminal, plain lines in CI, JSON events, or a display
  updated in place in Jupyter (``progress=``);
* a timeout, a stall warning, and ``w.cancel(message, reason)`` from any thread;
* Ctrl+C / SIGTERM cancelling cooperatively during ``build_serialized_network``
  (a second Ctrl+C forces), then ``KeyboardInterrupt`` once the build returned;
* events for your own code: ``on_event=callable`` or an :class:`EventFeed` to iterate,
  delivered on trtwatch's threads, never TensorRT's;
* a :class:`Result` telling succeeded / failed / cancelled / timed out apart.

``trtwatch.EngineCache()`` keeps built plans by build key, so an identical build is
reused instead of rebuilt (``get_or_build``). ``trtwatch.simulate("large-transformer")`` runs the same path without TensorRT or a
GPU; ``trtwatch.replay("build.jsonl")`` plays a saved stream back through it. ``docs/python.md`` is the guide.
"""

from ._trtwatch import __version__, simulation_profiles
from ._engine_cache import CacheKey, CachedEngine, EngineCache, EngineCacheError
from ._events import EventFeed, simulate_events
from ._result import CancelLatency, PhaseTime, Result
from ._watch import Watch, replay, simulate, watch



def __getattr__(name: str):
    """``trtwatch.tensorrt`` after a plain ``import trtwatch`` (the README's usage).

    Imported on first use, not with the package: it imports TensorRT's own module,
    which ``simulate`` and the event helpers do not need.
    """
    if name == "tensorrt":
        import importlib  # pylint: disable=import-outside-toplevel

        return importlib.import_module(".tensorrt", __name__)
    raise AttributeError(f"module 'trtwatch' has no attribute {name!r}")


__all__ = [
    "CacheKey",
    "CachedEngine",
    "CancelLatency",
    "EngineCache",
    "EngineCacheError",
    "EventFeed",
    "PhaseTime",
    "Result",
    "Watch",
    "__version__",
    "replay",
    "simulate",
    "simulate_events",
    "simulation_profiles",
    "watch",
]
