"""Draw time of the window's views, offscreen (no Qt): each view kind at the issue-15 sizes.

For every case a view is built on an offscreen VisPy canvas (EGL: the GPU's driver on a GPU
machine, Mesa llvmpipe here), then frames of synthetic fields are handed to it one after another
as the window does (`view.set_frame`, then a draw of the whole canvas and `glFinish`, so the time
includes the upload of the field and everything the GPU does for the picture). The fields change
every frame (three precomputed phases, cycled), so no upload can be skipped.

    python -m benchmarks.app.view_bench                      # every case, host (pinned) frames
    python -m benchmarks.app.view_bench --cases surface-1024 image-4096 --frames 30
    python -m benchmarks.app.view_bench --path interop       # frames of CuPy arrays (GPU only)
    python -m benchmarks.app.view_bench --solver mean-curvature --size 1024 --backend cupy
                                                             # steps/s alone vs drawing 60 frames/s

Cases: surface-N (one height surface, N² nodes), surface2-N (two stacked surfaces, N² cells),
image-N, line-2^20 (line + space–time), mesh-100k / mesh-1M (a closed surface of that many
vertices coloured by a vertex field), cells-1M (a planar mesh of about 1M cells drawn as two
height surfaces of cell fields). `--path`: host (NumPy frames: what the pinned-copy and NumPy
paths hand over) or interop (CuPy frames drawn through CUDA–OpenGL interop).

Beyond the public API it imports `pdestudio.solvers.core.checks` for `--checks-after` alone:
the switch that puts a chunk's checks back after its wait, to measure what queueing them
ahead changes.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from types import SimpleNamespace

import numpy as np

from .offscreen import SIZE, GpuTimer, draw, offscreen_canvas, renderer_name

DEFAULT_CASES = ("surface-512", "surface-1024", "surface-2048", "surface-4096", "surface2-1024",
                 "image-512", "image-1024", "image-2048", "image-4096", "line-2^20",
                 "mesh-100k", "mesh-1M", "cells-1M")


# ---- synthetic problems ------------------------------------------------------------------------
def _info(mesh, fields: dict, surfaces=(), default=None, location="node"):
    from pdestudio.app.frames import SimInfo
    shapes = {k: tuple(v) for k, v in fields.items()}
    infos = {k: {"location": location if isinstance(location, str) else location[k],
                 "unit": "m"} for k in fields}
    return SimInfo(model="bench", title="bench", scenario="synthetic", backend="numpy",
                   backend_reason="", dtype="float32", kernel="", params={}, mesh=mesh,
                   fields=infos, shapes=shapes, default_field=default or next(iter(fields)),
                   surfaces=tuple(surfaces), settable=(), cells_per_step=0)


def _grid(n: int):
    x = np.linspace(0.0, 1.0, n)
    return SimpleNamespace(kind="grid2d", x=x, y=x.copy())


def _sphere(n_vertices: int):
    """A lat-long sphere of about n_vertices vertices (poles kept as rings, so no fan)."""
    m = int(np.sqrt(n_vertices / 2))
    th = np.linspace(0.05, np.pi - 0.05, m)
    ph = np.linspace(0, 2 * np.pi, 2 * m, endpoint=False)
    T, P = np.meshgrid(th, ph, indexing="ij")
    pts = np.column_stack([(np.sin(T) * np.cos(P)).ravel(), (np.sin(T) * np.sin(P)).ravel(),
                           np.cos(T).ravel()])
    i, j = np.meshgrid(np.arange(m - 1), np.arange(2 * m), indexing="ij")
    a = (i * 2 * m + j).ravel()
    b = (i * 2 * m + (j + 1) % (2 * m)).ravel()
    c, d = a + 2 * m, b + 2 * m
    cells = np.concatenate([np.column_stack([a, b, d]), np.column_stack([a, d, c])])
    return SimpleNamespace(kind="triangles", points=pts, cells=cells.astype(np.int64))


def _plane(n_cells: int):
    m = int(np.sqrt(n_cells / 2)) + 1
    x = np.linspace(0, 1, m)
    X, Y = np.meshgrid(x, x, indexing="ij")
    pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(m * m)])
    i, j = np.meshgrid(np.arange(m - 1), np.arange(m - 1), indexing="ij")
    a = (i * m + j).ravel()
    b, c, d = a + 1, a + m, a + m + 1
    cells = np.concatenate([np.column_stack([a, c, d]), np.column_stack([a, d, b])])
    return SimpleNamespace(kind="triangles", points=pts, cells=cells.astype(np.int64))


def shuffled(mesh, frames, info, what: str, seed: int = 0):
    """The same mesh and fields with its vertices and/or cells numbered at random (`what`:
    vertices, cells or both), as a mesh file may number them: what the views' memory
    locality costs."""
    rng = np.random.default_rng(seed)
    nv, nc = len(mesh.points), len(mesh.cells)
    pv = rng.permutation(nv) if what in ("vertices", "both") else np.arange(nv)
    pc = rng.permutation(nc) if what in ("cells", "both") else np.arange(nc)
    inv = np.empty(nv, np.int64)
    inv[pv] = np.arange(nv)
    mesh = SimpleNamespace(kind="triangles", points=mesh.points[pv], cells=inv[mesh.cells[pc]])
    frames = [{k: (v[pc] if len(v) == nc and nc != nv else v[pv]) for k, v in f.items()}
              for f in frames]
    return mesh, frames, dataclasses.replace(info, mesh=mesh)


def problem(case: str, shuffle: str = ""):
    """(info, mode, field, list of field dicts: the frames cycled through); `shuffle`: a
    triangle mesh's vertices and/or cells numbered at random (see `shuffled`)."""
    if shuffle:
        info, mode, field, frames = problem(case)
        if info.kind != "triangles":
            raise SystemExit(f"--shuffle takes triangle meshes, not '{case}'")
        _, frames, info = shuffled(info.mesh, frames, info, shuffle)
        return info, mode, field, frames
    kind, _, size = case.partition("-")
    n = int(2 ** int(size[2:])) if size.startswith("2^") else \
        int(float(size[:-1]) * {"k": 1e3, "M": 1e6}[size[-1]]) if size[-1] in "kM" else int(size)
    phases = (0.0, 0.7, 1.9)
    if kind in ("surface", "image", "surface2"):
        mesh = _grid(n)
        X, Y = np.meshgrid(mesh.x, mesh.y)
        frames = []
        for p in phases:
            u = (np.sin(6 * X + p) * np.cos(5 * Y - p)).astype(np.float32)
            if kind == "surface2":
                frames.append({"eta": (0.2 * u).astype(np.float32),
                               "bottom": (-1 + 0.3 * np.exp(-20 * ((X - .5)**2 + (Y - .5)**2))
                                          ).astype(np.float32)})
            else:
                frames.append({"u": u})
        if kind == "surface2":
            info = _info(mesh, {k: v.shape for k, v in frames[0].items()}, ("eta", "bottom"))
            return info, "surface", "eta", frames
        return _info(mesh, {"u": (n, n)}), kind, "u", frames
    if kind == "line":
        x = np.linspace(0.0, 1.0, n)
        mesh = SimpleNamespace(kind="grid1d", x=x)
        frames = [{"u": np.exp(-((x - 0.3 - 0.2 * p) / 0.05) ** 2).astype(np.float32)}
                  for p in phases]
        return _info(mesh, {"u": (n,)}), "line", "u", frames
    if kind == "mesh":
        mesh = _sphere(n)
        z = mesh.points[:, 2]
        frames = [{"u": np.sin(8 * z + p).astype(np.float32)} for p in phases]
        return _info(mesh, {"u": (len(mesh.points),)}), "mesh", "u", frames
    if kind in ("cells", "mixed", "nodes"):
        # cells: cell heights and colours (each corner averages the cells around its vertex);
        # mixed: vertex heights, cell colours; nodes: vertex heights and colours
        mesh = _plane(n)
        c = mesh.points[mesh.cells].mean(axis=1)
        v = mesh.points
        at = {"cells": (c, c), "mixed": (c, v), "nodes": (v, v)}[kind]
        frames = [{"eta": (0.1 * np.sin(10 * at[0][:, 0] + p)).astype(np.float32),
                   "bottom": (-1 + 0.3 * at[1][:, 1]).astype(np.float32)} for p in phases]
        loc = {"cells": ("cell", "cell"), "mixed": ("cell", "node"),
               "nodes": ("node", "node")}[kind]
        info = _info(mesh, {k: v.shape for k, v in frames[0].items()}, ("eta", "bottom"),
                     location={"eta": loc[0], "bottom": loc[1]})
        return info, "mesh", "eta", frames
    raise SystemExit(f"unknown case '{case}'; cases look like: " + ", ".join(DEFAULT_CASES))


