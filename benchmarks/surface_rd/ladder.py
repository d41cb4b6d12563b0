"""Kernel-ladder benchmark of chemotaxis on surfaces, like the paper's Fig. 11 (docs/MODELS.md [P1]):

    python -m benchmarks.surface_rd.ladder [--sizes 20000 1000000] [--scenarios rectangle tube]
                                           [--dtypes float32 float64] [--out DIR]

For each mesh (scenario × vertex count) and real type it times one explicit Euler step of every
rung (rungs.RUNGS, put on the simulation as `sim.scheme`), the CuPy array path (the `kernel=array`
scheme) and the NumPy backend, and writes `ladder.md` (a Markdown table) and `ladder.json` to DIR.
Per rung: launches per step, µs per step from a Python loop of steps (what the app sees) and
replayed from a CUDA graph of 20 captured steps (device time without launch overhead), both with
benchmarks/timing.py; speed-up over NumPy and over the array path (both as Python step loops,
same real type), Mvertex/s and bandwidth from the better of the two times: the rung's own
estimated DRAM traffic (rungs.traffic) and the model's compulsory traffic (Simulation.work) per
second, as fractions of the device-to-device copy bandwidth measured in the same run. Extra rows:
the vec and ring rungs on a randomly shuffled vertex order (the mesh written to a file and read
back with `renumber=none`: what RCM renumbering buys) and, above 100K vertices, block sizes
128/512 (vec and ring rungs).

Beyond the public API it imports solvers.mesh to write the meshes and shuffle their vertex order (the ladder measures the renumbering).
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.mesh import write_mesh
from pdestudio.solvers.mesh.renumber import shuffled

from ..timing import copy_bandwidth, cpu_time, gpu_time
from .rungs import LAUNCHES, RUNGS, rung_scheme, traffic

LOOP = 50  # steps per timed call of the Python step loop
PER_GRAPH = 20  # steps captured in one CUDA graph
GRAPH_LAUNCHES = 10  # graph launches per timed call


def _steps(scheme, k):
    for _ in range(k):
        scheme.step(0.0, None)


def _time_loop(scheme) -> float:
    """Device seconds per step of `scheme.step` called from Python, back to back."""
    return gpu_time(lambda: _steps(scheme, LOOP)) / LOOP


def _time_graph(cp, scheme) -> float | None:
    """Seconds per step replaying a CUDA graph of PER_GRAPH captured steps (no launch overhead);
    None where capture is not possible."""
    try:
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            scheme.step(0.0, None)
            stream.synchronize()
            stream.begin_capture()
            _steps(scheme, PER_GRAPH)
            graph = stream.end_capture()

            def replay():
                for _ in range(GRAPH_LAUNCHES):
                    graph.launch(stream)
            return gpu_time(replay) / (GRAPH_LAUNCHES * PER_GRAPH)
    except Exception as ex:  # capture unsupported for some launch: report without it
        print(f"    graph capture failed: {type(ex).__name__}: {ex}"[:160])
        return None


def _shuffled_mesh(sim, folder: Path) -> str:
    """The simulation's mesh in a random vertex order, written to a file (scenario 'file')."""
    path = folder / "shuffled.vtu"
    mesh = sim.mesh
    write_mesh(path, mesh.permuted(vertex_order=shuffled(mesh.n_vertices, 1)))
    return str(path)


def _create(dtype, log, **kw):
    t0 = time.perf_counter()
    sim = solvers.create("chemotaxis", dtype=dtype, scheme="paper", **kw)  # the paper's ladder
    mesh = sim.mesh
    log(f"  {sim.backend} {dtype} {sim.scenario_name} {mesh.n_vertices} vertices: set-up "
        f"{time.perf_counter() - t0:.1f} s (valence {mesh.valence.min()}..{mesh.valence.max()})")
    return sim


def _start(sim, u_host, v_host):
    sim.set_field("cells", u_host)
    sim.set_field("chemo", v_host)


def _time_numpy(cpu, u_host, v_host, quick: bool) -> float:
    """Wall seconds per step of the NumPy backend."""
    _start(cpu, u_host, v_host)
    return cpu_time(lambda: cpu.scheme.step(0.0, None), repeat=50,
                    max_duration=0.5 if quick else 1.0)


