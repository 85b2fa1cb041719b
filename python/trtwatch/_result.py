"""How a build ended: the C++ core's BuildResult as plain Python values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class CancelLatency:
    """Seconds from the cancel request until TensorRT saw it and until it returned."""

    to_first_false: Optional[float]  #: until ``step_complete`` first returned False
    to_return: float  #: until ``build_serialized_network`` returned


@dataclass(frozen=True)
class PhaseTime:
    """Time spent in every instance of one phase name.

    ``seconds`` includes the phases started inside it; ``self_seconds`` leaves out
    the time its direct child phases covered (children side by side count once).
    """

    phase: str
    count: int
    early: int  #: instances finished before their last step (cancelled)
    seconds: float  #: total, child phases included
    self_seconds: float  #: ``seconds`` less the time covered by direct child phases


@dataclass(frozen=True)
class Result:
    """How a build ended.

    ``status`` is one of ``"succeeded"``, ``"failed"``, ``"cancelled"``,
    ``"timed_out"``; ``exit_code`` is what ``trtwatch build`` would exit with
    (0, 1, 124, 130, 143), so a script can ``sys.exit(w.result.exit_code)``.
    """

    status: str
    error: str  #: why it failed, or the cancel's message
    elapsed: float  #: seconds
    cancel_reason: Optional[str]  #: "user", "signal", "timeout", "stall", "api", "budget"
    cancel_latency: Optional[CancelLatency]
    phases: List[PhaseTime]  #: most time first
    exit_code: int
    build_id: str
    anomalies: Dict[str, int] = field(default_factory=dict)  #: callback sequences TensorRT rules out
    events_dropped: int = 0  #: events some consumer missed (coalesced steps are not drops)
    monitor_failures: int = 0  #: exceptions caught inside the progress monitor
    callback_errors: int = 0  #: exceptions raised by your on_event consumers
    #: The last ETA the build showed, from its history (docs/history.md):
    #: {"remaining": {"p10", "p50", "p90"} seconds or None, "based_on": {"builds", "match"},
    #: "longer_than_history"}; None when the build has no history to go by.
    estimate: Optional[Dict[str, Any]] = None
    #: The build key and the engine cache's answer (docs/cache.md): {"key", "state"
    #: ("hit", "miss" or ""), "age_seconds", "built_seconds"}; None when the build has no key.
    cache: Optional[Dict[str, Any]] = None

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"

    @property
    def timed_out(self) -> bool:
        return self.status == "timed_out"

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def summary(self) -> str:
        """One line per phase, most time first (total, then self time), after a status line."""
        lines = [f"{self.status} in {self.elapsed:.2f}s" + (f": {self.error}" if self.error else "")]
        lines += [f"  {p.seconds:9.3f}s  {p.self_seconds:9.3f}s self  {p.phase} (x{p.count})" for p in self.phases]
        return "\n".join(lines)

    @classmethod
    def _from_native(cls, native, build_id: str, monitor_failures: int, callback_errors: int) -> "Result":
        latency = None
        if native.cancel_latency_to_return is not None:
            latency = CancelLatency(native.cancel_latency_to_first_false, native.cancel_latency_to_return)
        return cls(
            status=native.status,
            error=native.error,
            elapsed=native.elapsed,
            cancel_reason=native.cancel_reason,
            cancel_latency=latency,
            phases=[PhaseTime(p.phase, p.count, p.early, p.seconds, p.self_seconds) for p in native.phases],
            exit_code=native.exit_code,
            build_id=build_id,
            anomalies=dict(native.anomalies),
            events_dropped=native.events_dropped,
            monitor_failures=monitor_failures,
            callback_errors=callback_errors,
            estimate=native.estimate,
            cache=native.cache,
        )
