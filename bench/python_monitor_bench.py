#!/usr/bin/env python3
"""Per-callback cost of a Python IProgressMonitor with several builder threads.

Three monitors, in the same run, against the TensorRT TEST DOUBLE (its
build_serialized_network releases the GIL and calls the monitor from native threads,
as TensorRT's does; steps take no time, so the build is nothing but callbacks):

  empty     a `pass` monitor (returns True): the floor, the binding's own cost
  redraw    redraws the whole phase tree on every callback, like NVIDIA's sample
            (written to /dev/null, so terminal time is not even counted)
  trtwatch  trtwatch.tensorrt.ProgressMonitor through trtwatch.watch (progress quiet;
            views run on trtwatch's own threads either way)

Runs are interleaved, repeated, and the median reported. Usage (from a build tree):
  PYTHONPATH=build/python:build/tests/python/tensorrt_double \
    python3 bench/python_monitor_bench.py [--threads 4] [--layers 64] [--tactics 200] [--repeat 5]
"""
import argparse
import os
import statistics
import time

import tensorrt as trt  # the TEST DOUBLE

import trtwatch


class EmptyMonitor(trt.IProgressMonitor):
    def __init__(self):
        trt.IProgressMonitor.__init__(self)

    def phase_start(self, phase_name, parent_phase, num_steps):
        pass

    def step_complete(self, phase_name, step):
        return True

    def phase_finish(self, phase_name):
        pass


class RedrawMonitor(trt.IProgressMonitor):
    """The pattern of NVIDIA's sample: keep the phases, redraw all of them each time."""

    def __init__(self, out):
        trt.IProgressMonitor.__init__(self)
        self._out = out
        self._phases = {}
        self._lines = 0

    def phase_start(self, phase_name, parent_phase, num_steps):
        depth = self._phases[parent_phase]["depth"] + 1 if parent_phase in self._phases else 0
        self._phases[phase_name] = {"depth": depth, "steps": num_steps, "done": 0}
        self._redraw()

    def step_complete(self, phase_name, step):
        if phase_name in self._phases:
            self._phases[phase_name]["done"] = step + 1
        self._redraw()
        return True

    def phase_finish(self, phase_name):
        self._phases.pop(phase_name, None)
        self._redraw()

    def _redraw(self):
        text = "\x1b[1A\x1b[2K" * self._lines
        for name, p in list(self._phases.items()):
            filled = 40 * p["done"] // max(p["steps"], 1)
            text += f"{'  ' * p['depth']}{name}: [{'=' * filled}{'-' * (40 - filled)}] {p['done']}/{p['steps']}\n"
        self._lines = len(self._phases)
        self._out.write(text)
        self._out.flush()


def network_of(builder, layers):
    network = builder.create_network(0)
    tensor = network.add_input("data", trt.float32, (1,))
    for _ in range(layers - 1):
        tensor = network.add_identity(tensor).get_output(0)
    network.mark_output(tensor)
    return network


def timed_build(builder, network, monitor_kind, devnull):
    config = builder.create_builder_config()
    if monitor_kind == "empty":
        config.progress_monitor = EmptyMonitor()
    elif monitor_kind == "redraw":
        config.progress_monitor = RedrawMonitor(devnull)
    if monitor_kind == "trtwatch":
        with trtwatch.watch(config, progress="quiet", handle_signals=False) as w:
            start = time.perf_counter()
            plan = w.returned(builder.build_serialized_network(network, config))
            seconds = time.perf_counter() - start
    else:
        start = time.perf_counter()
        plan = builder.build_serialized_network(network, config)
        seconds = time.perf_counter() - start
    assert plan is not None
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=64)
    parser.add_argument("--tactics", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    trt._double_configure(threads=args.threads, tactics=args.tactics, step_seconds=0.0)
    builder = trt.Builder(trt.Logger())
    network = network_of(builder, args.layers)
    callbacks = 1 + args.layers * (args.tactics + 3) + 1  # root start/finish; each layer: start, steps, finish, root step
    kinds = ["empty", "redraw", "trtwatch"]
    times = {k: [] for k in kinds}
    with open(os.devnull, "w") as devnull:
        for _ in range(args.repeat):
            for kind in kinds:
                times[kind].append(timed_build(builder, network, kind, devnull))
    per_callback = {k: statistics.median(v) / callbacks * 1e9 for k, v in times.items()}
    print(f"{args.threads} builder threads, {callbacks} callbacks per build, median of {args.repeat}")
    for kind in kinds:
        print(f"  {kind:9s} {per_callback[kind]:9.0f} ns/callback   {per_callback[kind] / per_callback['empty']:5.2f}x empty")
    print(f"  redraw / trtwatch: {per_callback['redraw'] / per_callback['trtwatch']:.1f}x")


if __name__ == "__main__":
    main()
