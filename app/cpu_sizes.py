"""The sizes the window and the gallery open on a CPU (the NumPy backend).

The models' defaults are GPU sizes: on NumPy, shallow water at nx = 400 runs 3 steps/s and the
Willmore flow at nx = 128 moves t by 1e-6 a second, both look frozen. Measured on one core of
the development machine (NumPy, float64), the sizes below run at 100 to 600 steps/s and show
the dynamics within seconds, like the README's command-line examples. They apply only to what
the user did not set (a --set on the command line, a preset's own parameters), and the window
says how to go bigger."""
from __future__ import annotations

from pdestudio import solvers

# model -> {scenario or None (every scenario): {parameter: value}}; the scenario's entry wins
CPU_SIZES: dict[str, dict[str | None, dict]] = {
    "mean-curvature": {None: {"nx": 64}},
    "willmore": {None: {"nx": 32}},
    "chemotaxis": {None: {"vertices": 8000}, "tube": {"vertices": 12000}},
    "shallow-water": {None: {"nx": 100, "cells": 4000}},
    "two-layer": {None: {"cells": 4000}},
}


def cpu_params(model: str, scenario: str | None, given: dict | None) -> dict:
    """The CPU sizes for `model`/`scenario` that `given` does not set and that the model
    takes (checked against its schema, through the public API only)."""
    table = CPU_SIZES.get(model, {})
    sizes = dict(table.get(None, {}), **table.get(scenario, {}))
    known = {p["name"] for p in solvers.describe(model)["parameters"]}
    return {k: v for k, v in sizes.items() if k in known and k not in (given or {})}


def note(model: str, applied: dict) -> str:
    """What the window says about the CPU sizes it chose (HTML)."""
    defaults = {p["name"]: p["default"] for p in solvers.describe(model)["parameters"]}
    sizes = ", ".join(f"{k} = {v} (GPU default {defaults[k]})" for k, v in applied.items())
    return (f"<b>CPU sizes</b> (NumPy backend): {sizes}. To go bigger, raise them in the "
            "parameters and press Reset, or start with <tt>pdestudio --model "
            f"{model} --set {next(iter(applied))}=…</tt>; on a GPU choose backend cupy.")
