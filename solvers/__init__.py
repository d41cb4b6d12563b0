"""pdestudio's numerical library: the public API of SPEC §0 and nothing else. Imports no Qt."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .core.backend import gpu_available, gpu_status
from .core.errors import MeshError, ParameterError, SimulationDiverged
from .core.registry import available_models, model_class
from .core.simulation import Simulation

__all__ = ["available_models", "describe", "create", "load", "Simulation", "ParameterError",
           "MeshError", "SimulationDiverged", "gpu_available", "gpu_status"]


def describe(model: str) -> dict:
    """The model's schema: parameters (name, type, default, range/choices, unit, help),
    scenarios and fields. The GUI's panels are built from it."""
    return model_class(model).describe()


def create(model: str, *, backend: str = "auto", dtype: str = "float64",
           scenario: str | None = None, **params) -> Simulation:
    """A new simulation of `model` (see available_models()) on `backend` ("auto" | "numpy" |
    "cupy"); `sim.backend` says which backend was picked."""
    return model_class(model)(backend=backend, dtype=dtype, scenario=scenario, **params)


def load(path, backend: str = "auto") -> Simulation:
    """Restore a checkpoint written by `sim.save(path)`; continuing gives the same results as an
    uninterrupted run on the same backend."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
            arrays = {k: z[k] for k in z.files if k.startswith("state/")}
    except FileNotFoundError:
        raise ParameterError(f"checkpoint '{path}' does not exist") from None
    except (OSError, ValueError, KeyError) as e:
        raise ParameterError(f"checkpoint '{path}' is not a pdestudio checkpoint (.npz): {e}") \
            from None
    for key in ("model", "scenario", "dtype", "params", "t", "steps"):
        if key not in meta:
            raise ParameterError(f"checkpoint '{path}' lacks '{key}'")
    sim = create(meta["model"], backend=backend, dtype=meta["dtype"], scenario=meta["scenario"],
                 **meta["params"])
    sim._load_state(meta, arrays)
    return sim
