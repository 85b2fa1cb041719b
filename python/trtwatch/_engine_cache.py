"""The engine cache around your own build code (docs/cache.md, "Around your own build code").

::

    cache = trtwatch.EngineCache()                       # TRTWATCH_ENGINE_CACHE, or dir=
    key = cache.key(model="model.onnx", options=["fp16", "workspace=4G"])
    engine = cache.get_or_build(key, lambda: builder.build_serialized_network(network, config))
    runtime.deserialize_cuda_engine(engine.plan)

The same cache as ``trtwatch build --engine-cache`` and the C++ ``trtwatch::EngineCache``:
entries stored whole or not at all, one build per key at a time across processes, least
recently used entries pruned past the bounds.
"""
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

from ._result import Result
from ._trtwatch import EngineCache as _NativeEngineCache
from ._trtwatch import cache_key as _cache_key
from ._trtwatch import cache_key_from_text as _cache_key_from_text

PathLike = Union[str, "os.PathLike[str]"]


class EngineCacheError(OSError):
    """The engine cache could not be used: its folder, a lock, a plan that was not kept.
    The message names the problem and its fix."""


@dataclass(frozen=True)
class CacheKey:
    """A build key: the SHA-256 ``digest`` of its named ``parts`` (what the engine
    depends on). Make it with :meth:`EngineCache.key`."""

    digest: str
    parts: Tuple[Tuple[str, str], ...]

    def __str__(self) -> str:
        return self.digest


@dataclass
class CachedEngine:
    """An engine the cache had (``hit``) or that was just built and stored."""

    key: str
    hit: bool
    plan: Optional[bytes] = field(repr=False)
    """The serialized plan (None from :meth:`EngineCache.find`)."""
    path: str
    """A hit's engine in the cache (read-only, its bytes checked): read it, never write it."""
    size: int
    age_seconds: float
    """A hit: how long ago the engine was stored."""
    build_seconds: float
    """How long its build took (a fresh build: this one)."""
    stored: bool
    """A fresh build: whether its plan is in the cache now."""
    warning: str
    result: Optional[Result] = None
    """``get_or_build(..., watch=w)``: how the watched build ended."""


def _paths(model: Union[None, PathLike, Sequence[PathLike]]) -> list:
    if model is None:
        return []
    if isinstance(model, (str, os.PathLike)):
        return [os.fspath(model)]
    return [os.fspath(m) for m in model]


def _tensorrt_version() -> str:
    try:
        import tensorrt  # pylint: disable=import-outside-toplevel

        return str(tensorrt.__version__)
    except ImportError:
        return ""  # the native key says what to give


