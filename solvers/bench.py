"""The benchmark harness behind `pdestudio bench`.

For each model, variant, size, dtype and backend (and on the GPU each kernel path: `fused` and
`array`) it measures either the rate of steps (models with `bench_t_end = None`) or the time to
reach `bench_t_end` from the scenario's initial state. A run that would exceed its time budget is
stopped and its time to t_end extrapolated from the simulated time reached (the row says so). The
device's copy bandwidth (and NumPy's on the host, for the CPU rows) is measured in the same run,
and each row's compulsory traffic (the model's `work()`: bytes each step must move) is reported
as a fraction of it. Rows are printed once, as they are measured, with their speed-ups over the
NumPy row (same model, size, dtype; 1.0 on the NumPy row itself) and, for the fused kernels, over
the array path. Variants that only choose a GPU strategy (GPU_ONLY) are timed on NumPy once.
`quick`: one small size per model (QUICK_CELLS) and short budgets (about a minute on a CPU).
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from .core import backend as _backend
from .core.errors import ParameterError
from .core.files import atomic_write
from .core.registry import available_models, model_class


@dataclass
class Row:
    model: str
    scenario: str
    variant: dict
    backend: str
    kernel: str
    dtype: str
    size: int
    cells: int
    steps: int = 0
    seconds: float = 0.0
    steps_per_s: float = 0.0
    cell_updates_per_s: float = 0.0
    gbps: float = 0.0
    roofline: float | None = None
    t_end: float | None = None
    time_to_t_end: float | None = None
    extrapolated: bool = False
    speedup_vs_numpy: float | None = None
    speedup_vs_array: float | None = None
    note: str = ""
    device: str = field(default="")

    @property
    def cost(self) -> float:
        """Seconds for the compared unit of work: the run to t_end, or one step."""
        if self.time_to_t_end is not None:
            return self.time_to_t_end
        return 1.0 / self.steps_per_s if self.steps_per_s else math.inf


def copy_bandwidth(nbytes: int = 1 << 30, repeats: int = 10) -> float:
    """Device-to-device copy rate in bytes/s, counting bytes read plus bytes written."""
    import cupy as cp
    a = cp.ones(nbytes // 8, dtype=cp.float64)
    b = cp.empty_like(a)
    cp.copyto(b, a)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        cp.copyto(b, a)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
    times.sort()
    del a, b
    cp.get_default_memory_pool().free_all_blocks()
    return 2 * nbytes / times[len(times) // 2]


def host_copy_bandwidth(nbytes: int = 1 << 26, repeats: int = 5) -> float:
    """NumPy's copy rate on the host in bytes/s (read + write), the CPU rows' roofline."""
    a = np.ones(nbytes // 8)
    b = np.empty_like(a)
    np.copyto(b, a)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(b, a)
        times.append(time.perf_counter() - t0)
    times.sort()
    return 2 * nbytes / times[len(times) // 2]


def _measure(cls, scenario, params, backend, dtype, budget_s, min_time):
    """Create, warm up (on the GPU: compiles kernels), then time. Returns a Row without
    speed-ups."""
    kernel = params.get("kernel", "fused") if backend == "cupy" else "numpy"
    sim = cls(backend=backend, dtype=dtype, scenario=scenario, **params)
    cells, nbytes = sim.work()
    row = Row(cls.model, sim.scenario_name, {}, backend, kernel, dtype,
              params[cls.size_param], cells, t_end=cls.bench_t_end)
    be = sim._be
    if cls.bench_t_end is None or be.is_gpu:
        sim.step(1)  # warm-up: kernel compilation, memory pools
        be.synchronize()
    if cls.bench_t_end is None:
        n, elapsed = 1, 0.0
        while True:
            t0 = time.perf_counter()
            sim.step(n)
            be.synchronize()
            elapsed = time.perf_counter() - t0
            if elapsed >= min_time or elapsed >= budget_s or n >= 1 << 20:
                break
            n *= 4 if elapsed < min_time / 8 else 2
        row.steps, row.seconds = n, elapsed
    else:
        if be.is_gpu:  # a fresh state after the warm-up (NumPy compiles nothing: no warm-up)
            sim = cls(backend=backend, dtype=dtype, scenario=scenario, **params)
        t_end, chunk, t0 = cls.bench_t_end, 1, time.perf_counter()
        while sim.t < t_end and time.perf_counter() - t0 <= budget_s:
            c0 = time.perf_counter()
            sim.advance(t_end, max_steps=chunk)  # stops early so a run over budget can end
            be.synchronize()
            if time.perf_counter() - c0 < 0.25:
                chunk *= 2
        steps = sim.steps
        elapsed = time.perf_counter() - t0
        row.steps, row.seconds = steps, elapsed
        if sim.t < t_end:
            row.extrapolated = True
            row.time_to_t_end = elapsed * t_end / sim.t if sim.t > 0 else math.inf
            row.note = f"stopped at t={sim.t:.3g} (budget {budget_s:g} s); time to t_end extrapolated"
        else:
            row.time_to_t_end = elapsed
    row.steps_per_s = row.steps / row.seconds if row.seconds else 0.0
    row.cell_updates_per_s = row.steps_per_s * cells
    row.gbps = row.steps_per_s * nbytes / 1e9
    return row


# Parameters that only choose a GPU strategy: the NumPy backend runs the same classic steps (or
# an array emulation of the GPU technique) for every value, so NumPy is timed for the first value
# only and the GPU rows of the other values are compared with that row.
GPU_ONLY = frozenset({"method", "block", "kernel"})
QUICK_CELLS = 1 << 16  # --quick: one size per model, at most this many cells


def _numpy_key(variant: dict) -> str:
    return json.dumps({k: v for k, v in variant.items() if k not in GPU_ONLY}, sort_keys=True)


def _quick_size(cls, size: int) -> int:
    """The size brought down (halved) to at most QUICK_CELLS cells, within the schema's range."""
    lo = cls.schema()[cls.size_param].lo or 1
    while _cells_estimate(cls, size) > QUICK_CELLS and size // 2 >= lo:
        size //= 2
    return size


