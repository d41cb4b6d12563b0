"""The generated kernels of model files compiled for the CPU (docs/EQUATIONS.md, "On the CPU").

The NumPy backend evaluates a model's trees array by array (reference.py): about forty
whole-array operations a step for the Brusselator, each a pass over memory. The fused CUDA
source (codegen.py into kernels/equations.cu) reads each species once per node and does the
whole stage in registers; here the same source is built by the system's C++ compiler into a
shared library, the CUDA keywords defined away, and each "launch" is a loop over the nodes
(OpenMP threads where the compiler has OpenMP). `fused.FusedEquations(sim, xp=numpy,
kernels=cpu_kernels(sim))` then drives it exactly as it drives the GPU module: same stages,
buffers, accumulators, Dirichlet pins and IMEX solves, on NumPy arrays.

The library is cached under ~/.cache/pdestudio/equations/ by the SHA-256 of the source, the
dtype, the compiler and its flags, so a model is compiled once (about a second); no user text
reaches the compiler except through the whitelisted expression trees, as on the GPU.

Used on the CPU when kernel=fused (the default) and a compiler works; kernel=array, no compiler,
a failed build or PDESTUDIO_CPU_COMPILE=0 give the NumPy reference path, and `why_not()` says
why. The compiler is $CXX, else c++, g++ or clang++ on the PATH.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from .codegen import Generator
from .fused import TEMPLATE, _cache_dir, kernel_source

# The CUDA spellings on the CPU: one "thread" per node, its index in thread-local blockIdx
# (each OpenMP thread has its own); lam_max's warp shuffle is the identity with blockDim 1 and
# its atomicMax a compare-and-swap loop (threads of the loop do run at once here).
SHIM = r"""
#include <cmath>
#include <cstring>
#include <vector>
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
struct Dim { int x; int y; };
static thread_local Dim blockIdx = {0, 0};
static thread_local int cpu_ix = 0, cpu_iy = 0;  // a grid node's column and row (GRID_INDEX)
static const Dim blockDim = {1, 1};
static const Dim threadIdx = {0, 0};
#define __syncthreads() ((void)0)
#define EQ_SHARED(name) static thread_local std::vector<unsigned char> name##_v(1 << 22); \
    unsigned char* const name = name##_v.data()
template <class V> inline V __shfl_down_sync(unsigned, V v, int) { return v; }
static inline int __float_as_int(float v) { int i; std::memcpy(&i, &v, 4); return i; }
static inline long long __double_as_longlong(double v)
{ long long i; std::memcpy(&i, &v, 8); return i; }
static inline float __int_as_float(int i) { float v; std::memcpy(&v, &i, 4); return v; }
static inline double __longlong_as_double(long long i)
{ double v; std::memcpy(&v, &i, 8); return v; }
template <class I> static inline I atomicMax(I* p, I v)
{
    I o = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > o && !__atomic_compare_exchange_n(p, &o, v, true, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED)) {}
    return o;
}
using std::fabs; using std::fmin; using std::fmax; using std::exp; using std::expm1;
"""

FLAGS = ("-O3", "-std=c++17", "-shared", "-fPIC", "-fno-math-errno")
_NP = {"int": np.int32, "unsigned char": np.uint8}
_C = {"int": ctypes.c_int32, "unsigned char": ctypes.c_uint8, "double": ctypes.c_double,
      "float": ctypes.c_float}
PARALLEL_MIN = 8192  # nodes per launch below which the loop runs on one thread


def compiler() -> str | None:
    """The C++ compiler (the module docstring), or None."""
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx)
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


def disabled() -> str | None:
    """Why the compiled CPU path is off by request, or None."""
    if os.environ.get("PDESTUDIO_CPU_COMPILE", "1").strip().lower() in ("0", "no", "off",
                                                                         "false"):
        return "PDESTUDIO_CPU_COMPILE=0"
    return None


_OPENMP: dict = {}


def _openmp_flag(cxx: str) -> str | None:
    """'-fopenmp' where `cxx` builds and links an OpenMP library, else None (checked once)."""
    if cxx not in _OPENMP:
        ok = False
        with tempfile.TemporaryDirectory(prefix="pdestudio-omp") as d:
            src = os.path.join(d, "t.cpp")
            with open(src, "w") as f:
                f.write('#include <omp.h>\nextern "C" int f() { return omp_get_max_threads(); }\n')
            try:
                r = subprocess.run([cxx, "-fopenmp", "-shared", "-fPIC", "-o",
                                    os.path.join(d, "t.so"), src], capture_output=True,
                                   timeout=120)
                ok = r.returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
        _OPENMP[cxx] = "-fopenmp" if ok else None
    return _OPENMP[cxx]


def parameters(sim, kind: str) -> list[tuple[str, str, bool, bool]]:
    """(name, C base type, is pointer, is written) of the generated kernel's parameters."""
    out = []
    for item in Generator(sim).signature(kind).split(","):
        words = item.replace("*", " * ").split()
        name, ptr = words[-1], "*" in words
        base = " ".join(w for w in words[:-1] if w not in ("const", "*", "__restrict__"))
        out.append((name, base, ptr, ptr and not words[0] == "const"))
    return out


