"""`pdestudio run MODEL ...`: a model headless, with the outputs of cli_outputs.py.

Order of work: the arguments and every output path are checked, the simulation is built (or a
checkpoint loaded), initial conditions applied and the outputs checked against the model, and
only then the first step is taken. On a divergence the last finite state is still written where
the outputs asked for it (exit 1). With --json one JSON object on stdout at the end says what ran
and what was written; human messages go to stderr (cli_log.py).
"""
from __future__ import annotations

import json
import math
import sys
import time

import numpy as np

from pdestudio import solvers
from pdestudio.solvers import SimulationDiverged

from .cli_log import Progress, log, one_line
from .cli_outputs import Outputs, landed


class UsageError(Exception):
    """Bad command-line input detected outside argparse (exit 2)."""


class RunFailed(Exception):
    """The run failed after it had started (exit 1), e.g. out of memory in a step."""


# ---- parameters from the command line ----------------------------------------------------------
def parse_sets(items, model: str | None = None) -> dict:
    """--set key=value items as a dict of strings (the schema converts them). The words none/null
    become None only for a parameter that may be None and is not a string with that choice (so
    `--set renumber=none` stays the choice "none")."""
    schema = {}
    if model is not None and items:
        schema = {p["name"]: p for p in solvers.describe(model)["parameters"]}
    out = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise UsageError(f"--set '{item}' is malformed; allowed: key=value")
        p = schema.get(key)
        if value.lower() in ("none", "null") and p is not None and p["nullable"] and \
                value not in p.get("choices", ()):
            out[key] = None
        else:
            out[key] = value
    return out


def model_params(model: str, sets, mesh: str | None, scenario: str | None):
    params = parse_sets(sets, model)
    if mesh is not None:
        schema = solvers.describe(model)
        if "mesh" not in {p["name"] for p in schema["parameters"]}:
            raise UsageError(f"--mesh: model '{model}' does not take a mesh file")
        params["mesh"] = mesh
        if scenario is None and "file" in [s["name"] for s in schema["scenarios"]]:
            scenario = "file"
    return params, scenario


# ---- the command --------------------------------------------------------------------------------
def cmd_run(a) -> int:
    # Overflow on the way to a divergence is reported once, as SimulationDiverged, not as a
    # stream of NumPy RuntimeWarnings.
    with np.errstate(all="ignore"):
        if not getattr(a, "distributed", False):
            return _run(a)
        from .cli_distributed import Ranks, quiet_exit
        ranks = Ranks(a)
        try:
            ranks.check(a)
            return _run(a, ranks)
        except Exception as e:
            code = None if ranks.root else quiet_exit(e)
            if code is None:
                raise
            return code  # rank 0 says it


def _positive(value, name, integer=False):
    if value is None:
        return
    ok = value >= 1 if integer else (math.isfinite(value) and value > 0)
    if not ok:
        raise UsageError(f"{name} must be {'an integer >= 1' if integer else 'a finite time > 0'}"
                         f"; got {value!r}")


def check_args(a) -> None:
    if a.steps is not None and a.steps < 0:
        raise UsageError("--steps must be an integer >= 0")
    if a.until is not None and not math.isfinite(a.until):
        raise UsageError("--until must be a finite time")
    _positive(a.frame_every, "--frame-every", integer=True)
    _positive(a.frame_dt, "--frame-dt")
    _positive(a.export_every, "--export-every", integer=True)
    _positive(a.export_dt, "--export-dt")
    if not 1 <= a.fps <= 240:
        raise UsageError(f"--fps must be an integer in [1, 240]; got {a.fps}")


def make_simulation(a, comm=None):
    if a.load:
        if a.set or a.mesh or a.scenario or a.dtype:
            raise UsageError("--load continues a checkpoint with its own parameters; "
                             "--set, --mesh, --scenario and --dtype are not allowed with it")
        sim = solvers.load(a.load, backend=a.backend, comm=comm)
        if sim.model != a.model:
            raise UsageError(f"checkpoint '{a.load}' holds model '{sim.model}', not '{a.model}'")
        return sim
    params, scenario = model_params(a.model, a.set, a.mesh, a.scenario)
    return solvers.create(a.model, backend=a.backend, dtype=a.dtype or "float64",
                          scenario=scenario, comm=comm, **params)


