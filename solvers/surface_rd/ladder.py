"""Kernel-ladder benchmark of chemotaxis on surfaces, like the paper's Fig. 11 (seed 001):

    python -m pdestudio.solvers.surface_rd.ladder [--sizes 20000 1000000] [--scenarios rectangle tube]
                                        [--dtypes float32 float64] [--out DIR]

For each mesh (scenario × vertex count) and real type it times one explicit Euler step of every
rung (kernels.RUNGS), the CuPy array path and the NumPy backend, and writes `ladder.md` (a
Markdown table) and `ladder.json` to DIR. Per rung: launches per step, µs per step from a Python
loop of launches (what the app sees) and replayed from a CUDA graph of 20 captured steps (device
time without launch overhead), speed-up over NumPy and over the array path (both as Python step
loops, same real type), Mvertex/s and bandwidth from the better of the two times: the
rung's own estimated DRAM traffic (FusedStepper.traffic) and the model's compulsory traffic
(Simulation.work) per second, as fractions of the device-to-device copy bandwidth measured in
the same run. Extra rows: the padded and geom rungs on a randomly shuffled vertex order (what RCM
renumbering buys) and, above 100K vertices, block sizes 128/512 (vec and ring rungs).
"""
from __future__ import annotations

import argparse
import copy
import json
import time
from pathlib import Path

import numpy as np

LAUNCHES = {"naive": 7, "fusion1": 4, "csr": 1, "padded": 1, "vec": 1, "geom": 1, "ring": 1,
            "array": None}