# A grid kernel finds its node's column and row by a division, `i % nx` and `i / nx`: on the
# GPU it hides behind memory, on the CPU it is most of a node's cost. The CPU build reads them
# from the loop instead, which walks the grid row by row.
GRID_INDEX = ("const int ix = i % nx, iy = i / nx;", "const int ix = cpu_ix, iy = cpu_iy;")


def kernel_call(name: str, params, ctype: str) -> str:
    """C++ text of one call of kernel `name` in real type `ctype` with its arguments unpacked
    from `void** argv` (pointers, and scalars passed by address), in `params`' order."""
    args = []
    for k, (_, base, ptr, written) in enumerate(params):
        t = ctype if base == "T" else base
        if ptr:
            args.append(f"({'' if written else 'const '}{t}*)argv[{k}]")
        else:
            args.append(f"*(const {t}*)argv[{k}]")
    return f"{name}<{ctype}>(" + ", ".join(args) + ");"


def _wrapper(name: str, params, ctype: str, omp: bool, grid_loop: bool) -> str:
    call = kernel_call(name, params, ctype)
    head = f'extern "C" void launch_{name}(long long count, long long gx, void** argv) {{\n'
    if grid_loop:
        names = [p[0] for p in params]
        kx, ky = names.index("nx"), names.index("ny")
        pragma = (f"#pragma omp parallel for schedule(static) if(nx * ny >= {PARALLEL_MIN})\n"
                  if omp else "")
        return (head + f"  const int nx = *(const int*)argv[{kx}], "
                f"ny = *(const int*)argv[{ky}];\n  (void)count; (void)gx;\n"
                f"{pragma}  for (int iy = 0; iy < ny; ++iy) {{\n    cpu_iy = iy;\n"
                "    for (int ix = 0; ix < nx; ++ix) {\n"
                f"      cpu_ix = ix; blockIdx.x = iy * nx + ix;\n      {call}\n    }}\n"
                "  }\n}\n")
    pragma = (f"#pragma omp parallel for schedule(static) if(count >= {PARALLEL_MIN})\n"
              if omp else "")
    return (head + f"{pragma}  for (long long q = 0; q < count; ++q) {{\n"
            "    blockIdx.x = (int)(q % gx); blockIdx.y = (int)(q / gx);\n"
            f"    {call}\n  }}\n}}\n")


class Launch:
    """One compiled kernel, called as a CuPy RawKernel: (grid, block, args). Array arguments
    must be C-contiguous arrays of the kernel's types (checked on the first call, as the
    fused driver passes the same kinds of arrays every time)."""

    def __init__(self, lib, name, params, real):
        self.fn = getattr(lib, f"launch_{name}")
        self.fn.argtypes = [ctypes.c_longlong, ctypes.c_longlong, ctypes.c_void_p]
        self.fn.restype = None
        self.name, self.params, self.real = name, params, real
        creal = "double" if np.dtype(real) == np.float64 else "float"
        self.boxes = [None if ptr else _C[creal if base == "T" else base]
                      for _, base, ptr, _ in params]
        self.checked = False

    def _check(self, args):
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}: {len(args)} arguments, wants {len(self.params)}")
        for (pname, base, ptr, _), a in zip(self.params, args):
            if ptr and a is not None:
                want = self.real if base == "T" else _NP[base]
                if not (isinstance(a, np.ndarray) and a.dtype == want
                        and a.flags.c_contiguous):
                    raise TypeError(f"{self.name}: argument {pname} must be a C-contiguous "
                                    f"{np.dtype(want).name} array")
        self.checked = True

    def __call__(self, grid, block, args):
        if not self.checked:
            self._check(args)
        argv, keep = [], []
        for box, a in zip(self.boxes, args):
            if box is None:
                argv.append(None if a is None else a.ctypes.data)
            else:
                b = box(a)
                keep.append(b)
                argv.append(ctypes.addressof(b))
        gx = int(grid[0]) * int(block[0])
        count = gx * (int(grid[1]) if len(grid) > 1 else 1)
        self.fn(count, gx, (ctypes.c_void_p * len(argv))(*argv))


