"""`pdestudio`: the desktop app, `pdestudio run` (headless), `models`, `describe` and `bench`
(docs/MODELS.md §0).

Exit codes: 0 success; 1 the run failed after it started (a divergence: the last finite state is
still written; out of memory in a step); 2 bad input or an output that cannot be written (one
line on stderr, no traceback); 130 interrupted (SIGINT), 143 terminated (SIGTERM), with nothing
half-written left behind. Every error is one line on stderr. Options shared by the window and
`run` (--scenario, --set, --mesh, --backend, --dtype) and -v/-q may stand before or after the
sub-command; options that do not apply to the sub-command are refused.
Qt and VisPy are imported only when the window or a rendered export is asked for.
"""
from __future__ import annotations

import argparse
import os
import socket
import sys

import pdestudio
from pdestudio import solvers
from pdestudio.solvers import MeshError, ParameterError, SimulationDiverged

from . import cli_log
from .cli_log import log, one_line
from .cli_outputs import OutputError
from .cli_run import RunFailed, UsageError, model_params, parse_sets

# `pdestudio bench` measures real backends ("auto" is a choice, not a backend) and runs float64
# (the reference) first.
BENCH_BACKENDS = tuple(b for b in solvers.BACKENDS if b != "auto")
BENCH_DTYPES = tuple(sorted(solvers.DTYPES, key=lambda d: d != "float64"))
SHARED = ("scenario", "set", "mesh", "backend", "dtype")   # the window's and run's
WINDOW_ONLY = ("g_model", "run_for", "screenshot")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2)."""

    def error(self, message):
        sys.stderr.write(f"pdestudio: error: {one_line(message)} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _size(text: str) -> int:
    t = text.replace("^", "**")
    try:
        if "**" in t:
            base, exp = t.split("**")
            return int(base) ** int(exp)
        return int(float(t))
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"size '{text}' is not an integer (e.g. 1024 or 2^20)")


def _csv(choices):
    def parse(text):
        vals = [v.strip() for v in text.split(",") if v.strip()]
        bad = [v for v in vals if v not in choices]
        if bad or not vals:
            raise argparse.ArgumentTypeError(f"'{text}': allowed values {', '.join(choices)}")
        return tuple(vals)
    return parse


def _range(text: str):
    """--range: 'follow' (videos' default: takes in every frame, closes in on the data),
    'first' (the first frame's range, fixed), 'auto' (every frame its own) or LO,HI."""
    if text in ("follow", "first", "auto"):
        return text
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': allowed: LO,HI (numbers), follow, first "
                                         "or auto")
    if not (lo < hi and abs(lo) != float("inf") and abs(hi) != float("inf")):
        raise argparse.ArgumentTypeError(f"'{text}': LO,HI must be finite with LO < HI")
    return (lo, hi)


def _verbosity_options(p, prefix=""):
    p.add_argument("-v", "--verbose", action="count", default=0, dest=prefix + "verbose",
                   help="more messages on stderr (progress lines, details)")
    p.add_argument("-q", "--quiet", action="count", default=0, dest=prefix + "quiet",
                   help="only warnings and errors on stderr")


def _shared_options(p, prefix=""):
    p.add_argument("--scenario", dest=prefix + "scenario", help="scenario (default: the first)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", dest=prefix + "set",
                   help="a model parameter (repeatable; `pdestudio describe MODEL` lists them)")
    p.add_argument("--mesh", metavar="FILE", dest=prefix + "mesh",
                   help="a mesh file (models on triangles)")
    p.add_argument("--backend", choices=solvers.BACKENDS, dest=prefix + "backend",
                   help="numpy, cupy or auto (default: auto, the GPU when one works)")
    p.add_argument("--dtype", choices=solvers.DTYPES, dest=prefix + "dtype",
                   help="real type (default float64)")


def parser() -> argparse.ArgumentParser:
    p = Parser(prog="pdestudio", description="GPU PDE solvers you can watch: the desktop app "
               "(no sub-command), a headless run, the models and their parameters, benchmarks.")
    p.add_argument("--version", action="version", version=f"pdestudio {pdestudio.__version__}")
    _verbosity_options(p, "g_")
    _shared_options(p, "g_")
    p.add_argument("--model", dest="g_model",
                   help="model to open in the window (default: the first one)")
    p.add_argument("--run-for", type=float, metavar="SECONDS",
                   help="run the simulation this long in the window, then exit")
    p.add_argument("--screenshot", metavar="PNG", help="save a screenshot of the window at exit")
    sub = p.add_subparsers(dest="command", parser_class=Parser, metavar="COMMAND")

    r = sub.add_parser("run", help="run a model headless (no display needed)",
                       description="Run a model headless. Exit 0 done, 1 diverged (the last "
                       "finite state is still written), 2 bad input, 130 interrupted.")
    r.add_argument("model", help="model id (pdestudio models): "
                   + ", ".join(solvers.available_models()))
    _shared_options(r)
    when = r.add_mutually_exclusive_group(required=True)
    when.add_argument("--steps", type=int, metavar="N", help="accepted time steps to take")
    when.add_argument("--until", type=float, metavar="T", help="simulated time to reach exactly")
    r.add_argument("--init", action="append", metavar="FIELD=SOURCE",
                   help="initial values: a .npy/.npz file, a grayscale image (optionally "
                        "@lo,hi), or formula:EXPR in x, y, z, r, t with numpy-style functions")
    r.add_argument("--load", metavar="STATE.npz", help="continue from a checkpoint")
    r.add_argument("--save", metavar="STATE.npz", help="write a checkpoint at the end")
    r.add_argument("--field", help="field to draw in image and video exports")
    r.add_argument("--export-image", metavar="OUT.png")
    r.add_argument("--export-video", metavar="OUT.mp4|OUT.gif",
                   help="a recording, streamed to the encoder (default: 100 frames over the run)")
    frames = r.add_mutually_exclusive_group()
    frames.add_argument("--frame-every", type=int, metavar="K", help="a video frame every K steps")
    frames.add_argument("--frame-dt", type=float, metavar="DT",
                        help="a video frame every DT of simulated time (the run stops exactly "
                             "there)")
    r.add_argument("--fps", type=int, default=25, help="video frame rate (default 25)")
    r.add_argument("--range", type=_range, metavar="LO,HI|follow|first|auto",
                   help="colour range of pictures: fixed LO,HI (--range=-1,1 when LO < 0); "
                        "follow (default for videos: takes in every frame's data at once and "
                        "closes in on data that occupy less of it); first (the first frame's "
                        "range); auto (each picture its own, the default for an image)")
    r.add_argument("--export-data", metavar="OUT.npz|.vti|.vtu|.pvd",
                   help=".npz: a checkpoint with the fields (solvers.load reads it); .vti: "
                        "ImageData (grids); .vtu: UnstructuredGrid; .pvd: a ParaView time series "
                        "(with --export-every or --export-dt)")
    series = r.add_mutually_exclusive_group()
    series.add_argument("--export-every", type=int, metavar="K",
                        help="time series: a snapshot every K steps")
    series.add_argument("--export-dt", type=float, metavar="DT",
                        help="time series: a snapshot every DT of simulated time")
    r.add_argument("--json", action="store_true",
                   help="print one JSON object on stdout at the end (what ran, the speed, the "
                        "files written, whether it diverged)")
    r.add_argument("--distributed", action="store_true",
                   help="one simulation decomposed over the ranks of an MPI launch (mpirun -n 4 "
                        "pdestudio run ... --distributed; grid models): rank 0 writes and logs "
                        "(docs/DISTRIBUTED.md)")
    _verbosity_options(r)
    r.set_defaults(func=_lazy("cli_run", "cmd_run"))

    for name, aliases in (("models", ["list"]),):
        m = sub.add_parser(name, aliases=aliases, help="list the models")
        m.add_argument("--json", action="store_true", help="as JSON")
        _verbosity_options(m)
        m.set_defaults(func=_lazy("cli_info", "cmd_models"), command="models")
    d = sub.add_parser("describe", help="a model's parameters, scenarios and fields")
    d.add_argument("model", help="model id (pdestudio models)")
    d.add_argument("--json", action="store_true", help="the schema as JSON")
    _verbosity_options(d)
    d.set_defaults(func=_lazy("cli_info", "cmd_describe"))

    b = sub.add_parser("bench", help="benchmark models on each backend and kernel path")
    b.add_argument("models", nargs="*", help="model ids (default: all)")
    b.add_argument("--sizes", nargs="+", type=_size, help="sizes (e.g. 4096 2^20)")
    b.add_argument("--backends", type=_csv(BENCH_BACKENDS), default=BENCH_BACKENDS)
    b.add_argument("--dtypes", type=_csv(solvers.DTYPES), default=BENCH_DTYPES)
    b.add_argument("--kernels", type=_csv(("fused", "array")), default=("fused", "array"))
    b.add_argument("--quick", action="store_true",
                   help="one small size per model, short time budgets (about a minute on a CPU)")
    b.add_argument("--json", metavar="OUT.json", help="write the rows as JSON")
    _verbosity_options(b)
    b.set_defaults(func=cmd_bench)
    from .cli_sweep import add_parser as add_sweep
    add_sweep(sub, _shared_options, _verbosity_options)
    p.set_defaults(func=cmd_gui)
    return p


def _lazy(module, name):
    def call(a):
        import importlib
        return getattr(importlib.import_module(f"{__package__}.{module}"), name)(a)
    return call


def _merge_globals(a) -> None:
    """Options given before the sub-command: taken where they apply, refused where not."""
    a.verbosity = a.g_verbose - a.g_quiet + getattr(a, "verbose", 0) - getattr(a, "quiet", 0)
    given = {k: getattr(a, "g_" + k) for k in SHARED if getattr(a, "g_" + k) is not None}
    if a.command is None:
        for k in SHARED:
            setattr(a, k, getattr(a, "g_" + k))
        a.model = a.g_model
        return
    window = [k for k in WINDOW_ONLY if getattr(a, k) is not None]
    if window:
        opt = "--" + window[0].removeprefix("g_").replace("_", "-")
        hint = "; name the model after it: pdestudio run MODEL" if opt == "--model" else ""
        raise UsageError(f"{opt} applies to the window (pdestudio {opt} ...), not to "
                         f"'{a.command}'{hint}")
    if a.command not in ("run", "sweep"):
        if given:
            opt = "--" + next(iter(given))
            raise UsageError(f"{opt} does not apply to 'pdestudio {a.command}'")
        return
    for k, v in given.items():
        if k == "set":
            a.set = v + (a.set or [])
        elif getattr(a, k) is None:
            setattr(a, k, v)
        elif getattr(a, k) != v:
            raise UsageError(f"--{k} is given twice with different values ({v!r} before "
                             f"'run', {getattr(a, k)!r} after it)")
    if a.backend is None:
        a.backend = "auto"


def cmd_bench(a) -> int:
    from pdestudio.solvers import bench
    if a.json:
        from .cli_outputs import check_writable
        check_writable(a.json, "JSON file")
    rows, header = bench.run(a.models, sizes=a.sizes, backends=a.backends, dtypes=a.dtypes,
                             kernels=a.kernels, quick=a.quick, log=log.info,
                             out=lambda line: print(line, flush=True))
    if bench.footer(rows):
        print(bench.footer(rows), flush=True)
    if a.json:
        from .cli_outputs import writing
        with writing(a.json):
            bench.write_json(rows, header, a.json)
        log.info("wrote %s", a.json)
    return 0


def display_problem() -> str | None:
    """Why the window cannot open here (checked before Qt is imported, which would abort the
    process with a misleading message), or None."""
    if not sys.platform.startswith("linux"):
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if platform in ("offscreen", "minimal", "minimalegl"):
        return (f"QT_QPA_PLATFORM={platform} cannot show the window (no OpenGL); unset it on a "
                "desktop, or use 'pdestudio run' (headless)")
    if platform not in ("", "xcb", "wayland", "wayland-egl"):
        return None  # eglfs, linuxfb, vnc...: the user chose it
    wayland, display = os.environ.get("WAYLAND_DISPLAY"), os.environ.get("DISPLAY")
    if platform.startswith("wayland") or (not platform and wayland and not display):
        if wayland:
            return None
        return ("no Wayland display (WAYLAND_DISPLAY is not set); run pdestudio on a desktop, or "
                "use 'pdestudio run' (headless)")
    if not display:
        return ("no display (DISPLAY is not set): use 'pdestudio run MODEL ...' for a headless "
                "run, or start the window on a desktop (or under xvfb-run)")
    if not _x_reachable(display):
        return (f"cannot connect to the X display '{display}': use 'pdestudio run MODEL ...' "
                "for a headless run, or set DISPLAY to a running X server")
    return None


def _x_reachable(display: str) -> bool:
    host, _, rest = display.rpartition(":")
    try:
        number = int(rest.split(".")[0])
    except ValueError:
        return True  # a form we do not know: let Qt try
    try:
        if host in ("", "unix"):
            for addr in (f"\0/tmp/.X11-unix/X{number}", f"/tmp/.X11-unix/X{number}"):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(2)
                    try:
                        s.connect(addr)
                        return True
                    except OSError:
                        continue
            return host == "unix" or _tcp(("localhost", 6000 + number))
        if host.startswith("/"):  # launchd-style socket paths
            return True
        return _tcp((host, 6000 + number))
    except OSError:
        return False


def _tcp(addr) -> bool:
    try:
        socket.create_connection(addr, timeout=2).close()
        return True
    except OSError:
        return False


def cmd_gui(a) -> int:
    params, scenario = model_params(a.model, a.set, a.mesh, a.scenario) if a.model else \
        (parse_sets(a.set, solvers.available_models()[0]), a.scenario)
    if a.model is None and a.mesh is not None:
        raise UsageError("--mesh needs --model (a model on triangles)")
    if a.model is not None or a.set:
        solvers.validate(a.model or solvers.available_models()[0], scenario, **params)
    problem = display_problem()
    if problem:
        raise UsageError(problem)
    try:
        from .launch import launch
    except ImportError as e:
        raise UsageError(f"the desktop app cannot start: {e}; install pdestudio with its "
                         "dependencies (pip install pdestudio), or use 'pdestudio run'") from None
    return launch(model=a.model, scenario=scenario, params=params, backend=a.backend or "auto",
                  dtype=a.dtype, run_for=a.run_for, screenshot=a.screenshot)


def main(argv=None) -> int:
    a = parser().parse_args(argv)
    handler = None
    try:
        _merge_globals(a)
        handler = cli_log.setup(a.verbosity)
        _define_model_files(a)
        if a.command is None:
            return a.func(a)
        with cli_log.signals():
            return a.func(a)
    except (ParameterError, MeshError, UsageError, OutputError) as e:
        return _fail(str(e))
    except SimulationDiverged as e:
        return _fail(str(e), code=1, prefix="pdestudio: ")
    except RunFailed as e:
        return _fail(str(e), code=1)
    except MemoryError:
        return _fail("out of memory; choose a smaller size")
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`): nothing to say
        with __import__("contextlib").suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:
        return _fail(f"{e.filename or ''}: {e.strerror or e}" if e.filename else str(e))
    except cli_log.Terminated:
        return _fail("terminated (SIGTERM); nothing half-written was left", code=143,
                     prefix="pdestudio: ")
    except KeyboardInterrupt:
        return _fail("interrupted; nothing half-written was left", code=130,
                     prefix="pdestudio: ")
    except Exception as e:  # a bug: one line, the traceback with -v
        if getattr(a, "verbosity", 0) > 0:
            import traceback
            traceback.print_exc()
        return _fail(f"internal error: {type(e).__name__}: {e} (run with -v for the traceback)",
                     code=1)
    finally:
        cli_log.teardown(handler)


def _define_model_files(a) -> None:
    """A model given as a model file (FILE.toml, docs/EQUATIONS.md) is defined; its id replaces
    the path."""
    for key in ("model", "g_model"):
        v = getattr(a, key, None)
        if isinstance(v, str) and v.endswith(".toml"):
            setattr(a, key, solvers.define(v))
    if isinstance(getattr(a, "models", None), list):
        a.models = [solvers.define(m) if m.endswith(".toml") else m for m in a.models]


def _fail(msg: str, code: int = 2, prefix: str = "pdestudio: error: ") -> int:
    sys.stderr.write(prefix + one_line(msg) + "\n")
    sys.stderr.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
