#!/usr/bin/env python3
"""A TensorRT build of your own with trtwatch's engine cache (docs/cache.md, "Around your
own build code"): the first run builds and stores the plan, every later run with the
same network, settings, TensorRT and GPU reuses it; runs at once build once.

The key is what the engine depends on: here the network's description and the builder
settings as text (with an ONNX model, pass model="model.onnx" and its bytes count),
TensorRT's version as imported and the GPU (found through CUDA; --gpu names it where
CUDA is not visible to trtwatch).

    python3 cached_engine.py --cache DIR [--layers 8] [--gpu "NVIDIA H100,9.0"]
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=None, help="the cache's folder (default: TRTWATCH_ENGINE_CACHE)")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--gpu", default=None, help='"NAME,COMPUTE_CAPABILITY" (default: found through CUDA)')
    args = parser.parse_args()

    cache = trtwatch.EngineCache(args.cache)
    key = cache.key(options=[f"identity network, {args.layers} layers", "default config"],
                    gpu=tuple(args.gpu.split(",", 1)) if args.gpu else None)

    builder = trt.Builder(TRT_LOGGER)
    network = build_network(builder, args.layers)
    config = builder.create_builder_config()
    # Not `with`: the cache starts the watch, and finishes it at once on a hit.
    w = trtwatch.watch(config, progress="auto")
    engine = cache.get_or_build(key, lambda: builder.build_serialized_network(network, config), watch=w)
    if engine is None:
        print(f"no engine: {w.result.status}: {w.result.error}", file=sys.stderr)
        return w.result.exit_code
    how = "reused" if engine.hit else "built and stored" if engine.stored else "built"
    print(f"{how}: {len(engine.plan)} bytes, key {key.digest[:12]}, build took {engine.build_seconds:.2f}s")
    # engine.plan is what trt.Runtime(TRT_LOGGER).deserialize_cuda_engine() loads.
    return w.result.exit_code


if __name__ == "__main__":
    sys.exit(main())
