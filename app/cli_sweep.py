"""`pdestudio sweep MODEL --vary NAME=START:STOP:COUNT|V1,V2,... [--vary ...] --out DIR`:
the product grid of the varied parameters run on Dask distributed (app/sweep/). Exit 0 when
every member has a row (diverged members included: their row says why), 1 when tasks failed
(a worker died, a bug: rerun the command to retry just those), 2 bad input, 130 interrupted
(finished members are kept; rerunning the command runs only the others)."""
from __future__ import annotations

import json

from .cli_log import log
from .cli_run import UsageError, model_params


def add_parser(sub, shared_options, verbosity_options):
    s = sub.add_parser("sweep", help="run a grid of parameter values on Dask (results table, "
                       "contact sheet)", description=__doc__.split("\n\n")[0])
    s.add_argument("model", help="model id (pdestudio models)")
    shared_options(s)
    s.add_argument("--vary", action="append", required=True, metavar="NAME=START:STOP:COUNT",
                   help="a varied parameter: COUNT evenly spaced values from START to STOP, or "
                        "NAME=V1,V2,... (repeatable: the sweep is the product grid)")
    when = s.add_mutually_exclusive_group(required=True)
    when.add_argument("--until", type=float, metavar="T", help="simulated time each member reaches")
    when.add_argument("--steps", type=int, metavar="N", help="time steps each member takes")
    s.add_argument("--out", required=True, metavar="DIR", help="the sweep's folder (created)")
    s.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: one per GPU, each pinned to its own "
                        "GPU, else one per core)")
    s.add_argument("--gpus", type=int, metavar="N",
                   help="use the first N GPUs (default: every GPU CuPy sees; one worker each, "
                        "and the ensembles cut so that each GPU runs one)")
    s.add_argument("--no-checkpoints", action="store_true",
                   help="thin output: no members/NNNN/final.npz (the row and the thumbnail "
                        "stay); for sweeps bound by writing")
    s.add_argument("--no-thumbnails", action="store_true",
                   help="thin output: no members/NNNN/thumb.png and no contact sheet (the row "
                        "and the checkpoint stay)")
    s.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run on an existing Dask scheduler instead of a local cluster")
    s.add_argument("--solo", action="store_true",
                   help="run every member alone, also on a GPU (default there: members that "
                        "share a mesh run as one batched ensemble)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    verbosity_options(s)
    s.set_defaults(func=cmd_sweep)
    return s


def cmd_sweep(a) -> int:
    from pdestudio import solvers

    from .sweep import spec as specs
    from .sweep.runner import run_sweep
    if a.model not in solvers.available_models():
        raise UsageError(f"unknown model '{a.model}'; allowed: "
                         + ", ".join(solvers.available_models()))
    if a.workers is not None and a.workers < 1:
        raise UsageError(f"--workers {a.workers}; allowed: an integer >= 1")
    if a.gpus is not None and a.gpus < 1:
        raise UsageError(f"--gpus {a.gpus}; allowed: an integer >= 1")
    if a.steps is not None and a.steps < 0:
        raise UsageError(f"--steps {a.steps}; allowed: an integer >= 0")
    if a.until is not None and not a.until >= 0:
        raise UsageError(f"--until {a.until}; allowed: a finite time >= 0")
    if a.scheduler is not None and not a.scheduler.startswith(("tcp://", "tls://", "inproc://")):
        raise UsageError(f"--scheduler '{a.scheduler}'; allowed: an address like "
                         "tcp://127.0.0.1:8786")
    params, scenario = model_params(a.model, a.set, a.mesh, a.scenario)
    fixed = {k: solvers.check_param(a.model, k, v, scenario) for k, v in params.items()}
    vary = [specs.parse_vary(a.model, v, scenario) for v in a.vary]
    spec = specs.make_spec(a.model, scenario, fixed, vary, a.backend or "auto",
                           a.dtype or "float64", a.until, a.steps)
    definition = solvers.describe(a.model).get("definition")
    if definition is not None:  # a model file: the workers define it too
        spec["definition"] = definition
    outputs = [o for o, off in (("checkpoint", a.no_checkpoints),
                                ("thumbnail", a.no_thumbnails)) if not off]
    summary = run_sweep(spec, a.out, workers=a.workers, scheduler=a.scheduler,
                        batch=not a.solo, gpus=a.gpus, outputs=outputs)
    log.info("sweep: %d members, %d skipped (finished before), %d ran, %d diverged, %d failed; "
             "%.1f s, %.0f members/hour; %s, %s", summary["members"], summary["skipped"],
             summary["ran"], summary["diverged"], len(summary["failed"]), summary["wall_s"],
             summary["members_per_hour"], summary["table"], summary["contact"])
    for f in summary["failed"]:
        log.warning("sweep: failed task %s", f)
    if a.json:
        print(json.dumps(summary))
    return 1 if summary["failed"] else 0
