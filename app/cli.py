"""`pdestudio`: the desktop app, `pdestudio run` (headless) and `pdestudio bench` (SPEC §0).

Exit codes: 0 success, 1 a simulation diverged, 2 bad input (one line on stderr, no traceback).
Qt and VisPy are imported only when the window or a rendered export is asked for.
"""
from __future__ import annotations

import argparse
import sys
import time

import pdestudio
from pdestudio import solvers
from pdestudio.solvers import MeshError, ParameterError, SimulationDiverged

# `pdestudio bench` measures real backends ("auto" is a choice, not a backend) and runs float64
# (the reference) first.
BENCH_BACKENDS = tuple(b for b in solvers.BACKENDS if b != "auto")
BENCH_DTYPES = tuple(sorted(solvers.DTYPES, key=lambda d: d != "float64"))


class UsageError(Exception):
    """Bad command-line input detected outside argparse (exit 2)."""


def _sets(items: list[str]) -> dict:
    out = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--set '{item}' is malformed; allowed: key=value")
        value = value.strip()
        out[key.strip()] = None if value.lower() in ("none", "null") else value
    return out


def _model_params(model: str, sets: list[str], mesh: str | None, scenario: str | None):
    params = _sets(sets)
    if mesh is not None:
        schema = solvers.describe(model)
        if "mesh" not in {p["name"] for p in schema["parameters"]}:
            raise UsageError(f"--mesh: model '{model}' does not take a mesh file")
        params["mesh"] = mesh
        if scenario is None and "file" in [s["name"] for s in schema["scenarios"]]:
            scenario = "file"
    return params, scenario


def _size(text: str) -> int:
    t = text.replace("^", "**")
    try:
        if "**" in t:
            base, exp = t.split("**")
            return int(base) ** int(exp)
        return int(float(t))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size '{text}' is not an integer (e.g. 1024 or 2^20)")


def _csv(choices):
    def parse(text):
        vals = [v.strip() for v in text.split(",") if v.strip()]
        bad = [v for v in vals if v not in choices]
        if bad or not vals:
            raise argparse.ArgumentTypeError(f"'{text}': allowed values {', '.join(choices)}")
        return tuple(vals)
    return parse


class Progress:
    """Progress on stderr: a bar on a terminal, a line every few seconds otherwise."""

    def __init__(self, total: float, what: str, enabled: bool = True):
        self.total, self.what, self.enabled = total, what, enabled
        self.t0 = self.last = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.shown = False

    def update(self, done: float, sim) -> None:
        now = time.perf_counter()
        every = 0.2 if self.tty else 5.0  # the first report after 0.5 s, then every `every` s
        if not self.enabled or now - self.t0 < 0.5 or (self.shown and now - self.last < every):
            return
        self.last, self.shown = now, True
        frac = min(1.0, done / self.total) if self.total else 1.0
        eta = (now - self.t0) * (1 - frac) / frac if frac > 0 else float("inf")
        rate = sim.steps / (now - self.t0) if now > self.t0 else 0.0
        text = (f"{100 * frac:5.1f}% {self.what}: step {sim.steps}, t = {sim.t:.6g}, "
                f"{rate:.4g} steps/s, ETA {eta:.0f} s")
        if self.tty:
            bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
            sys.stderr.write(f"\r[{bar}] {text}\x1b[K")
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown and self.tty:
            sys.stderr.write("\n")


def cmd_run(a) -> int:
    # Overflow on the way to a divergence is reported once, as SimulationDiverged, not as a
    # stream of NumPy RuntimeWarnings.
    import numpy as np
    with np.errstate(all="ignore"):
        return _run(a)


