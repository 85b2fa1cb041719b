"""Puts the built trtwatch package and the TensorRT TEST DOUBLE on sys.path.

ctest passes their places (TRTWATCH_PYTHON_PATH, TRTWATCH_TENSORRT_DOUBLE); by hand,
the release build's are used: build/python and build/tests/python/tensorrt_double.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("TRTWATCH_SOURCE_DIR", os.path.dirname(os.path.dirname(HERE)))
PACKAGE_DIR = os.environ.get("TRTWATCH_PYTHON_PATH", os.path.join(SOURCE, "build", "python"))
DOUBLE_DIR = os.environ.get("TRTWATCH_TENSORRT_DOUBLE", os.path.join(SOURCE, "build", "tests", "python", "tensorrt_double"))
for path in (DOUBLE_DIR, PACKAGE_DIR):
    if path not in sys.path:
        sys.path.insert(0, path)
# Child processes (the SIGINT and sample tests) see the same modules.
os.environ["PYTHONPATH"] = os.pathsep.join([DOUBLE_DIR, PACKAGE_DIR, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
