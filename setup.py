"""Builds the native part of `trtwatch` with the project's CMake (see pyproject.toml).

Environment: CMAKE_BUILD_PARALLEL_LEVEL (jobs), TRTWATCH_CMAKE_ARGS (more -D options).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()


def version():
    text = (ROOT / "include" / "trtwatch" / "version.h").read_text()
    parts = [re.search(rf"#define TRTWATCH_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class CMakeExtension(Extension):
    def __init__(self, name, target):
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     "-DTRTWATCH_BUILD_TESTS=OFF", "-DTRTWATCH_BUILD_BENCH=OFF", "-DTRTWATCH_BUILD_PYTHON=ON",
                     "-DTRTWATCH_BUILD_SERVICE=OFF",  # the module needs the library alone
                     f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        try:  # pybind11 from the build requirements (pip's isolated build) when there is one
            import pybind11  # pylint: disable=import-outside-toplevel

            configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass  # CMake finds the system's (Debian: pybind11-dev)
        configure += shlex.split(os.environ.get("TRTWATCH_CMAKE_ARGS", ""))
        subprocess.check_call(configure)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", ext.target, "-j", jobs])
        built = sorted((build_dir / "python" / "trtwatch").glob("_trtwatch*.so"))
        if not built:
            raise RuntimeError(f"CMake built no _trtwatch module in {build_dir / 'python' / 'trtwatch'}")
        destination = Path(self.get_ext_fullpath(ext.name))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], destination)


setup(
    version=version(),
    packages=["trtwatch"],
    package_dir={"": "python"},
    package_data={"trtwatch": ["py.typed", "*.pyi"]},
    ext_modules=[CMakeExtension("trtwatch._trtwatch", target="trtwatch_python")],
    cmdclass={"build_ext": CMakeBuild},
    # Not build/: that is the CMake presets' tree.
    options={"build": {"build_base": "build-python"}},
    zip_safe=False,
)