def _run(a) -> int:
    params, scenario = _model_params(a.model, a.set, a.mesh, a.scenario)
    if a.load:
        if a.set or a.mesh or a.scenario or a.dtype:
            raise UsageError("--load continues a checkpoint with its own parameters; "
                             "--set, --mesh, --scenario and --dtype are not allowed with it")
        sim = solvers.load(a.load, backend=a.backend)
        if sim.model != a.model:
            raise UsageError(f"checkpoint '{a.load}' holds model '{sim.model}', not '{a.model}'")
    else:
        sim = solvers.create(a.model, backend=a.backend, dtype=a.dtype or "float64",
                             scenario=scenario,
                             **params)
    why = f" ({sim.backend_reason})" if a.backend == "auto" else ""
    print(f"{sim.model}/{sim.scenario_name}: backend {sim.backend}{why}, {sim.dtype}, "
          f"kernel {sim.kernel}", file=sys.stderr)
    from . import initial_conditions
    for spec in a.init or []:
        initial_conditions.apply(sim, spec)
    exporter = None
    if a.export_image or a.export_video or a.export_data:
        try:
            from . import export as exporter
        except ImportError as e:
            raise UsageError(f"exports are not available: {e}") from None
    field = a.field
    if field is not None:
        sim.field_info(field)
    recorder = None
    if a.export_video:
        recorder = exporter.VideoRecorder(a.export_video, sim, field=field, fps=a.fps)
        recorder.add(sim)
    total = a.steps if a.steps is not None else a.until - sim.t
    progress = Progress(total, "run", enabled=not a.quiet)
    t0, steps0, t_start = time.perf_counter(), sim.steps, sim.t
    chunk = a.frame_every if recorder else 1
    try:
        while True:
            done = sim.steps - steps0 if a.steps is not None else sim.t - t_start
            if (a.steps is not None and done >= a.steps) or \
                    (a.until is not None and sim.t >= a.until):
                break
            c0 = time.perf_counter()
            if a.steps is not None:
                sim.step(min(chunk, a.steps - done))
            else:
                sim.advance(a.until, max_steps=chunk)
            if recorder and (sim.steps - steps0) % a.frame_every == 0:
                recorder.add(sim)
            elif not recorder and time.perf_counter() - c0 < 0.1:
                chunk *= 2
            progress.update(sim.steps - steps0 if a.steps is not None else sim.t - t_start, sim)
    finally:
        progress.close()
        if recorder:
            recorder.close()
    wall = time.perf_counter() - t0
    n = sim.steps - steps0
    cells = sim.work()[0]
    print(f"done: {n} steps to t = {sim.t:.6g} in {wall:.3g} s ({n / wall if wall else 0:.4g} "
          f"steps/s, {n * cells / wall / 1e6 if wall else 0:.4g} Mcell/s)", file=sys.stderr)
    if a.save:
        sim.save(a.save)
        print(f"saved checkpoint {a.save}", file=sys.stderr)
    if a.export_data:
        exporter.write_data(sim, a.export_data)
        print(f"wrote {a.export_data}", file=sys.stderr)
    if a.export_image:
        how = exporter.render_image(sim, a.export_image, field=field)
        print(f"wrote {a.export_image} (drawn by {how})", file=sys.stderr)
    if a.export_video:
        print(f"wrote {a.export_video} ({recorder.frames} frames, drawn by {recorder.how})",
              file=sys.stderr)
    return 0


def cmd_bench(a) -> int:
    from pdestudio.solvers import bench
    rows, header = bench.run(a.models, sizes=a.sizes, backends=a.backends, dtypes=a.dtypes,
                             kernels=a.kernels, quick=a.quick,
                             log=lambda s: print(s, file=sys.stderr, flush=True))
    print(bench.table(rows, header))
    if a.json:
        bench.write_json(rows, header, a.json)
        print(f"wrote {a.json}", file=sys.stderr)
    return 0


