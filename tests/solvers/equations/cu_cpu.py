"""The generated CUDA kernels of model files run on the CPU: the source fused.py compiles
(kernels/equations.cu with codegen.py's part) built by g++ into a shared library, CUDA keywords
defined away, one thread per launch of the body (blockDim 1), the threads of a launch in an order
the caller picks (forward, reverse, shuffled). `CpuKernels(sim)` stands in for the compiled module:
`fused.FusedEquations(sim, xp=np, kernels=CpuKernels(sim))` then runs the whole fused driver
(buffers, stages, accumulators, pins) on NumPy arrays; with `tiled=True` eq_tile too (a launch
of blocks of one thread each, which then walks its whole tile: __syncthreads is a no-op). `CpuKernels(sim, batched=True)` adds the
ensembles' eq_stage_batch (a 2D grid: blockIdx.y is the member; the order shuffles the (node,
member) threads together), for `ens._start_batched(np, kernels, solo_scheme)` of
solvers/equations/ensemble.py.

Every launch checks what a GPU would not: each argument's type against the kernel's parameter
(an array's dtype and C-contiguity, a scalar's exact NumPy type), and that no array the kernel
writes shares memory with another argument (a thread would read what another writes in the same
launch). Running the same launches in two orders and finding different results shows a race the
checks missed."""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

# the library's CPU build (solvers/equations/cpu.py) defines CUDA away the same way: blockDim 1,
# threadIdx 0, a thread-local blockIdx set per "thread" by the launch loop here
from pdestudio.solvers.equations.cpu import SHIM, kernel_call, parameters
from pdestudio.solvers.equations.fused import TEMPLATE, kernel_source

GXX = shutil.which("g++")

NP = {"int": np.int32, "unsigned char": np.uint8}


class Launch:
    """One kernel of the library; called as a CuPy RawKernel: (grid, block, args)."""

    def __init__(self, lib, name, params, real, order):
        self.fn = getattr(lib, f"launch_{name}")
        self.fn.argtypes = [ctypes.POINTER(ctypes.c_longlong), ctypes.c_longlong,
                            ctypes.c_longlong, ctypes.POINTER(ctypes.c_void_p)]
        self.name, self.params, self.real, self.order = name, params, real, order

    def __call__(self, grid, block, args):
        assert len(args) == len(self.params), f"{self.name}: {len(args)} arguments"
        argv, keep, arrays = [], [], []
        for (pname, base, ptr, written), a in zip(self.params, args):
            want = self.real if base == "T" else NP[base]
            if ptr:
                if a is None:
                    argv.append(None)
                    continue
                assert isinstance(a, np.ndarray), f"{self.name}: {pname} is {type(a)}"
                assert a.dtype == want, f"{self.name}: {pname} is {a.dtype}, wants {want}"
                assert a.flags.c_contiguous, f"{self.name}: {pname} is not C-contiguous"
                arrays.append((pname, a, written))
                argv.append(a.ctypes.data)
            else:
                assert type(a) is want, f"{self.name}: {pname} is {type(a)}, wants {want}"
                box = np.array([a], dtype=want)
                keep.append(box)
                argv.append(box.ctypes.data)
        for pname, a, written in arrays:
            if written:
                for other, b, _ in arrays:
                    assert other == pname or not np.shares_memory(a, b), \
                        f"{self.name}: {pname} (written) shares memory with {other}"
        gx = int(grid[0]) * int(block[0])  # threads along x (blocks of one thread here)
        count = gx * (int(grid[1]) if len(grid) > 1 else 1)
        order = self.order(count)
        c_argv = (ctypes.c_void_p * len(argv))(*argv)
        self.fn(order.ctypes.data_as(ctypes.POINTER(ctypes.c_longlong)), count, gx, c_argv)


def _wrapper(name: str, params, ctype: str) -> str:
    return (f'extern "C" void launch_{name}(const long long* order, long long count, '
            "long long gx, void** argv) {\n"
            "  for (long long q = 0; q < count; ++q) {\n"
            "    blockIdx.x = (int)(order[q] % gx); blockIdx.y = (int)(order[q] / gx);\n"
            f"    {kernel_call(name, params, ctype)} }}\n}}\n")


def forward(n):
    return np.arange(n, dtype=np.int64)


def reverse(n):
    return np.arange(n, dtype=np.int64)[::-1].copy()


def shuffled(seed=0):
    rng = np.random.default_rng(seed)
    return lambda n: rng.permutation(n).astype(np.int64)


_LIBS: dict = {}  # source text -> the loaded library (one g++ build per generated source)


def _library(src: str):
    from pdestudio.solvers.core.backend import CORE_KERNELS
    if src not in _LIBS:
        folder = Path(tempfile.mkdtemp(prefix="eqcpu"))
        (folder / "k.cpp").write_text(src)
        lib = folder / "k.so"
        r = subprocess.run([GXX, "-O1", "-std=c++17", "-shared", "-fPIC", f"-I{CORE_KERNELS}",
                            f"-I{TEMPLATE.parent}", "-o", str(lib), str(folder / "k.cpp")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
        _LIBS[src] = ctypes.CDLL(str(lib))
    return _LIBS[src]


class CpuKernels(dict):
    """{"eq_stage", "eq_rates"} (and with `batched` "eq_stage_batch") of `sim`'s model built
    by g++; `order(n)` gives the threads' order in each launch."""

    def __init__(self, sim, order=forward, batched=False, tiled=False):
        super().__init__()
        ctype = {"float64": "double", "float32": "float"}[np.dtype(sim.dtype).name]
        kinds = {"eq_stage": "stage", "eq_rates": "rates"}
        if batched:
            kinds["eq_stage_batch"] = "batch"
        if tiled:  # eq_tile: a launch's "threads" are its blocks (each one thread here)
            kinds["eq_tile"] = "tile"
        params = {k: parameters(sim, v) for k, v in kinds.items()}
        lib = _library(SHIM + kernel_source(sim, batched, tiled)
                       + "".join(_wrapper(k, params[k], ctype) for k in kinds))
        real = np.dtype(sim.dtype).type
        for k in kinds:
            self[k] = Launch(lib, k, params[k], real, order)