def _check_sizes(models, sizes) -> None:
    """Refuse a size that fits none of the models' size parameters (e.g. -5 or 2^99; one that
    fits some is skipped with a note for the others)."""
    for size in sizes or ():
        why = []
        for m in models:
            cls = model_class(m)
            try:
                cls.schema(cls.bench_scenario)[cls.size_param].validate(size, m)
            except ParameterError as e:
                why.append(str(e))
        if len(why) == len(models):
            raise ParameterError(f"bench: size {str(size)[:30]} fits no model benchmarked: "
                                 + "; ".join(why))


def run(models=None, sizes=None, backends=("numpy", "cupy"), dtypes=("float64", "float32"),
        kernels=("fused", "array"), quick=False, max_numpy_cells=1 << 22, log=print, out=None):
    """Run the benchmarks and return (rows, header). `log` receives progress and skip notes;
    `out`, if given, receives the table as it is measured: the header lines, then each row
    once, with its speed-ups over the rows measured before it (NumPy first, then the array
    path, then the fused kernels)."""
    models = list(models or available_models())
    for m in models:
        model_class(m)  # unknown -> ParameterError
    _check_sizes(models, sizes)
    gpu_ok, gpu_name = _backend.gpu_status()
    header = {"date": time.strftime("%Y-%m-%d"), "device": gpu_name if gpu_ok else "none",
              "copy_bandwidth_gbps": None, "host_copy_bandwidth_gbps": None}
    if "cupy" in backends and not gpu_ok:
        log(f"# cupy skipped: {gpu_name}")
        backends = tuple(b for b in backends if b != "cupy")
    backends = tuple(sorted(backends, key=lambda b: b != "numpy"))  # NumPy rows first
    kernels = tuple(sorted(kernels, key=lambda k: k != "array"))    # array before fused
    if "cupy" in backends:
        header["copy_bandwidth_gbps"] = copy_bandwidth() / 1e9
    if "numpy" in backends:
        header["host_copy_bandwidth_gbps"] = host_copy_bandwidth() / 1e9
    if out is not None:
        out(title(header))
        out(HEAD)
    budgets = {"numpy": 1.0 if quick else 20.0, "cupy": 10.0 if quick else 120.0}
    min_time = 0.05 if quick else 0.5
    rows: list[Row] = []
    refs: dict = {}
    for m in models:
        cls = model_class(m)
        msizes = list(sizes or cls.bench_sizes)
        if quick and not sizes:
            msizes = [_quick_size(cls, min(msizes))]
        timed_numpy, untimed = set(), {}
        for variant in cls.bench_variants:
            variant = dict(variant)
            vsizes = variant.pop("bench_sizes", None)  # a variant may name its own sizes
            if quick and not sizes and vsizes:
                vsizes = [_quick_size(cls, min(vsizes))]
            for size in (sizes or vsizes or msizes):
                for dtype in dtypes:
                    for be in backends:
                        for kernel in (kernels if be == "cupy" else ("numpy",)):
                            nkey = (m, _numpy_key(variant), size, dtype)
                            if be == "numpy" and nkey in timed_numpy:
                                untimed.setdefault(_label(variant), None)
                                continue
                            params = {**cls.bench_params, **variant, cls.size_param: size}
                            if be == "cupy":
                                params["kernel"] = kernel
                            try:
                                if be == "numpy":
                                    probe_cells = _cells_estimate(cls, size)
                                    if probe_cells > max_numpy_cells:
                                        log(f"# {m} {variant} {size} numpy skipped "
                                            f"({probe_cells} cells > {max_numpy_cells})")
                                        continue
                                row = _measure(cls, cls.bench_scenario, params, be, dtype,
                                               budgets[be], min_time)
                            except ParameterError as e:
                                log(f"# {m} {variant} {size} {be}/{kernel}: {e}")
                                continue
                            row.variant = dict(variant)
                            row.device = gpu_name if be == "cupy" else "cpu"
                            bw = header["copy_bandwidth_gbps" if be == "cupy"
                                        else "host_copy_bandwidth_gbps"]
                            if bw:
                                row.roofline = row.gbps / bw
                            _speedups(row, refs, nkey)
                            if be == "numpy":
                                timed_numpy.add(nkey)
                            rows.append(row)
                            if out is not None:
                                out(f"| {format_row(row)} |")
                            else:
                                log(format_row(row))
        if untimed:
            log(f"# {m}: NumPy not timed for {'; '.join(untimed)} (GPU strategies: NumPy runs "
                "the same steps as the first variant; their GPU rows are compared with it)")
    return rows, header