def cmd_gui(a) -> int:
    params, scenario = _model_params(a.model, a.set, a.mesh, a.scenario) if a.model else \
        (_sets(a.set), a.scenario)
    try:
        from .launch import launch
    except ImportError as e:
        raise UsageError(f"the desktop app cannot start: {e}; install pdestudio with its "
                         "dependencies (pip install pdestudio), or use 'pdestudio run'") from None
    return launch(model=a.model, scenario=scenario, params=params, backend=a.backend,
                  dtype=a.dtype, run_for=a.run_for, screenshot=a.screenshot)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pdestudio", description="GPU PDE solvers you can watch: "
                                "the desktop app, a headless run, or benchmarks.")
    p.add_argument("--version", action="version", version=f"pdestudio {pdestudio.__version__}")
    p.add_argument("--model", help="model to open in the window (default: the first one)")
    p.add_argument("--scenario", help="scenario of the model (default: its first)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="a model parameter")
    p.add_argument("--mesh", metavar="FILE", help="a mesh file (models on triangles)")
    p.add_argument("--backend", default="auto", choices=solvers.BACKENDS)
    p.add_argument("--dtype", default="float64", choices=solvers.DTYPES)
    p.add_argument("--run-for", type=float, metavar="SECONDS",
                   help="run the simulation this long in the window, then exit")
    p.add_argument("--screenshot", metavar="PNG", help="save a screenshot of the window at exit")
    sub = p.add_subparsers(dest="command")

    r = sub.add_parser("run", help="run a model headless (no display needed)")
    r.add_argument("model", help="model id: " + ", ".join(solvers.available_models()))
    r.add_argument("--scenario")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="a model parameter")
    r.add_argument("--backend", default="auto", choices=solvers.BACKENDS)
    r.add_argument("--dtype", choices=solvers.DTYPES, help="real type (default float64)")
    when = r.add_mutually_exclusive_group(required=True)
    when.add_argument("--steps", type=int, metavar="N", help="accepted time steps to take")
    when.add_argument("--until", type=float, metavar="T", help="simulated time to reach exactly")
    r.add_argument("--init", action="append", metavar="FIELD=SOURCE",
                   help="initial values: a .npy/.npz file, a grayscale image (optionally "
                        "@lo,hi), or formula:EXPR in x, y")
    r.add_argument("--mesh", metavar="FILE", help="a mesh file (models on triangles)")
    r.add_argument("--load", metavar="STATE.npz", help="continue from a checkpoint")
    r.add_argument("--save", metavar="STATE.npz", help="write a checkpoint at the end")
    r.add_argument("--field", help="field to draw in image and video exports")
    r.add_argument("--export-image", metavar="OUT.png")
    r.add_argument("--export-video", metavar="OUT.mp4|OUT.gif")
    r.add_argument("--frame-every", type=int, default=10, metavar="K",
                   help="record every K-th step in the video (default 10)")
    r.add_argument("--fps", type=int, default=25, help="video frame rate (default 25)")
    r.add_argument("--export-data", metavar="OUT.npz|OUT.vtu")
    r.add_argument("--quiet", action="store_true", help="no progress output")
    r.set_defaults(func=cmd_run)

    b = sub.add_parser("bench", help="benchmark models on each backend and kernel path")
    b.add_argument("models", nargs="*", help="model ids (default: all)")
    b.add_argument("--sizes", nargs="+", type=_size, help="sizes (e.g. 4096 2^20)")
    b.add_argument("--backends", type=_csv(BENCH_BACKENDS), default=BENCH_BACKENDS)
    b.add_argument("--dtypes", type=_csv(solvers.DTYPES), default=BENCH_DTYPES)
    b.add_argument("--kernels", type=_csv(("fused", "array")), default=("fused", "array"))
    b.add_argument("--quick", action="store_true", help="fewer sizes, shorter time budgets")
    b.add_argument("--json", metavar="OUT.json", help="write the rows as JSON")
    b.set_defaults(func=cmd_bench)
    p.set_defaults(func=cmd_gui)
    return p


def main(argv=None) -> int:
    a = parser().parse_args(argv)
    if a.command == "run":
        if a.steps is not None and a.steps < 0:
            return _fail("--steps must be an integer >= 0")
        if a.until is not None and not (a.until == a.until and abs(a.until) != float("inf")):
            return _fail("--until must be a finite time")
        if a.frame_every < 1:
            return _fail("--frame-every must be an integer >= 1")
    try:
        return a.func(a)
    except (ParameterError, MeshError, UsageError) as e:
        return _fail(str(e))
    except SimulationDiverged as e:
        print(f"pdestudio: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        return _fail(f"{e.filename or ''}: {e.strerror or e}")
    except KeyboardInterrupt:
        print("pdestudio: interrupted", file=sys.stderr)
        return 130


def _fail(msg: str) -> int:
    print(f"pdestudio: error: {msg}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
