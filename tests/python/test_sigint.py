"""A real SIGINT sent to a Python process in the middle of build_serialized_network.

Python's own handlers cannot run while the main thread is inside the native build, so
trtwatch's C-level handling must cancel it within a step; the process must then leave
with KeyboardInterrupt raised after the build returned.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import tensorrt as trt  # the TEST DOUBLE
    import trtwatch

    trt._double_configure(threads=4, tactics=100000, step_seconds=0.005)
    builder = trt.Builder(trt.Logger())
    network = builder.create_network(0)
    network.mark_output(network.add_input("x", trt.float32, (1,)))
    config = builder.create_builder_config()
    with trtwatch.watch(config, progress="{progress}", events=sys.argv[1]) as w:
        print("building", flush=True)
        plan = w.returned(builder.build_serialized_network(network, config))
    print("not reached", flush=True)
""")


def run_and_interrupt(tmp_path, signo, progress="plain"):
    events = tmp_path / "build.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(progress=progress), str(events)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "building"
    # Wait until TensorRT's threads report steps, so the signal lands mid-build.
    for _ in range(500):
        if events.exists() and '"type":"step"' in events.read_text():
            break
        import time
        time.sleep(0.01)
    proc.send_signal(signo)
    out, err = proc.communicate(timeout=60)
    stream = [json.loads(line) for line in events.read_text().splitlines()]
    return proc.returncode, out, err, stream


def test_ctrl_c_cancels_within_a_step_then_raises_keyboard_interrupt(tmp_path):
    code, out, err, stream = run_and_interrupt(tmp_path, signal.SIGINT)
    assert "not reached" not in out
    assert "KeyboardInterrupt" in err, err
    assert code in (-signal.SIGINT, 130), code
    # The plain view's first line names the build; a Python watch knows no model file,
    # so it ends at "build", never at a dangling "build of".
    assert err.splitlines()[0].split("] ", 1)[1] == "tensorrt build", err
    finish = stream[-1]
    assert finish["type"] == "build_finish" and finish["status"] == "cancelled"
    cancels = [e for e in stream if e["type"] == "cancel_requested"]
    assert cancels and cancels[0]["reason"] == "signal"
    # Within one step (5 ms) of the request; generous for a loaded CI machine.
    assert finish["cancel_latency"]["to_first_false"] < 0.5, finish["cancel_latency"]


def test_sigterm_cancels_and_exits_143(tmp_path):
    code, out, err, stream = run_and_interrupt(tmp_path, signal.SIGTERM, progress="quiet")
    assert "not reached" not in out
    assert code == 143, (code, err)
    assert stream[-1]["status"] == "cancelled"