def _run(a, ranks=None) -> int:
    """The run; `ranks` (cli_distributed.Ranks): decomposed over an MPI launch, rank 0 alone
    checking and writing the outputs."""
    check_args(a)
    if a.until is not None and a.load is None and not a.until > 0:
        raise UsageError(f"--until {a.until:g} is not after the simulation's time t = 0; "
                         "allowed: a time > 0")
    outputs = Outputs(a)
    if ranks is None:
        outputs.check_paths()
    else:
        ranks.agree(outputs.check_paths)
    try:
        sim = make_simulation(a, None if ranks is None else ranks.comm)
    except MemoryError:
        raise UsageError(f"{a.model}: not enough memory to set up this simulation; choose a "
                         "smaller size") from None
    if a.until is not None and not a.until > sim.t:
        raise UsageError(f"--until {a.until:g} is not after the simulation's time t = {sim.t:g}; "
                         "allowed: a time > t")
    for opt, dt in (("--frame-dt", a.frame_dt), ("--export-dt", a.export_dt)):
        if dt is not None and dt <= 1e-12 * max(1.0, abs(sim.t), abs(a.until or 0.0)):
            raise UsageError(f"{opt} {dt:g} is below the resolution of the clock at t = {sim.t:g}")
    from . import initial_conditions
    for spec in a.init or []:
        initial_conditions.apply(sim, spec)
    outputs.check_for(sim)
    # said once the set-up is accepted: an error found above is the only line printed
    why = f" ({sim.backend_reason})" if a.backend == "auto" else ""
    cpu_why = getattr(sim, "cpu_reason", "") if sim.kernel == "numpy" else ""
    log.info("%s/%s: backend %s%s, %s, kernel %s%s", sim.model, sim.scenario_name, sim.backend,
             why, sim.dtype, sim.kernel, f" ({cpu_why})" if cpu_why else "")
    for note in sim.notes():
        log.info("%s: %s", sim.model, note)

    end_steps = sim.steps + a.steps if a.steps is not None else None
    t_start, steps_start = sim.t, sim.steps
    total = a.steps if a.steps is not None else a.until - t_start
    progress = None
    diverged = None
    timing = {"wall0": time.perf_counter(), "solver_s": 0.0}
    try:
        try:
            outputs.open(sim, a.until, end_steps)
            progress = Progress(total, "run", Progress.mode_for(a.verbosity))
            _loop(sim, a, outputs, end_steps, progress, timing,
                  None if ranks is None else ranks.slowest)
        except SimulationDiverged as e:
            diverged = e
        except MemoryError:
            raise RunFailed(f"{sim.model}: out of memory in step {sim.steps + 1} "
                            f"(t = {sim.t:.6g}); nothing was written") from None
        finally:
            if progress is not None:
                progress.close()
        wall = time.perf_counter() - timing["wall0"]
        solver_s = timing["solver_s"]
        n = sim.steps - steps_start
        cells = sim.work()[0]
        rate = n / solver_s if solver_s > 0 else 0.0
        if diverged is not None:
            log.error("pdestudio: %s", one_line(diverged))
        log.info("done: %d steps to t = %.6g in %.3g s (%.4g steps/s, %.4g Mcell/s)", n, sim.t,
                 wall, rate, rate * cells / 1e6)
        try:
            if ranks is None:
                written = outputs.finish(sim)
            else:  # the whole state gathered on rank 0, which alone writes
                decimate = bool(a.export_image) and ranks.every(sim) > 1
                needed = bool(a.export_data or (a.export_image and not decimate))
                whole = ranks.whole(sim, needed)
                if a.save and not needed:  # a checkpoint alone: no whole-grid set-up
                    whole = sim.gathered_state()  # (collective: every rank decides alike)
                picture = ranks.picture(sim) if decimate else None
                written = outputs.finish(whole or sim, picture) if ranks.root else []
        except MemoryError:
            raise RunFailed(f"{sim.model}: out of memory while writing the outputs") from None
    except BaseException:
        outputs.abort()
        raise
    if a.json:
        summary = {
            "model": sim.model, "scenario": sim.scenario_name, "backend": sim.backend,
            "kernel": sim.kernel, "dtype": sim.dtype, "params": dict(sim.params),
            "steps": n, "total_steps": sim.steps, "t_start": t_start, "t": sim.t,
            "wall_s": wall, "solver_s": solver_s, "steps_per_s": rate, "cells": cells,
            "cell_updates_per_s": rate * cells, "outputs": written,
            "diverged": diverged is not None,
            "reason": one_line(diverged) if diverged is not None else None,
            "exit_code": 1 if diverged is not None else 0,
        }
        if ranks is not None:
            summary["distributed"] = ranks.summary(sim)
            if not ranks.root:
                return summary["exit_code"]
        sys.stdout.write(json.dumps(summary, default=str) + "\n")
        sys.stdout.flush()
    return 1 if diverged is not None else 0


# The run loop's chunks of steps grow while one takes under CHUNK_GROW_S and shrink above
# CHUNK_SHRINK_S: long enough that the library's per-call work (a copy of the state to return to
# and a finiteness check, each a pass over the state) and its batching (CUDA graphs of many
# steps) are not cut short, short enough for progress. With 0.1 s / 0.5 s a 65536 × 16384 shallow
# water (30 ms a step on an H200) ran in chunks of 4 steps at 19.4 Gcell/s; in chunks of 48 or
# more the same steps run at 36–37 Gcell/s.
CHUNK_GROW_S, CHUNK_SHRINK_S = 1.0, 4.0


def _loop(sim, a, outputs, end_steps, progress, timing, slowest=None) -> None:
    """Step until --steps or --until, stopping exactly at due frames; `timing` gets the time of
    the run loop's start (wall0, after the outputs are open) and the seconds spent stepping.
    `slowest` (distributed): the longest of the ranks' times, so all choose the same chunks."""
    chunk = 1
    timing["wall0"] = time.perf_counter()
    t_start, steps_start = sim.t, sim.steps
    while True:
        if end_steps is not None and sim.steps >= end_steps:
            break
        if a.until is not None and landed(sim.t, a.until):
            break
        n = chunk if end_steps is None else min(chunk, end_steps - sim.steps)
        due_steps, due_t = outputs.limits()
        if due_steps is not None:
            n = max(1, min(n, due_steps - sim.steps))
        goal = a.until
        if due_t is not None:
            goal = due_t if goal is None else min(goal, due_t)
        c0 = time.perf_counter()
        if goal is None:
            sim.step(n)
        else:
            sim.advance(goal, max_steps=n)
        took = time.perf_counter() - c0
        if slowest is not None:
            took = slowest(took)
        timing["solver_s"] += took
        outputs.record(sim)
        if took < CHUNK_GROW_S:
            chunk = min(2 * chunk, 1 << 20)
        elif took > CHUNK_SHRINK_S and chunk > 1:
            chunk //= 2
        progress.update(sim.steps - steps_start if end_steps is not None else sim.t - t_start,
                        sim.steps, sim.t)