def copy_bandwidth(cp, nbytes: int = 1 << 29) -> float:
    a = cp.ones(nbytes // 4, dtype=cp.float32)
    b = cp.empty_like(a)
    for _ in range(3):
        b[...] = a
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(20):
        b[...] = a
    e.record()
    e.synchronize()
    return 2 * a.nbytes * 20 / (cp.cuda.get_elapsed_time(s, e) / 1e3)


def _time_loop(cp, step, min_s=0.25, max_steps=4000) -> float:
    """Seconds per step of `step()` called from Python (events around a loop)."""
    for _ in range(3):
        step()
    cp.cuda.get_current_stream().synchronize()
    k = 10
    while True:
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        for _ in range(k):
            step()
        e.record()
        e.synchronize()
        t = cp.cuda.get_elapsed_time(s, e) / 1e3
        if t >= min_s or k >= max_steps:
            return t / k
        k = min(max_steps, max(2 * k, int(k * min_s / max(t, 1e-6) * 1.2)))


def _time_graph(cp, step, per_graph=20, min_s=0.25) -> float | None:
    """Seconds per step replaying a CUDA graph of `per_graph` captured steps (no launch
    overhead); None where capture is not possible."""
    try:
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            step()
            stream.synchronize()
            stream.begin_capture()
            for _ in range(per_graph):
                step()
            graph = stream.end_capture()
            graph.launch(stream)
            stream.synchronize()
            reps = 5
            while True:
                s, e = cp.cuda.Event(), cp.cuda.Event()
                s.record(stream)
                for _ in range(reps):
                    graph.launch(stream)
                e.record(stream)
                e.synchronize()
                t = cp.cuda.get_elapsed_time(s, e) / 1e3
                if t >= min_s or reps >= 2000:
                    return t / (reps * per_graph)
                reps = min(2000, int(reps * min_s / max(t, 1e-6) * 1.2) + 1)
    except Exception as ex:  # capture unsupported for some launch: report without it
        print(f"    graph capture failed: {type(ex).__name__}: {ex}"[:160])
        return None


def _time_numpy(step, min_s=1.0, max_steps=50) -> float:
    step()
    k, t0 = 0, time.perf_counter()
    while k < 2 or (time.perf_counter() - t0 < min_s and k < max_steps):
        step()
        k += 1
    return (time.perf_counter() - t0) / k


def _state_stepper(stepper, u, v, dt):
    box = [u, v]

    def step():
        box[0], box[1] = stepper.step(box[0], box[1], dt)
    return step


def run_case(cp, scenario: str, vertices: int, dtypes, bw: float, rows: list, quick=False):
    from pdestudio import solvers
    from .chemotaxis import chemotaxis_rhs
    from .kernels import RUNGS, FusedStepper
    from .operators import ArrayOperators, SurfaceOperators
    from ..mesh.renumber import shuffled

    t0 = time.perf_counter()
    base = solvers.create("chemotaxis", backend="cupy", dtype="float64", scenario=scenario,
                          vertices=vertices)
    n = base.imesh.n_vertices
    print(f"{scenario} {n} vertices: set-up {time.perf_counter() - t0:.1f} s "
          f"(valence {base.imesh.valence.min()}..{base.imesh.valence.max()})", flush=True)
    # the same mesh in a random vertex order (what the renumbering is worth)
    shuf = copy.copy(base)
    shuf.imesh = base.imesh.permuted(vertex_order=shuffled(n, 1))
    shuf.ops = SurfaceOperators(shuf.imesh)
    rng = np.random.default_rng(0)
    u_host = 1 + 0.01 * rng.uniform(-1, 1, n)
    v_host = 0.5 + 0.005 * rng.uniform(-1, 1, n)
    p = dict(base.params)
    for dtype in dtypes:
        real = np.dtype(dtype).type
        item = np.dtype(dtype).itemsize
        dt = base.dt
        work_bytes = 4 * n * item + 4 * 2 * base.imesh.n_edges + 24 * n
        # NumPy backend (the CPU reference), same real type
        ao_np = ArrayOperators(base.ops, np, real)
        un, vn = u_host.astype(real), v_host.astype(real)
        box = [un, vn]

        def np_step():
            du, dv = chemotaxis_rhs(box[0], box[1], ao_np, p, np)
            box[0], box[1] = box[0] + real(dt) * du, box[1] + real(dt) * dv
        t_np = _time_numpy(np_step, min_s=0.5 if quick else 1.0)
        # array path (CuPy array code)
        ao = ArrayOperators(base.ops, cp, real)
        cbox = [cp.asarray(u_host, dtype=real), cp.asarray(v_host, dtype=real)]

        def arr_step():
            du, dv = chemotaxis_rhs(cbox[0], cbox[1], ao, p, cp)
            cbox[0], cbox[1] = cbox[0] + real(dt) * du, cbox[1] + real(dt) * dv
        t_arr = _time_loop(cp, arr_step)
        entries = [("array", None, None, t_arr, None, None)]  # (cuSPARSE calls: no capture)
        variants = [(r, base, 256) for r in RUNGS]
        variants += [("vec", shuf, 256), ("ring", shuf, 256)]
        if n > 100_000:
            variants += [(r, base, b) for r in ("vec", "ring") for b in (128, 512)]
        for rung, src, block in variants:
            sim = copy.copy(src)
            sim.dtype, sim.real = dtype, real
            st = FusedStepper(sim, rung, block=block)
            u = cp.asarray(u_host, dtype=real)
            v = cp.asarray(v_host, dtype=real)
            step = _state_stepper(st, u, v, dt)
            t_loop = _time_loop(cp, step)
            t_graph = _time_graph(cp, step)
            label = rung + (" (shuffled order)" if src is shuf else "") + \
                (f" block {block}" if block != 256 else "")
            entries.append((label, rung, st.traffic(), t_loop, t_graph, block))
            del st
        for label, rung, traffic, t_loop, t_graph, block in entries:
            # speed-ups: Python step loops (what the app gets); bandwidth: device time
            t_dev = min(t for t in (t_loop, t_graph) if t is not None)
            row = {"scenario": scenario, "vertices": n, "dtype": dtype, "rung": label,
                   "launches": LAUNCHES.get(rung or "array"), "us_loop": t_loop * 1e6,
                   "us_graph": None if t_graph is None else t_graph * 1e6,
                   "mvert_s": n / t_dev / 1e6, "x_numpy": t_np / t_loop,
                   "x_array": t_arr / t_loop,
                   "traffic_gbs": None if traffic is None else traffic / t_dev / 1e9,
                   "traffic_frac": None if traffic is None else traffic / t_dev / bw,
                   "compulsory_frac": work_bytes / t_dev / bw, "numpy_ms": t_np * 1e3}
            rows.append(row)
            print(_fmt(row), flush=True)
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
    import cupy as cp
    from pdestudio import solvers
    ok, why = solvers.gpu_status()
    if not ok:
        print(f"no usable GPU: {why}")
        return 2
    bw = copy_bandwidth(cp)
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