class EngineCache:
    """The engine cache in ``dir`` (default: ``TRTWATCH_ENGINE_CACHE``), created when
    absent. ``max_bytes`` and ``max_entries`` bound it (least recently used entries go).

    Lookups never raise for a miss (they return None); a cache that cannot be used
    raises :class:`EngineCacheError`. Thread safety: any thread; any number of
    processes may share the folder.
    """

    def __init__(self, dir: Optional[PathLike] = None, *,  # pylint: disable=redefined-builtin
                 max_bytes: Optional[int] = None, max_entries: Optional[int] = None) -> None:
        try:
            self._native = _NativeEngineCache(os.fspath(dir) if dir is not None else "", max_bytes, max_entries)
        except ValueError as e:
            raise EngineCacheError(str(e)) from None

    @property
    def folder(self) -> str:
        """Where the entries are (DIR/v1)."""
        return self._native.folder

    @staticmethod
    def key(model: Union[None, PathLike, Sequence[PathLike]] = None, options: Iterable[str] = (), *,
            tensorrt_version: Optional[str] = None, gpu: Optional[Tuple[str, str]] = None, device: int = 0,
            extra: Optional[dict] = None, text: Optional[str] = None) -> CacheKey:
        """The build key of your build.

        ``model``: a file or several, by their bytes (an ONNX model's external-data files
        too). ``options``: your builder settings as text, in order. ``tensorrt_version``:
        default ``tensorrt.__version__``. ``gpu``: (name, compute capability), default the
        GPU CUDA numbers ``device``. ``extra``: further named values. ``text`` instead of
        all these: a key from text you derive yourself. Raises ValueError when the key
        cannot be computed (an unreadable model, no TensorRT version, no GPU).
        """
        if text is not None:
            digest, parts = _cache_key_from_text(str(text))
        else:
            if tensorrt_version is None:
                tensorrt_version = _tensorrt_version()
            gpu_name, gpu_cc = gpu if gpu is not None else ("", "")
            digest, parts = _cache_key(_paths(model), [str(o) for o in options], str(tensorrt_version),
                                       str(gpu_name), str(gpu_cc), int(device),
                                       [(str(k), str(v)) for k, v in (extra or {}).items()])
        return CacheKey(digest, tuple((name, value) for name, value in parts))

    def get(self, key: CacheKey) -> Optional[CachedEngine]:
        """The stored engine of ``key`` with its plan, or None. Waits while a build of
        the key runs elsewhere (then finds its engine)."""
        return self._answer(self._native.get(key.digest, list(key.parts)))

    def find(self, key: CacheKey) -> Optional[CachedEngine]:
        """:meth:`get` without reading the plan: its ``path`` and facts."""
        return self._answer(self._native.find(key.digest, list(key.parts)))

    def put(self, key: CacheKey, plan: Union[bytes, bytearray, memoryview, Any, PathLike], *,
            build_seconds: float = 0.0, model: str = "") -> None:
        """Stores a plan (bytes, TensorRT's IHostMemory, or the path of an engine file)
        under ``key``, atomically. ``build_seconds``: how long its build took. Raises
        :class:`EngineCacheError` when it is not kept."""
        parts = list(key.parts)
        if isinstance(plan, (str, os.PathLike)):
            stored = self._native.put_file(key.digest, parts, os.fspath(plan), float(build_seconds), model)
        else:
            try:
                memoryview(plan)
            except TypeError:
                plan = bytes(plan)  # an IHostMemory without the buffer protocol: its __bytes__
            stored = self._native.put(key.digest, parts, plan, float(build_seconds), model)
        if not stored["stored"]:
            raise EngineCacheError(stored["error"])

    def get_or_build(self, key: CacheKey, build_fn: Callable[[], Any], *, model: str = "",
                     watch: Any = None) -> Optional[CachedEngine]:
        """The stored engine of ``key``; else ``build_fn()`` runs (it returns the plan:
        bytes or IHostMemory, None when the build failed) and its plan is stored. The
        key is locked meanwhile: identical builds anywhere build once. None when
        ``build_fn`` returned no plan; an exception from it passes through.

        ``watch``: a :class:`trtwatch.Watch` not yet started (``trtwatch.watch(config)``
        without ``with``): it watches the build, its stream and result say "hit" or
        "miss", and an exception from ``build_fn`` fails the watched build instead.
        """
        if watch is None:
            answer = self._native.get_or_build(key.digest, list(key.parts), build_fn, model)
            if answer["status"] == "error" and not answer["build_ran"]:
                raise EngineCacheError(answer["error"])
            return None if answer["plan"] is None else self._engine(answer)
        answer = watch._run_cached(  # pylint: disable=protected-access
            lambda native: self._native.get_or_build_watched(key.digest, list(key.parts), build_fn, native))
        if answer["result"] is None:
            raise EngineCacheError(answer["error"])
        engine = self._engine(answer) if answer["plan"] is not None else None
        if engine is not None:
            engine.result = watch.result
        return engine

    def stats(self) -> dict:
        """Counters over every process that used the folder: entries, bytes, hits,
        misses, seconds_saved."""
        return self._native.stats()

    def _answer(self, answer: dict) -> Optional[CachedEngine]:
        if answer["status"] == "error":
            raise EngineCacheError(answer["error"])
        if answer["status"] == "miss" and answer["warning"]:
            # A damaged entry, quarantined: the miss says where it went.
            warnings.warn(answer["warning"], RuntimeWarning, stacklevel=3)
        return self._engine(answer) if answer["status"] == "hit" else None

    @staticmethod
    def _engine(answer: dict) -> CachedEngine:
        return CachedEngine(key=answer["key"], hit=answer["status"] == "hit", plan=answer["plan"],
                            path=answer["path"], size=answer["size"], age_seconds=answer["age_seconds"],
                            build_seconds=answer["build_seconds"], stored=answer["stored"],
                            warning=answer["warning"])
