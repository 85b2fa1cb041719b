#!/usr/bin/env python3
"""NVIDIA's "simple progress monitor" Python sample, with trtwatch instead of the
hand-written IProgressMonitor that redraws the terminal on every callback.

What changed against the sample's shape:
  * no SimpleProgressMonitor class: `trtwatch.watch(config, ...)` attaches
    trtwatch.tensorrt.ProgressMonitor (a real trt.IProgressMonitor) for the build;
  * the live nested view, a timeout, Ctrl+C that cancels the build cooperatively
    (KeyboardInterrupt afterwards), an events file, and a result with the phase times.
The network is a small one made with the network API (the sample parses ResNet-50
from ONNX), so that the example runs anywhere TensorRT's Python bindings do — and in
trtwatch's tests, against its TensorRT test double.

    python3 simple_progress_monitor.py [--timeout 2h] [--events build.jsonl]
"""
import argparse
import sys

import tensorrt as trt

import trtwatch

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)


def build_network(builder, layers):
    network = builder.create_network(0)
    tensor = network.add_input("data", trt.float32, (1, 3, 224, 224))
    for _ in range(layers):
        tensor = network.add_identity(tensor).get_output(0)
    network.mark_output(tensor)
    return network


def build_engine(layers, timeout, events):
    builder = trt.Builder(TRT_LOGGER)
    network = build_network(builder, layers)
    config = builder.create_builder_config()
    with trtwatch.watch(config, progress="auto", timeout=timeout, events=events) as w:
        plan = w.returned(builder.build_serialized_network(network, config))
    print(w.result.summary())
    return plan, w.result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--timeout", default=None, help="e.g. 90s, 2h")
    parser.add_argument("--events", default=None, help="also write the event stream (JSON lines) here")
    args = parser.parse_args()
    plan, result = build_engine(args.layers, args.timeout, args.events)
    if plan is None:
        print(f"no engine: {result.status}", file=sys.stderr)
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
