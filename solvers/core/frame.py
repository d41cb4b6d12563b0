"""Frames of the live view on the GPU: float32 copies of device fields with each one's finite
(min, max), queued on the current CUDA stream in one launch a field (kernels/frame.cu).

The app's copiers hand these over to the screen every frame. Made of CuPy's array operations the
same frame took six to eight launches a field (copy, isfinite, two `where`, min, max, then a
stack and a cast), each with its Python overhead; while the screen draws, the solver thread waits
for the GIL at every one of them, and the GPU has nothing queued while it does (a host wait ends
every call into the solver)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .backend import load_kernels

CU_FILE = Path(__file__).parent / "kernels" / "frame.cu"
BLOCK = 256
MAX_BLOCKS = 1024


def float32_frame(arrays: dict, into: dict, ranges, scratch) -> dict:
    """float32 copies of the CuPy `arrays` into `into` (buffers of the same shape, reused; made
    where missing) and the finite (min, max) of the k-th into ranges[2k], ranges[2k + 1] (a
    float32 device vector; inf, -inf where no value is finite), queued on the current stream.
    `scratch`: an int32 device array of 3 per field holding (INT_MAX, INT_MIN, 0), which the
    kernel leaves so (make it with `frame_scratch`). Returns {name: copy} in the order of
    `arrays`. Arrays that are not C-contiguous are copied with CuPy's operations first."""
    import cupy as cp
    out = {}
    for k, (name, a) in enumerate(arrays.items()):
        dst = into.get(name)
        if dst is None or dst.shape != a.shape:
            dst = into[name] = cp.empty(a.shape, cp.float32)
        src = a if a.flags.c_contiguous else cp.ascontiguousarray(a)
        n = int(src.size)
        if n == 0:
            ranges[2 * k:2 * k + 2] = cp.asarray([np.inf, -np.inf], cp.float32)
        else:
            kern = _kernel(str(src.dtype))
            blocks = min(MAX_BLOCKS, (n + BLOCK - 1) // BLOCK)
            kern((blocks,), (BLOCK,), (src, dst, np.int64(n), scratch[3 * k:3 * k + 3],
                                       ranges[2 * k:2 * k + 2]))
        out[name] = dst
    return out


def frame_scratch(fields: int):
    """The int32 scratch `float32_frame` needs for `fields` fields, in its resting state."""
    import cupy as cp
    one = [np.iinfo(np.int32).max, np.iinfo(np.int32).min, 0]
    return cp.asarray(one * fields, dtype=cp.int32)


_KERNELS: dict = {}


def _kernel(dtype: str):
    k = _KERNELS.get(dtype)
    if k is None:
        if dtype not in ("float32", "float64"):
            raise TypeError(f"float32_frame: fields of dtype {dtype}; allowed: float32, float64")
        k = _KERNELS[dtype] = load_kernels(CU_FILE, dtype, ["frame_snapshot"])["frame_snapshot"]
    return k


__all__ = ["float32_frame", "frame_scratch"]
