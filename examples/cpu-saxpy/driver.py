#!/usr/bin/env python3
"""cpu-saxpy driver (Python SDK): builds each subject's saxpy.cpp into a cached shared library, times
saxpy_run through ctypes on the case's arrays, and checks out = a*x + y against a double-precision reference.

Usage (by cko): python3 driver.py --request <request.json>
"""
import array
import ctypes
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sdk", "python"))
from cko_driver import Workload, run_driver  # noqa: E402

COMPILE = ["g++", "-O2", "-std=c++17", "-shared", "-fPIC"]


def private_cache_root() -> str:
    """$TMPDIR/cko-cpu-saxpy-<uid>, 0700 and ours (never a directory someone else could plant code in)."""
    root = os.path.join(tempfile.gettempdir(), f"cko-cpu-saxpy-{os.getuid()}")
    os.makedirs(root, mode=0o700, exist_ok=True)
    st = os.lstat(root)
    if st.st_uid != os.getuid() or st.st_mode & 0o022 or not os.path.isdir(root) or os.path.islink(root):
        raise RuntimeError(f"cache directory {root} is not a private directory of this user")
    return root


def build_library(source: str) -> str:
    """The shared library built from `source`, cached by (source bytes, flags, compiler version)."""
    version = subprocess.run([COMPILE[0], "--version"], capture_output=True, text=True, check=True).stdout
    with open(source, "rb") as f:
        key = hashlib.sha256(f.read() + repr(COMPILE).encode() + version.encode()).hexdigest()[:32]
    root = private_cache_root()
    lib = os.path.join(root, key, "libsaxpy.so")
    if os.path.exists(lib):
        return lib
    tmp = tempfile.mkdtemp(prefix=".build-", dir=root)
    try:
        proc = subprocess.run(COMPILE + ["-o", os.path.join(tmp, "libsaxpy.so"), source],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"compiling {source} failed:\n{(proc.stdout + proc.stderr)[:4096]}")
        os.rename(tmp, os.path.join(root, key))  # publish atomically; a concurrent winner is fine
    except OSError:
        if not os.path.exists(lib):
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return lib


def subject_source(path: str) -> str:
    """A subject is its snapshot directory (holding saxpy.cpp) or the source file itself."""
    return os.path.join(path, "saxpy.cpp") if os.path.isdir(path) else path


def address(buf: array.array) -> int:
    return buf.buffer_info()[0]


class Saxpy(Workload):
    # setup() reads only the case and no subject writes into x or y: a session builds them once.
    keep_setup_per_case = True

    def setup(self, request):
        case = request.case.load_json()
        self.rows, self.cols, self.a = int(case["rows"]), int(case["cols"]), float(case["a"])
        n = self.rows * self.cols
        rng = random.Random(int(case["seed"]))
        # Positive inputs: a*x + y never cancels, so a relative error is meaningful everywhere.
        self.x = array.array("f", (0.5 + rng.random() for _ in range(n)))
        self.y = array.array("f", (0.5 + rng.random() for _ in range(n)))
        self.expected = array.array("d", (self.a * xi + yi for xi, yi in zip(self.x, self.y)))

    def prepare(self, subject, request):
        lib = ctypes.CDLL(build_library(subject_source(subject.path)), mode=ctypes.RTLD_LOCAL)
        fn = lib.saxpy_run
        fn.restype = None
        fn.argtypes = [ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        out = array.array("f", bytes(4 * self.rows * self.cols))
        args = (self.a, address(self.x), address(self.y), address(out), self.rows, self.cols)
        return {"lib": lib, "fn": fn, "args": args, "out": out}

    def run(self, state):
        state["fn"](*state["args"])

    def check(self, state):
        err = max(abs(o - e) / abs(e) for o, e in zip(state["out"], self.expected))
        return {"max_rel_err": err}


if __name__ == "__main__":
    raise SystemExit(run_driver(Saxpy(), warmup_s=0.2))
