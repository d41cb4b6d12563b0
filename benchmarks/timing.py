"""The one timing helper of the benchmark scripts.

`gpu_time(fn)` times a callable that launches GPU work with CuPy's own profiler
(`cupyx.profiler.benchmark`: CUDA events around each call, warm-up calls first) and returns the
median device seconds per call; `cpu_time(fn)` does the same with perf_counter for host work.
`copy_bandwidth()` is the measured device-to-device copy rate (bytes read plus written per
second) that every "fraction of the roofline" figure divides by: the one in pdestudio's bench
harness, so the two agree. `synchronize()` waits for the GPU work launched so far (for scripts that
time a whole loop with the wall clock).

Beyond the public API it imports the bench harness's copy bandwidth (solvers.bench), so both quote the same roofline.
"""
from __future__ import annotations

import statistics
import sys
import time

from pdestudio.solvers.bench import copy_bandwidth  # noqa: F401  (re-exported)


def gpu_time(fn, *, repeat: int = 20, warmup: int = 3, max_duration: float = 10.0) -> float:
    """Median device seconds of one call of `fn` (which launches GPU work)."""
    from cupyx.profiler import benchmark
    r = benchmark(fn, (), n_repeat=repeat, n_warmup=warmup, max_duration=max_duration)
    return float(statistics.median(r.gpu_times[0]))


def cpu_time(fn, *, repeat: int = 5, warmup: int = 1, max_duration: float = 30.0) -> float:
    """Median wall seconds of one call of `fn` (host work; GPU work must synchronise itself)."""
    for _ in range(warmup):
        fn()
    times, t_start = [], time.perf_counter()
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - t_start > max_duration:
            break
    return float(statistics.median(times))


def synchronize() -> None:
    """Wait for the work queued on the current CUDA stream; nothing to wait for where CuPy was
    never imported (NumPy runs), and CuPy is not imported here for it."""
    cp = sys.modules.get("cupy")
    if cp is not None:
        cp.cuda.get_current_stream().synchronize()


__all__ = ["gpu_time", "cpu_time", "copy_bandwidth", "synchronize"]
