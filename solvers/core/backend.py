"""Backends: NumPy (CPU, float64 reference) and CuPy (GPU), kernel loading and device timers.

`resolve(name)` turns "numpy" | "cupy" | "auto" into a `Backend`. "auto" picks CuPy only when a CUDA
device really works (a tiny allocation and reduction succeed, ENVIRONMENT.md), and asking for
"cupy" where none works raises ParameterError: never a silent fall-back to NumPy.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ParameterError

BACKENDS = ("auto", "numpy", "cupy")
DTYPES = ("float32", "float64")
CTYPES = {"float32": "float", "float64": "double"}


@functools.lru_cache(maxsize=1)
def gpu_status() -> tuple[bool, str]:
    """(usable, reason). Tries a real allocation and reduction: `import cupy` alone proves nothing."""
    if os.environ.get("PDESTUDIO_NO_GPU"):
        return False, "PDESTUDIO_NO_GPU is set"
    try:
        import cupy as cp
    except Exception as e:  # ImportError, or a broken CUDA install
        return False, f"CuPy is not installed ({type(e).__name__}); install the 'gpu' extra"
    try:
        a = cp.arange(8, dtype=cp.float64)
        if float(a.sum()) != 28.0:
            return False, "CuPy computed a wrong reduction"
        name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        return True, name
    except Exception as e:
        return False, f"no usable CUDA device ({type(e).__name__}: {str(e)[:80]})"


def gpu_available() -> bool:
    return gpu_status()[0]


@dataclass(frozen=True)
class Backend:
    name: str  # "numpy" | "cupy"
    xp: object  # the array module

    @property
    def is_gpu(self) -> bool:
        return self.name == "cupy"

    def asnumpy(self, a) -> np.ndarray:
        """A host copy of `a` (a device array, or already a host array such as a mesh's
        coordinates, which stay on the host on every backend)."""
        if self.is_gpu and not isinstance(a, (np.ndarray, np.generic, list, tuple)):
            return a.get()
        return np.array(a, copy=True)

    def asarray(self, a, dtype=None):
        return self.xp.asarray(a, dtype=dtype)

    def all_finite(self, a):
        """Whether every value of `a` is finite, as a 0-d array on the device (no host sync; on
        CuPy one fused pass over `a`, no temporary array of flags as isfinite(a).all() makes)."""
        if self.is_gpu:
            return _reducer(self.xp, "isfinite(x)")(a)
        return self.xp.isfinite(a).all()

    def all_positive(self, a):
        """Whether every value of `a` is > 0 (NaN is not), as all_finite returns it."""
        if self.is_gpu:
            return _reducer(self.xp, "x > 0")(a)
        return (a > 0).all()

    def synchronize(self):
        if self.is_gpu:
            self.xp.cuda.get_current_stream().synchronize()

    def timer(self) -> "Timer":
        return Timer(self)


_REDUCERS: dict = {}


def _reducer(cp, predicate: str):
    """A CuPy reduction: whether `predicate` of x holds for every element (cached)."""
    k = _REDUCERS.get(predicate)
    if k is None:
        k = _REDUCERS[predicate] = cp.ReductionKernel(
            "T x", "bool y", predicate, "a && b", "y = a", "true",
            f"pdestudio_all_{len(_REDUCERS)}")
    return k


def resolve(name: str = "auto") -> Backend:
    if name not in BACKENDS:
        raise ParameterError(f"backend '{name}' is unknown; allowed: {', '.join(BACKENDS)}")
    if name == "numpy":
        return Backend("numpy", np)
    ok, why = gpu_status()
    if ok:
        import cupy as cp
        return Backend("cupy", cp)
    if name == "cupy":
        raise ParameterError(f"backend 'cupy' was asked for but is not usable: {why}; "
                             "allowed here: numpy, auto")
    return Backend("numpy", np)


@contextlib.contextmanager
def on_stream(stream):
    """Make `stream` current for the block, then make current again exactly the stream that was
    before. (CuPy's `with stream:` leaves CUDA's default stream current after the block when the
    stream before was made current with `use()`: the work queued after it then ran on the default
    stream, unordered with a non-blocking solver stream, and shallow water diverged at step 128.)"""
    import cupy as cp
    before = cp.cuda.get_current_stream()
    stream.use()
    try:
        yield stream
    finally:
        before.use()


def check_dtype(dtype: str) -> str:
    dtype = str(np.dtype(dtype)) if dtype in (np.float32, np.float64) else str(dtype)
    if dtype not in DTYPES:
        raise ParameterError(f"dtype '{dtype}' is unknown; allowed: {', '.join(DTYPES)}")
    return dtype


class Timer:
    """Elapsed time of a region: CUDA events on the GPU (device time), perf_counter on the CPU."""

    def __init__(self, backend: Backend):
        self.backend = backend
        self.seconds = 0.0

    def __enter__(self):
        if self.backend.is_gpu:
            cp = self.backend.xp
            self._start, self._stop = cp.cuda.Event(), cp.cuda.Event()
            self._start.record()
        else:
            self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.backend.is_gpu:
            cp = self.backend.xp
            self._stop.record()
            self._stop.synchronize()
            self.seconds = cp.cuda.get_elapsed_time(self._start, self._stop) / 1e3
        else:
            self.seconds = time.perf_counter() - self._t0
        return False


CORE_KERNELS = Path(__file__).resolve().parent / "kernels"  # clock.cuh: the device landing rule


@functools.lru_cache(maxsize=None)
def _module(path: str, dtype: str, names: tuple[str, ...], options: tuple[str, ...], device: int,
            cooperative: bool = False):
    import cupy as cp
    src = Path(path).read_text()
    code = f'#line 1 "{path}"\n' + src
    mod = cp.RawModule(code=code, options=("--std=c++17",) + options, name_expressions=names,
                       enable_cooperative_groups=cooperative)
    mod.compile()
    return mod


@functools.lru_cache(maxsize=None)
def _include_options(dirs: tuple[str, ...]) -> tuple[str, ...]:
    """-I for each folder, and a hash of the headers there: CuPy's kernel cache keys on the .cu
    source and the options, not on the headers a kernel includes."""
    digest = hashlib.sha1()
    for d in dirs:
        for h in sorted(Path(d).glob("*.cuh")):
            digest.update(h.name.encode() + h.read_bytes())
    return tuple(f"-I{d}" for d in dirs) + (f"-DPDE_HEADERS_SHA1=0x{digest.hexdigest()[:16]}",)


def blocks_per_sm(kern, threads: int, props: dict, dynamic_smem: int = 0) -> int:
    """Resident blocks per SM for `kern` (registers, shared memory, threads, block slots)."""
    regs = max(1, int(kern.num_regs))
    regs_per_warp = -(-regs * 32 // 256) * 256
    by_regs = props["regsPerMultiprocessor"] // (regs_per_warp * (threads // 32))
    smem = int(kern.shared_size_bytes) + dynamic_smem + 1024  # 1 KiB per block is reserved
    by_smem = props["sharedMemPerMultiprocessor"] // smem
    by_threads = props["maxThreadsPerMultiProcessor"] // threads
    return max(0, min(by_regs, by_smem, by_threads, props.get("maxBlocksPerMultiProcessor", 32)))


def resident_blocks(kern, threads: int, dynamic_smem: int = 0) -> int:
    """Blocks of `kern` the current device holds at once (all SMs): a launch of more blocks runs
    in waves, the last one partly filled."""
    import cupy as cp
    props = device_props(cp.cuda.Device().id)
    return props["multiProcessorCount"] * blocks_per_sm(kern, threads, props, dynamic_smem)


@functools.lru_cache(maxsize=None)
def device_props(device: int) -> dict:
    """cudaGetDeviceProperties of a device (cached: the call takes about a millisecond)."""
    import cupy as cp
    return cp.cuda.runtime.getDeviceProperties(device)


def load_kernels(cu_file: str | Path, dtype: str, templates: list[str],
                 options: tuple[str, ...] = (), cooperative: bool = False,
                 include_dirs: tuple[str | Path, ...] = ()) -> dict:
    """Compile the templates of a `.cu` file once per (file, dtype, device) and return
    {template_name: RawKernel}. `templates` are kernel template names instantiated with the real
    type of `dtype` (e.g. "heat_step" -> "heat_step<double>"). The file's own folder, core's
    kernels/ (clock.cuh) and `include_dirs` are on the include path. `cooperative`: the module's
    kernels are launched with cuLaunchCooperativeKernel (all blocks co-resident, so grid-wide
    barriers are safe; a grid larger than the device holds is refused at launch)."""
    import cupy as cp
    return dict(_kernels(cu_file, dtype, tuple(templates), tuple(options), cooperative,
                         tuple(include_dirs), cp.cuda.Device().id))


@functools.lru_cache(maxsize=None)
def _kernels(cu_file, dtype, templates, options, cooperative, include_dirs, device) -> dict:
    """load_kernels' answer, found once per arguments and device: every scheme a simulation or
    an ensemble member builds asks it again (the path resolution alone costs ~0.5 ms)."""
    real = CTYPES[dtype]
    names = tuple(f"{t}<{real}>" for t in templates)
    cu = Path(cu_file).resolve()
    dirs = tuple(dict.fromkeys(str(Path(d).resolve()) for d in
                               (cu.parent, CORE_KERNELS, *include_dirs)))
    mod = _module(str(cu), dtype, names, _include_options(dirs) + options, device, cooperative)
    return {t: mod.get_function(n) for t, n in zip(templates, names)}
