"""The wheel's build (pyproject.toml names the rest): the extension module vkcnn._vkcnn comes from
CMake, with libvkcnn and libvkcnn_onnx copied into the package beside it (the module's RPATH is
$ORIGIN), so that the installed wheel needs no PYTHONPATH or LD_LIBRARY_PATH.

Environment:
  VKCNN_WHEEL_BUILD_DIR  a build tree that scripts/build.sh (or cmake) configured: the module is
                         built there (a no-op when it is up to date) and taken from it. Without it,
                         a build tree of its own under build/setuptools/ is configured.
  VKCNN_CMAKE_ARGS       more arguments for that configure (as scripts/build.sh takes them), and
  VKCNN_BUILD_TYPE       its CMAKE_BUILD_TYPE (RelWithDebInfo, as scripts/build.sh; the wheel's
                         binaries are stripped).
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

ROOT = Path(__file__).resolve().parent
# setuptools' own build folders (and egg-info), not beside the sources.
BUILD_BASE = ROOT / "build" / "setuptools"


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(vkcnn VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        tree = os.environ.get("VKCNN_WHEEL_BUILD_DIR")
        if tree:
            tree = Path(tree).resolve()
            if not (tree / "CMakeCache.txt").exists():
                sys.exit(f"VKCNN_WHEEL_BUILD_DIR={tree} is not a configured CMake build tree")
        else:
            tree = Path(self.build_temp).resolve() / "cmake"
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            self.spawn(["cmake", "-S", str(ROOT), "-B", str(tree), *generator,
                        # scripts/build.sh's type: its objects are in ccache's cache already
                        "-DCMAKE_BUILD_TYPE=" + os.environ.get("VKCNN_BUILD_TYPE", "RelWithDebInfo"),
                        "-DVKCNN_BUILD_TESTS=OFF",
                        "-DVKCNN_BUILD_SAMPLES=OFF", f"-DPython3_EXECUTABLE={sys.executable}",
                        *shlex.split(os.environ.get("VKCNN_CMAKE_ARGS", ""))])
        self.spawn(["cmake", "--build", str(tree), "--target", "vkcnn_python",
                    "--parallel", str(os.cpu_count() or 1)])
        staging = Path(self.build_temp).resolve() / "wheel-install"
        shutil.rmtree(staging, ignore_errors=True)
        self.spawn(["cmake", "--install", str(tree), "--component", "python_wheel", "--strip",
                    "--prefix", str(staging)])
        destination = Path(self.get_ext_fullpath(ext.name)).parent
        destination.mkdir(parents=True, exist_ok=True)
        copy_package_binaries(staging / "vkcnn", destination, Path(self.get_ext_filename("_vkcnn")).name)


def copy_package_binaries(source, destination, module_name):
    """The module and the libraries under their sonames (the name the module's NEEDED entries
    give; a wheel holds no symbolic links, so the versioned file is copied under that name)."""
    module = source / module_name
    if not module.exists():
        found = ", ".join(p.name for p in source.glob("_vkcnn*")) or "none"
        sys.exit(f"the build tree's module is not {module_name} (found: {found}): it was built "
                 f"for another Python than {sys.executable} (set Python3_EXECUTABLE)")
    shutil.copy2(module, destination / module_name)
    for library in source.glob("lib*.so.*"):
        if re.fullmatch(r"lib\w+\.so\.\d+", library.name):  # the soname
            shutil.copyfile(library.resolve(), destination / library.name)


BUILD_BASE.mkdir(parents=True, exist_ok=True)
setup(
    version=version(),
    packages=["vkcnn"],
    package_dir={"": "python"},
    package_data={"vkcnn": ["*.pyi", "py.typed"]},
    include_package_data=False,
    ext_modules=[Extension("vkcnn._vkcnn", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(BUILD_BASE)}, "egg_info": {"egg_base": str(BUILD_BASE)}},
    zip_safe=False,
)
