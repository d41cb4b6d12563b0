"""The benchmark harness behind `pdestudio bench`.

For each model, variant, size, dtype and backend (and on the GPU each kernel path: `fused` and
`array`) it measures either the rate of steps (models with `bench_t_end = None`) or the time to
reach `bench_t_end` from the scenario's initial state. A run that would exceed its time budget is
stopped and its time to t_end extrapolated from the simulated time reached (the row says so). The
device's copy bandwidth is measured in the same run, and each row's compulsory traffic (the
model's `work()`: bytes each step must move) is reported as a fraction of it.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field

from .core import backend as _backend
from .core.errors import ParameterError
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


def _measure(cls, scenario, params, backend, dtype, budget_s, min_time):
    """Create, warm up (compiles kernels), then time. Returns a Row without speed-ups."""
    kernel = params.get("kernel", "fused") if backend == "cupy" else "numpy"
    sim = cls(backend=backend, dtype=dtype, scenario=scenario, **params)
    cells, nbytes = sim.work()
    row = Row(cls.model, sim.scenario_name, {}, backend, kernel, dtype,
              params[cls.size_param], cells, t_end=cls.bench_t_end)
    be = sim._be
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
        sim = cls(backend=backend, dtype=dtype, scenario=scenario, **params)  # fresh state
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
            row.time_to_t_end = elapsed * t_end / sim.t
            row.note = f"stopped at t={sim.t:.3g} (budget {budget_s:g} s); time to t_end extrapolated"
        else:
            row.time_to_t_end = elapsed
    row.steps_per_s = row.steps / row.seconds if row.seconds else 0.0
    row.cell_updates_per_s = row.steps_per_s * cells
    row.gbps = row.steps_per_s * nbytes / 1e9
    return row


def run(models=None, sizes=None, backends=("numpy", "cupy"), dtypes=("float64", "float32"),
        kernels=("fused", "array"), quick=False, max_numpy_cells=1 << 22, log=print):
    """Run the benchmarks and return (rows, header). `log` receives progress lines."""
    models = list(models or available_models())
    for m in models:
        model_class(m)  # unknown -> ParameterError
    gpu_ok, gpu_name = _backend.gpu_status()
    header = {"date": time.strftime("%Y-%m-%d"), "device": gpu_name if gpu_ok else "none",
              "copy_bandwidth_gbps": None}
    if "cupy" in backends and not gpu_ok:
        log(f"# cupy skipped: {gpu_name}")
        backends = tuple(b for b in backends if b != "cupy")
    if "cupy" in backends:
        header["copy_bandwidth_gbps"] = copy_bandwidth() / 1e9
        log(f"# GPU {gpu_name}: device copy bandwidth {header['copy_bandwidth_gbps']:.0f} GB/s "
            "(read + write)")
    budgets = {"numpy": 2.0 if quick else 20.0, "cupy": 10.0 if quick else 120.0}
    min_time = 0.1 if quick else 0.5
    rows: list[Row] = []
    for m in models:
        cls = model_class(m)
        msizes = list(sizes or cls.bench_sizes)
        if quick and not sizes:
            msizes = msizes[:: max(1, len(msizes) // 2)][:3]
        for variant in cls.bench_variants:
            variant = dict(variant)
            vsizes = variant.pop("bench_sizes", None)  # a variant may name its own sizes
            for size in (sizes or vsizes or msizes):
                for dtype in dtypes:
                    for be in backends:
                        for kernel in (kernels if be == "cupy" else ("numpy",)):
                            params = {**cls.bench_params, **variant, cls.size_param: size}
                            if be == "cupy":
                                params["kernel"] = kernel
                            try:
                                probe_cells = None
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
                            bw = header["copy_bandwidth_gbps"]
                            if be == "cupy" and bw:
                                row.roofline = row.gbps / bw
                            rows.append(row)
                            log(format_row(row))
    _speedups(rows)
    return rows, header


def _cells_estimate(cls, size: int) -> int:
    """Cells of a size before building it: models with an `ny` parameter are 2D grids (size²
    cells); 1D grids and meshes have `size` cells."""
    return size * size if "ny" in cls.schema() else size


def _speedups(rows):
    groups: dict = {}
    for r in rows:
        groups.setdefault((r.model, json.dumps(r.variant, sort_keys=True), r.size, r.dtype),
                          []).append(r)
    for g in groups.values():
        ref = {r.kernel: r for r in g}
        for r in g:
            if "numpy" in ref and r is not ref["numpy"]:
                r.speedup_vs_numpy = ref["numpy"].cost / r.cost
            if r.kernel == "fused" and "array" in ref:
                r.speedup_vs_array = ref["array"].cost / r.cost


COLUMNS = ("model", "variant", "size", "dtype", "path", "steps/s", "Mcell/s", "GB/s", "roof",
           "to t_end [s]", "×numpy", "×array")


def format_row(r: Row) -> str:
    var = ",".join(f"{k}={v}" for k, v in r.variant.items()) or "-"
    path = r.backend if r.backend == "numpy" else f"cupy/{r.kernel}"
    f = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    tte = "-" if r.time_to_t_end is None else (f"{r.time_to_t_end:.4g}" + ("*" if r.extrapolated else ""))
    cells = (r.model, var, str(r.size), r.dtype, path, f"{r.steps_per_s:.4g}",
             f"{r.cell_updates_per_s / 1e6:.4g}", f"{r.gbps:.4g}",
             f(None if r.roofline is None else 100 * r.roofline, ".0f") + ("%" if r.roofline else ""),
             tte, f(r.speedup_vs_numpy, ".1f"), f(r.speedup_vs_array, ".1f"))
    return " | ".join(cells)


def table(rows, header) -> str:
    lines = [f"device: {header['device']}; date: {header['date']}; copy bandwidth: "
             + (f"{header['copy_bandwidth_gbps']:.0f} GB/s" if header["copy_bandwidth_gbps"] else "-"),
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + format_row(r) + " |" for r in rows]
    if any(r.extrapolated for r in rows):
        lines.append("`*` extrapolated from the simulated time reached within the time budget")
    return "\n".join(lines)


def write_json(rows, header, path) -> None:
    with open(path, "w") as f:
        json.dump({"header": header, "rows": [asdict(r) for r in rows]}, f, indent=1)