_LIBS: dict = {}   # library path -> loaded CDLL
_FAILED: dict = {}  # digest -> the compiler's message


class BuildError(RuntimeError):
    pass


def _build(src: str, dtype: str, cxx: str, omp: str | None) -> ctypes.CDLL:
    flags = list(FLAGS) + ([omp] if omp else [])
    digest = hashlib.sha256("\0".join([src, dtype, cxx, *flags, sys.platform]).encode()
                            ).hexdigest()[:24]
    if digest in _FAILED:
        raise BuildError(_FAILED[digest])
    folder = _cache_dir()
    lib = folder / f"cpu_{digest}.so"
    if str(lib) in _LIBS:
        return _LIBS[str(lib)]
    if not lib.exists():
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="pdestudio-cpu") as d:
            cpp = os.path.join(d, "k.cpp")
            with open(cpp, "w") as f:
                f.write(src)
            from ..core.backend import CORE_KERNELS
            tmp = os.path.join(d, "k.so")
            try:
                r = subprocess.run([cxx, *flags, f"-I{CORE_KERNELS}", f"-I{TEMPLATE.parent}",
                                    "-o", tmp, cpp], capture_output=True, text=True,
                                   timeout=600)
            except (OSError, subprocess.SubprocessError) as e:
                _FAILED[digest] = f"{cxx} did not run: {e}"
                raise BuildError(_FAILED[digest]) from None
            if r.returncode != 0:
                _FAILED[digest] = f"{cxx} failed: {r.stderr.strip()[-800:]}"
                raise BuildError(_FAILED[digest])
            part = lib.with_suffix(f".{os.getpid()}.tmp")
            shutil.copyfile(tmp, part)
            os.replace(part, lib)
    # OpenMP threads that spin long while they wait (libgomp's default, 300k turns) collapse
    # when processes share the cores (two runs at once, a sweep's workers). Brusselator 256^2
    # on two cores: one run 6,070 steps/s, two at once 590 each; with a spin of 1,000 turns
    # 4,830 alone and 2,700 each (10,000 turns: 1,370 to 2,680 each, by chance; sleeping at
    # once: 4,570 alone). A user's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins; it takes effect
    # only if OpenMP was not loaded before.
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ.setdefault("GOMP_SPINCOUNT", "1000")
    try:
        _LIBS[str(lib)] = ctypes.CDLL(str(lib))
    except OSError as e:
        _FAILED[digest] = f"the compiled library did not load: {e}"
        raise BuildError(_FAILED[digest]) from None
    return _LIBS[str(lib)]


def cpu_kernels(sim) -> dict:
    """{"eq_stage", "eq_rates"} of `sim`'s model compiled for the CPU (cached); raises
    BuildError with the reason where it cannot be built."""
    ctype = {"float64": "double", "float32": "float"}[np.dtype(sim.dtype).name]
    kinds = {"eq_stage": "stage", "eq_rates": "rates"}
    params = {k: parameters(sim, v) for k, v in kinds.items()}
    cxx = compiler()
    if cxx is None:
        raise BuildError("no C++ compiler (set CXX, or install g++ or clang++)")
    omp = _openmp_flag(cxx)
    body = kernel_source(sim)
    grid_loop = {k: GRID_INDEX[0] in body and {"nx", "ny"} <= {p[0] for p in params[k]}
                 for k in kinds}
    if all(grid_loop.values()):
        body = body.replace(*GRID_INDEX)
    else:
        grid_loop = dict.fromkeys(kinds, False)
    src = SHIM + body + "".join(_wrapper(k, params[k], ctype, omp is not None, grid_loop[k])
                                for k in kinds)
    lib = _build(src, sim.dtype, cxx, omp)
    real = np.dtype(sim.dtype).type
    return {k: Launch(lib, k, params[k], real) for k in kinds}


def compiled_scheme(sim):
    """The fused driver on NumPy with the compiled kernels, or None with sim.cpu_reason set
    (the reference path then runs)."""
    why = disabled()
    if why is None:
        try:
            kernels = cpu_kernels(sim)
        except BuildError as e:
            why = str(e)
    if why is not None:
        sim.cpu_reason = f"NumPy array path: {why}"
        return None
    from .fused import FusedEquations
    sim.cpu_reason = "generated kernels compiled for the CPU"
    return FusedEquations(sim, xp=np, kernels=kernels)
