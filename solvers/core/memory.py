"""Will a run fit? The memory a simulation needs, estimated from its parameters before anything is
allocated, against what the machine has (docs/MODELS.md §0: bad input, a size the machine cannot hold,
raises ParameterError, never MemoryError).

`Simulation.memory_estimate(params)` returns (host bytes, device bytes): BASE plus
`memory_per_cell` × the number of cells. The cells come from the shared size parameters of docs/MODELS.md §0:
`cells` with geometry=triangles, else the class's `size_param` times `ny` where the model has one
(ny empty = nx); a mesh file counts 0 here (its size is known only once read; the reader has its
own size and memory limits). `memory_per_cell` is the peak of host bytes per cell in float64
(set-up, state, one step's temporaries, the fields), measured per model and checked by
tests/solvers/core/test_memory.py; it may be a mapping geometry -> bytes. The device figure uses
`device_memory_per_cell` (default: the same, an upper bound for the fused kernels).

`available()` is what the host can still give this process: the smallest of /proc/meminfo's
MemAvailable (psutil where installed), the cgroup's memory.max − memory.current and the address
space left under RLIMIT_AS; `device_available()` the GPU's free memory plus CuPy's pool.
"""
from __future__ import annotations

import math

from .errors import ParameterError

BASE = 256 << 20          # the interpreter, NumPy, SciPy, the model's modules
BASE_DEVICE = 64 << 20    # CUDA context aside: kernels, small tables
DEFAULT_PER_CELL = 512    # a model that declares nothing


def cells(cls, params) -> int:
    """Cells (nodes, vertices) of a run of model class `cls` with validated `params`."""
    if params.get("mesh"):
        return 0
    if params.get("geometry") == "triangles" and "cells" in params:
        return int(params["cells"])
    n = params.get(cls.size_param)
    if not isinstance(n, int):
        return 0
    if "ny" in params:
        ny = params["ny"]
        return n * (ny if isinstance(ny, int) else n)
    return n


def per_cell(value, params) -> float:
    if isinstance(value, dict):
        return float(value.get(params.get("geometry"), max(value.values())))
    return float(value)


def estimate(cls, params) -> tuple[int, int]:
    n = cells(cls, params)
    host = per_cell(getattr(cls, "memory_per_cell", DEFAULT_PER_CELL), params)
    dev = getattr(cls, "device_memory_per_cell", None)
    dev = host if dev is None else per_cell(dev, params)
    return BASE + int(math.ceil(host * n)), BASE_DEVICE + int(math.ceil(dev * n))


def _meminfo_available() -> int | None:
    try:
        import psutil  # noqa: PLC0415 - optional
        return int(psutil.virtual_memory().available)
    except Exception:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_available() -> int | None:
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            return max(0, int(limit) - int(f.read().strip()))
    except (OSError, ValueError):
        return None


def _address_space_available() -> int | None:
    try:
        import resource  # noqa: PLC0415 - POSIX only
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return max(0, soft - int(line.split()[1]) * 1024)
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return None


def available() -> int | None:
    """Bytes of host memory this process can still allocate (None: unknown)."""
    known = [v for v in (_meminfo_available(), _cgroup_available(), _address_space_available())
             if v is not None]
    return min(known) if known else None


def device_available() -> int | None:
    """Free bytes on the current CUDA device, counting CuPy's pool (None: unknown)."""
    try:
        import cupy  # noqa: PLC0415 - optional
        free, _ = cupy.cuda.runtime.memGetInfo()
        return int(free) + int(cupy.get_default_memory_pool().free_bytes())
    except Exception:
        return None


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1000
    return ""


def _largest(cls, params, budget: int, base: int, per: float) -> str:
    """'at most about N' for the size parameter, from the budget."""
    cells_max = max(0, (budget - base) / per) if per > 0 else 0
    if params.get("geometry") == "triangles" and "cells" in params:
        return f"cells <= {int(cells_max):,}"
    name = cls.size_param
    if "ny" in params:
        return f"{name} × ny <= {int(cells_max):,} (e.g. {name} = ny = {int(math.isqrt(int(cells_max)))})"
    return f"{name} <= {int(cells_max):,}"


def check(cls, params, gpu: bool) -> None:
    """Raise ParameterError when a run of `cls` with `params` cannot fit in memory."""
    host, device = cls.memory_estimate(params)
    n = cells(cls, params)
    checks = [("host memory", host, available(), BASE)]
    if gpu:
        checks.append(("GPU memory", device, device_available(), BASE_DEVICE))
    for what, need, have, base in checks:
        if have is None or need <= have:
            continue
        per = (need - base) / n if n else 0.0
        if params.get("geometry") == "triangles" and "cells" in params:
            size = f"cells = {params['cells']}"
        elif "ny" in params:
            nx = params.get(cls.size_param)
            size = f"{cls.size_param} = {nx}, ny = {params['ny'] or nx}"
        else:
            size = f"{cls.size_param} = {params.get(cls.size_param)}"
        raise ParameterError(
            f"{cls.model}: a run with {size} needs about {_size(need)} of {what} (estimate); "
            f"{_size(have)} is available; allowed: {_largest(cls, params, have, base, per)} "
            "on this machine")


__all__ = ["BASE", "cells", "estimate", "available", "device_available", "check"]
