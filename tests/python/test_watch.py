"""trtwatch.watch around the TensorRT TEST DOUBLE's build_serialized_network."""
import json
import os
import sys
import threading
import time

import pytest

import tensorrt as trt  # the TEST DOUBLE (tests/python/tensorrt_double)
import trtwatch
import trtwatch.tensorrt

assert getattr(trt, "__test_double__", False), "these tests must run against the test double"


def make_build(layers=8, threads=4, tactics=10, step_seconds=0.0):
    trt._double_configure(threads=threads, tactics=tactics, step_seconds=step_seconds)
    builder = trt.Builder(trt.Logger(trt.Logger.WARNING))
    network = builder.create_network(0)
    tensor = network.add_input("data", trt.float32, (1, 3, 8, 8))
    for _ in range(layers - 1):
        tensor = network.add_identity(tensor).get_output(0)
    network.mark_output(tensor)
    return builder, network, builder.create_builder_config()


def types(events):
    return [e["type"] for e in events]


def test_monitor_is_a_real_iprogressmonitor_subclass():
    assert trtwatch.tensorrt.tensorrt_available()
    assert issubclass(trtwatch.tensorrt.ProgressMonitor, trt.IProgressMonitor)


def test_callbacks_from_several_native_threads_reach_every_consumer():
    builder, network, config = make_build(layers=12, threads=8, tactics=25)
    events = []
    with trtwatch.watch(config, progress="quiet", on_event=events.append, model="net.onnx") as w:
        plan = w.returned(builder.build_serialized_network(network, config))
    assert plan is not None
    r = w.result
    assert r.succeeded and r.exit_code == 0 and r.status == "succeeded"
    assert r.monitor_failures == 0 and r.callback_errors == 0
    assert sum(r.anomalies.values()) == 0, r.anomalies
    kinds = types(events)
    assert kinds[0] == "build_start" and kinds[-1] == "build_finish"
    assert kinds.count("phase_start") == 1 + 12 == kinds.count("phase_finish")
    assert events[0]["model"] == "net.onnx" and events[0]["build"] == w.build_id
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)
    assert config.progress_monitor is None, "the monitor is detached when the build is over"
    assert {p.phase for p in r.phases} >= {"Building engine"}
    for p in r.phases:  # self time leaves the children out, never below zero
        assert 0 <= p.self_seconds <= p.seconds + 1e-9, p
    engine = next(p for p in r.phases if p.phase == "Building engine")
    assert engine.self_seconds < engine.seconds, "the top phase's children took time"


def test_cancel_from_another_python_thread_stops_within_a_step():
    builder, network, config = make_build(layers=40, threads=4, tactics=50, step_seconds=0.005)
    started = threading.Event()

    def on_event(event):
        if event["type"] == "phase_start":
            started.set()

    with trtwatch.watch(config, progress="quiet", on_event=on_event) as w:
        stopper = threading.Thread(target=lambda: started.wait(10) and w.cancel("Stop pressed", reason="user"))
        stopper.start()
        plan = w.build(builder, network)
    stopper.join()
    r = w.result
    assert plan is None
    assert r.cancelled and r.cancel_reason == "user" and r.error == "Stop pressed" and r.exit_code == 130
    assert r.cancel_latency is not None and r.cancel_latency.to_first_false is not None
    assert r.cancel_latency.to_first_false < 0.5, r.cancel_latency
    assert any(p.early for p in r.phases), "active phases finished early"


def test_timeout_ends_the_build_timed_out():
    builder, network, config = make_build(layers=200, threads=2, tactics=50, step_seconds=0.002)
    with trtwatch.watch(config, progress="quiet", timeout="300ms") as w:
        plan = w.build(builder, network)
    assert plan is None
    assert w.result.timed_out and w.result.exit_code == 124 and w.result.cancel_reason == "timeout"
    assert w.result.elapsed < 5


def test_an_exception_in_user_event_code_is_counted_never_a_cancel(monkeypatch):
    builder, network, config = make_build(layers=6)
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    def broken(event):
        raise RuntimeError("bug in my dashboard")

    with trtwatch.watch(config, progress="quiet", on_event=broken) as w:
        plan = w.build(builder, network)
    assert plan is not None and w.result.succeeded
    assert w.result.callback_errors > 1
    assert len(reported) == 1, "reported once, then counted"
    assert "bug in my dashboard" in str(reported[0].exc_value)


def test_a_failure_inside_the_monitor_is_counted_and_never_cancels():
    builder, network, config = make_build(layers=4)
    with trtwatch.watch(config, progress="quiet") as w:
        # What a confused caller could pass; TensorRT's binding would turn a raise into False.
        assert w.monitor.step_complete(None, "x") is True
        w.monitor.phase_start(object(), None, 3)
        plan = w.build(builder, network)
    assert plan is not None and w.result.succeeded
    assert w.result.monitor_failures == 2


def test_a_slow_consumer_gets_coalesced_steps_and_every_structural_event():
    builder, network, config = make_build(layers=16, threads=4, tactics=200, step_seconds=0.0002)
    events = []

    def slow(event):
        events.append(event)
        time.sleep(0.02)

    with trtwatch.watch(config, progress="quiet", on_event=slow) as w:
        plan = w.build(builder, network)
    assert plan is not None and w.result.succeeded
    kinds = types(events)
    assert kinds.count("phase_start") == kinds.count("phase_finish") == 17
    assert kinds[0] == "build_start" and kinds[-1] == "build_finish"
    total_steps = 16 * 200 + 16
    assert kinds.count("step") < total_steps / 4, "steps coalesce for a slow consumer"


