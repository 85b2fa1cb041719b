"""Bounded waiting for the end-to-end tests and the benchmarks that start real processes
(no pytest needed, so bench/ imports it too)."""
import time


def wait_for(predicate, timeout, what):
    """`predicate()`'s first truthy value, polled every 50 ms; AssertionError naming
    `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s: {what}")