def _label(variant: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in variant.items()) or "-"


def _cells_estimate(cls, size: int) -> int:
    """Cells of a size before building it: models with an `ny` parameter are 2D grids (size²
    cells); 1D grids and meshes have `size` cells."""
    return size * size if "ny" in cls.schema() else size


def _speedups(row: Row, refs: dict, nkey) -> None:
    """Speed-ups over the NumPy row of the same model, size and dtype (and variant, less the
    GPU-only parameters) and, for the fused kernels, over the array path of the same variant."""
    akey = (row.model, json.dumps(row.variant, sort_keys=True), row.size, row.dtype)
    if row.backend == "numpy":
        refs[("numpy",) + nkey] = row
        row.speedup_vs_numpy = 1.0
        return
    ref = refs.get(("numpy",) + nkey)
    if ref is not None:
        row.speedup_vs_numpy = ref.cost / row.cost
    if row.kernel == "array":
        refs[("array",) + akey] = row
    elif ("array",) + akey in refs:
        row.speedup_vs_array = refs[("array",) + akey].cost / row.cost


COLUMNS = ("model", "variant", "size", "dtype", "path", "steps/s", "Mcell/s", "GB/s", "roof",
           "to t_end [s]", "×numpy", "×array")
HEAD = "| " + " | ".join(COLUMNS) + " |\n" + "|" + "---|" * len(COLUMNS)


def title(header) -> str:
    bw = lambda v: "-" if not v else f"{v:.0f} GB/s"  # noqa: E731
    return (f"device: {header['device']}; date: {header['date']}; copy bandwidth: "
            f"{bw(header['copy_bandwidth_gbps'])} (GPU), "
            f"{bw(header.get('host_copy_bandwidth_gbps'))} (host, NumPy); roof = GB/s of "
            "compulsory traffic / copy bandwidth")


def format_row(r: Row) -> str:
    var = _label(r.variant)
    path = r.backend if r.backend == "numpy" else f"cupy/{r.kernel}"
    f = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    tte = "-" if r.time_to_t_end is None else (f"{r.time_to_t_end:.4g}" + ("*" if r.extrapolated else ""))
    cells = (r.model, var, str(r.size), r.dtype, path, f"{r.steps_per_s:.4g}",
             f"{r.cell_updates_per_s / 1e6:.4g}", f"{r.gbps:.4g}",
             f(None if r.roofline is None else 100 * r.roofline, ".0f") + ("%" if r.roofline else ""),
             tte, f(r.speedup_vs_numpy, ".1f"), f(r.speedup_vs_array, ".1f"))
    return " | ".join(cells)


def footer(rows) -> str:
    if any(r.extrapolated for r in rows):
        return "`*` extrapolated from the simulated time reached within the time budget"
    return ""


def table(rows, header) -> str:
    lines = [title(header), HEAD]
    lines += ["| " + format_row(r) + " |" for r in rows]
    if footer(rows):
        lines.append(footer(rows))
    return "\n".join(lines)


def write_json(rows, header, path) -> None:
    data = json.dumps({"header": header, "rows": [asdict(r) for r in rows]}, indent=1)
    with atomic_write(path) as f:
        f.write(data.encode())