def measure_case(canvas, case: str, frames: int, path: str, shuffle: str = "") -> dict:
    from pdestudio.app.frames import Frame
    from pdestudio.app.views import ColorScale, make_view
    from pdestudio.app.views.colors import finite_range
    info, mode, field, data = problem(case, shuffle)
    # each field's finite range comes with the frame, as the solver thread's copiers compute it
    # where the frame is made (app/transfer.py), not in the drawing thread
    ranges = [{k: finite_range(v) for k, v in d.items()} for d in data]
    if path == "interop":
        import cupy as cp

        from pdestudio.app.views import interop
        session, why = interop.probe(canvas, "cupy")
        if session is None:
            raise SystemExit(f"--path interop: {why}")
        data = [{k: cp.asarray(v) for k, v in d.items()} for d in data]
    view = make_view(canvas, info, mode)
    scale = ColorScale()
    times, gpu, setup = [], [], time.perf_counter()
    timer = GpuTimer()
    try:
        for i in range(frames + 2):  # two warm-up frames (shader compilation, first uploads)
            f = Frame(dict(data[i % len(data)]), t=float(i), steps=i, generation=0,
                      ranges=ranges[i % len(data)])
            t0 = time.perf_counter()
            view.set_frame(f, field, scale)
            draw(canvas, timer)
            f.done()
            if i >= 2:
                times.append(time.perf_counter() - t0)
                if timer.ms is not None:
                    gpu.append(timer.ms)
            elif i == 1:
                setup = time.perf_counter() - setup
    finally:
        view.remove()
    med = statistics.median(times)
    how = " ".join(s for s in (getattr(view, "upload_path", ""), getattr(view, "geometry", ""))
                   if s)
    return {"case": case, "path": path, "frames": len(times), "draw_ms_median": 1e3 * med,
            "draw_ms_min": 1e3 * min(times), "frames_per_s": 1.0 / med,
            "gpu_draw_ms_median": statistics.median(gpu) if gpu else None,
            "first_two_frames_s": setup, "upload": how}