def test_an_event_feed_is_iterated_from_another_thread():
    builder, network, config = make_build(layers=5)
    feed = trtwatch.EventFeed(maxsize=4)
    seen = []
    reader = threading.Thread(target=lambda: seen.extend(feed))
    reader.start()
    with trtwatch.watch(config, progress="quiet", on_event=feed) as w:
        w.build(builder, network)
    reader.join(10)
    assert not reader.is_alive()
    assert seen[0]["type"] == "build_start" and seen[-1]["type"] == "build_finish"


def test_drop_in_monitor_lives_while_the_config_holds_it():
    builder, network, config = make_build(layers=6, threads=3)
    config.progress_monitor = trtwatch.tensorrt.ProgressMonitor(progress="quiet", handle_signals=False)
    import gc

    gc.collect()  # the user's own reference is gone; the config's keeps it alive
    plan = builder.build_serialized_network(network, config)
    assert plan is not None
    r = config.progress_monitor.result
    assert r is not None and r.succeeded
    # A second build through the same (finished) monitor is counted, never a crash.
    assert builder.build_serialized_network(network, config) is not None
    config.progress_monitor = None
    gc.collect()


def test_a_watch_dropped_mid_build_concludes_and_frees_cleanly():
    builder, network, config = make_build(layers=3)
    events = []
    w = trtwatch.watch(config, progress="quiet", on_event=events.append)
    w.start()
    builder.build_serialized_network(network, config)
    del w  # never finished; the config's monitor still holds the watch
    import gc

    gc.collect()
    assert not events or events[-1]["type"] != "build_finish"
    config.progress_monitor = None  # the last reference: the watch concludes the build
    gc.collect()
    assert events[-1]["type"] == "build_finish" and events[-1]["status"] == "failed"
    assert "abandoned" in events[-1]["error"]


def test_bad_options_name_the_problem():
    with pytest.raises(ValueError, match="events"):
        trtwatch.watch(None, events="/nonexistent/dir/build.jsonl")
    with pytest.raises(ValueError, match="greater than zero"):
        trtwatch.watch(None, timeout=0)
    with pytest.raises(ValueError, match="progress"):
        trtwatch.watch(None, progress="fancy")
    with pytest.raises(ValueError):
        trtwatch.watch(None, timeout="2 fortnights")
    with pytest.raises(TypeError):
        trtwatch.watch(None, on_event=42)


def test_simulate_takes_the_same_path():
    events = []
    r = trtwatch.simulate("small-cnn", speed=100, progress="quiet", on_event=events.append)
    assert r.succeeded
    assert events[0]["backend"] == "simulated"
    assert "small-cnn" in trtwatch.simulation_profiles()
    kinds = [e["type"] for e in trtwatch.simulate_events("small-cnn", speed=100)]
    assert kinds[0] == "build_start" and kinds[-1] == "build_finish"
    with pytest.raises(ValueError, match="small-cnn"):
        trtwatch.simulate("no-such-profile")


def test_replay_plays_a_saved_stream_through_the_same_path(tmp_path):
    saved = tmp_path / "build.jsonl"
    original = trtwatch.simulate("failing", speed=100, progress="quiet", events=str(saved))
    assert original.status == "failed"
    events = []
    r = trtwatch.replay(saved, instant=True, progress="quiet", on_event=events.append)
    assert r.status == "failed" and r.error == original.error
    assert events[0]["backend"] == "replay"
    assert events[0]["facts"]["replay_of"] == original.build_id
    assert [e["phase"] for e in events if e["type"] == "phase_start"] == [
        e["phase"] for e in map(json.loads, saved.read_text().splitlines()) if e["type"] == "phase_start"]
    saved.write_text(saved.read_text().splitlines()[0] + "\n")
    with pytest.raises(ValueError, match="truncated"):
        trtwatch.replay(saved)


def test_leaving_simulate_events_early_cancels_the_build():
    start = time.monotonic()
    for event in trtwatch.simulate_events("large-transformer", speed=1):
        if event["type"] == "phase_start":
            break
    assert time.monotonic() - start < 10


def run_without_tensorrt(code):
    """What `code` prints in a fresh interpreter that has the package but no TensorRT (not even the double)."""
    import subprocess

    from conftest import PACKAGE_DIR

    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_without_tensorrt_the_monitor_still_imports_and_forwards():
    code = (
        "import trtwatch, trtwatch.tensorrt as t\n"
        "assert not t.tensorrt_available() and t.ProgressMonitor.__bases__ == (object,)\n"
        "m = t.ProgressMonitor(progress='quiet', handle_signals=False)\n"
        "m.phase_start('Building engine', None, 2)\n"
        "assert m.step_complete('Building engine', 0) and m.step_complete('Building engine', 1)\n"
        "m.phase_finish('Building engine')\n"
        "print(m.result.status)\n"
    )
    assert run_without_tensorrt(code) == "succeeded"


def test_the_tensorrt_monitor_is_reached_from_a_plain_import():
    # A fresh interpreter: this one has imported trtwatch.tensorrt by name already.
    code = (
        "import sys, trtwatch\n"
        "assert 'trtwatch.tensorrt' not in sys.modules\n"  # not imported with the package
        "m = trtwatch.tensorrt.ProgressMonitor(progress='quiet', handle_signals=False)\n"
        "assert trtwatch.tensorrt is sys.modules['trtwatch.tensorrt']\n"
        "try:\n"
        "    trtwatch.no_such_thing\n"
        "except AttributeError as e:\n"
        "    print(e)\n"
    )
    assert run_without_tensorrt(code) == "module 'trtwatch' has no attribute 'no_such_thing'"