def run_case(cp, scenario: str, vertices: int, dtypes, bw: float, rows: list, quick=False):
    log = lambda s: print(s, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        shuffled_file = None
        for dtype in dtypes:
            sim = _create(dtype, log, backend="cupy", scenario=scenario, vertices=vertices,
                          kernel="array")
            n = sim.mesh.n_vertices
            rng = np.random.default_rng(0)
            u_host = 1 + 0.01 * rng.uniform(-1, 1, n)
            v_host = 0.5 + 0.005 * rng.uniform(-1, 1, n)
            work_bytes = sim.work()[1]
            # NumPy backend (the CPU reference), same real type
            t_np = _time_numpy(_create(dtype, log, backend="numpy", scenario=scenario,
                                       vertices=vertices), u_host, v_host, quick)
            # array path (CuPy array code: the scheme of kernel=array)
            _start(sim, u_host, v_host)
            t_arr = _time_loop(sim.scheme)
            entries = [("array", None, None, t_arr, None)]  # (cuSPARSE calls: no capture)
            if shuffled_file is None:
                shuffled_file = _shuffled_mesh(sim, Path(tmp))
            shuf = _create(dtype, log, backend="cupy", scenario="file", mesh=shuffled_file,
                           renumber="none", kernel="array")
            variants = [(r, sim, 256) for r in RUNGS]
            variants += [("vec", shuf, 256), ("ring", shuf, 256)]
            if n > 100_000:
                variants += [(r, sim, b) for r in ("vec", "ring") for b in (128, 512)]
            for rung, src, block in variants:
                _start(src, u_host, v_host)
                src.scheme = rung_scheme(src, rung, block=block)
                t_loop = _time_loop(src.scheme)
                t_graph = _time_graph(cp, src.scheme)
                label = rung + (" (shuffled order)" if src is shuf else "") + \
                    (f" block {block}" if block != 256 else "")
                entries.append((label, rung, traffic(src, rung), t_loop, t_graph))
            for label, rung, nbytes, t_loop, t_graph in entries:
                # speed-ups: Python step loops (what the app gets); bandwidth: device time
                t_dev = min(t for t in (t_loop, t_graph) if t is not None)
                row = {"scenario": scenario, "vertices": n, "dtype": dtype, "rung": label,
                       "launches": LAUNCHES.get(rung), "us_loop": t_loop * 1e6,
                       "us_graph": None if t_graph is None else t_graph * 1e6,
                       "mvert_s": n / t_dev / 1e6, "x_numpy": t_np / t_loop,
                       "x_array": t_arr / t_loop,
                       "traffic_gbs": None if nbytes is None else nbytes / t_dev / 1e9,
                       "traffic_frac": None if nbytes is None else nbytes / t_dev / bw,
                       "compulsory_frac": work_bytes / t_dev / bw, "numpy_ms": t_np * 1e3}
                rows.append(row)
                log(_fmt(row))
            del sim, shuf, src, variants
            cp.get_default_memory_pool().free_all_blocks()


def _f(x, spec):
    return "–" if x is None else format(x, spec)


HEAD = ("| mesh | vertices | dtype | rung | launches | µs/step (loop) | µs/step (graph) | "
        "Mvertex/s | × NumPy | × array | rung GB/s | % copy BW | compulsory % |\n"
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def _fmt(r) -> str:
    return (f"| {r['scenario']} | {r['vertices']} | {r['dtype']} | {r['rung']} | "
            f"{_f(r['launches'], 'd') if r['launches'] else 'many'} | {r['us_loop']:.1f} | "
            f"{_f(r['us_graph'], '.1f')} | {r['mvert_s']:.0f} | {r['x_numpy']:.0f} | "
            f"{r['x_array']:.1f} | {_f(r['traffic_gbs'], '.0f')} | "
            f"{_f(None if r['traffic_frac'] is None else 100 * r['traffic_frac'], '.0f')} | "
            f"{100 * r['compulsory_frac']:.0f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 1_000_000])
    ap.add_argument("--scenarios", nargs="+", default=["rectangle", "tube"])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true", help="shorter NumPy timing")
    a = ap.parse_args(argv)
    ok, why = solvers.gpu_status()
    if not ok:
        print(f"no usable GPU: {why}")
        return 2
    import cupy as cp
    bw = copy_bandwidth()
    print(f"device: {why}; copy bandwidth {bw / 1e9:.0f} GB/s (read + write)", flush=True)
    rows: list = []
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for sc in a.scenarios:
        for size in a.sizes:
            run_case(cp, sc, size, a.dtypes, bw, rows, quick=a.quick)
            (out / "ladder.json").write_text(json.dumps({"device": why, "copy_bw": bw,
                                                         "rows": rows}, indent=1))
    text = (f"Device: {why}; device-to-device copy bandwidth {bw / 1e9:.0f} GB/s.\n\n"
            + HEAD + "\n" + "\n".join(_fmt(r) for r in rows) + "\n")
    (out / "ladder.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