# ---- solver alone vs while the screen takes 60 frames/s ----------------------------------------
def solver_case(model: str, size: int, backend: str, dtype: str, seconds: float, path: str,
                fps: float = 60.0, own_stream: bool = False, pace: str = "smooth",
                run_ahead: bool = True) -> dict:
    from .handover_bench import drawing_rate, plain_rate
    from pdestudio import solvers
    schema = solvers.describe(model)
    if own_stream:  # the solver on a non-blocking CUDA stream (for the whole process)
        import cupy as cp
        cp.cuda.Stream(non_blocking=True).use()
    sim = solvers.create(model, backend=backend, dtype=dtype, **{schema["size_param"]: size})
    sim.step(1)
    alone, _ = plain_rate(sim, seconds)
    row = drawing_rate(sim, seconds, fps=fps, path=path, pace=pace, run_ahead=run_ahead)
    return {"model": model, "size": size, "backend": sim.backend, "dtype": sim.dtype,
            "path_asked": path, "steps_per_s_alone": alone, **row,
            "fraction_kept": row["steps_per_s"] / alone if alone else float("nan")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=list(DEFAULT_CASES))
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--path", choices=("host", "interop"), default="host")
    ap.add_argument("--solver", nargs="*", default=None, metavar="MODEL",
                    help="measure solver steps/s alone and while drawing 60 frames/s instead")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--fps", type=float, default=60.0, help="the screen's frame rate cap")
    ap.add_argument("--pace", choices=("smooth", "fast solver"), default="smooth",
                    help="the window's frame pace (app/frames.py FramePacer)")
    ap.add_argument("--no-run-ahead", action="store_true",
                    help="calls that do not start the next frame's steps (Simulation.step's "
                         "`ahead`; mean curvature and Willmore on the graph path run ahead)")
    ap.add_argument("--own-stream", action="store_true",
                    help="the solver on its own non-blocking CUDA stream")
    ap.add_argument("--no-pinned", action="store_true",
                    help="with --path interop: the interop rows only")
    ap.add_argument("--surface-density", type=float, default=None,
                    help="grid surfaces' vertices a pixel (app/views/surface.py DENSITY; 0: "
                         "every value up to 4096 a side, as before 2026-11-27)")
    ap.add_argument("--mesh-density", type=float, default=None,
                    help="triangle meshes' vertices a pixel (app/views/meshvisual.py DENSITY; "
                         "0: every vertex, as before 2026-11-27)")
    ap.add_argument("--mesh-worth", type=float, default=None,
                    help="a coarser mesh level is drawn only with at most this share of the "
                         "triangles (app/views/meshvisual.py WORTH)")
    ap.add_argument("--checks-after", action="store_true",
                    help="the stepping's checks after each chunk's wait, as before 2026-11-27 "
                         "(solvers/core/checks.py AHEAD = False)")
    ap.add_argument("--shuffle", choices=("vertices", "cells", "both"), default="",
                    help="number a triangle mesh's vertices and/or cells at random")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if a.checks_after:
        from pdestudio.solvers.core import checks
        checks.AHEAD = False
    if a.surface_density is not None:
        from pdestudio.app.views import surface
        surface.DENSITY = a.surface_density
    if a.mesh_density is not None:
        from pdestudio.app.views import meshvisual
        meshvisual.DENSITY = a.mesh_density
    if a.mesh_worth is not None:
        from pdestudio.app.views import meshvisual
        meshvisual.WORTH = a.mesh_worth
    rows = []
    if a.solver:
        paths = ("pinned", "interop") if a.path == "interop" else ("pinned",)
        paths = ("interop",) if a.no_pinned and a.path == "interop" else paths
        for model in a.solver:
            for path in paths:
                r = solver_case(model, a.size, a.backend, a.dtype, a.seconds, path, a.fps,
                                a.own_stream, a.pace, not a.no_run_ahead)
                rows.append(r)
                print(f"{model} {a.size} {r['backend']} {r['dtype']} [{r['path_used']}]: alone "
                      f"{r['steps_per_s_alone']:.4g} steps/s, while drawing "
                      f"{r['steps_per_s']:.4g} ({100 * r['fraction_kept']:.1f} %), "
                      f"{r['frames_shown_per_s']:.3g} frames/s drawn ({r['frames_made_per_s']:.3g} "
                      f"made: {r['stepping_ms_mean']:.3g} ms stepping of {r['frame_s_ms']:.3g}, "
                      f"{r['aside_ms']:.3g} ms aside), draw "
                      f"{r['draw_ms_median']:.3g} ms (GPU {r.get('gpu_draw_ms_median') or float('nan'):.3g} ms), hand-over {r['handover_ms_median']:.3g} ms "
                      f"(median); pace {r['pace']}; {r['drawn_by']}"
                      + (f"; {r['geometry']}" if r.get("geometry") else "")
                      + ("; run ahead" if r.get("run_ahead") else ""), flush=True)
    else:
        canvas = offscreen_canvas()
        canvas.render(alpha=False)  # makes the context and proves it works
        who = renderer_name()
        print(f"drawn by {who}; canvas {SIZE[0]}x{SIZE[1]}; path {a.path}", flush=True)
        for case in a.cases:
            r = measure_case(canvas, case, a.frames, a.path, a.shuffle)
            r["renderer"] = who
            rows.append(r)
            g = r["gpu_draw_ms_median"]
            print(f"{case:>14}: {r['draw_ms_median']:8.2f} ms/frame (min {r['draw_ms_min']:.2f})"
                  f"  {r['frames_per_s']:7.1f} frames/s  GPU draw "
                  + (f"{g:.2f} ms" if g is not None else "?") + f"  {r['upload']}", flush=True)
        canvas.close()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
