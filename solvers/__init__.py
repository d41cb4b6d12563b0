"""pdestudio's numerical library: the public API of docs/MODELS.md §0 and nothing else. Imports no Qt.

    from pdestudio import solvers
    sim = solvers.create("heat-1d", backend="auto", dtype="float64", nx=4096)

Everything the app needs is here or on `Simulation`: the models and their schemas
(`available_models`, `describe`, `validate`, `check_param`), the choices of backend and real type
(`BACKENDS`, `DTYPES`), simulations (`create`, `load`), frames of device arrays for drawing
(`Simulation.device_fields`, and their float32 copies with ranges: `float32_frame`) and the
errors."""
from __future__ import annotations

from .core import checkpoint as _checkpoint
from .core.backend import BACKENDS, DTYPES, gpu_available, gpu_status
from .core.errors import MeshError, ParameterError, SimulationDiverged
from .core.files import atomic_write, sync_all
from .core.params import validate_all
from .core.registry import available_models, model_class
from .core.simulation import Simulation, Snapshot

__all__ = ["available_models", "describe", "validate", "check_param", "create", "define",
           "check_model", "model_latex",
           "create_ensemble", "load", "mpi_world", "Simulation", "Snapshot", "ParameterError",
           "MeshError", "SimulationDiverged", "gpu_available", "gpu_status", "BACKENDS", "DTYPES",
           "atomic_write", "sync_all", "float32_frame", "frame_scratch"]


def float32_frame(arrays: dict, into: dict, ranges, scratch) -> dict:
    """A frame of the live view on the GPU: float32 copies of CuPy `arrays` (e.g. from
    `Simulation.device_fields`) into `into` and each one's finite (min, max) into `ranges`,
    queued on the current stream, one launch a field (core/frame.py has the details)."""
    from .core.frame import float32_frame as _frame
    return _frame(arrays, into, ranges, scratch)


def frame_scratch(fields: int):
    """The device scratch `float32_frame` needs for `fields` fields."""
    from .core.frame import frame_scratch as _scratch
    return _scratch(fields)


def define(path_or_dict) -> str:
    """Register the model of a model file (a path to a .toml file, TOML text, or the same
    content as a dict; docs/EQUATIONS.md) and return its model id for `create`. Defining the same
    name again replaces the earlier definition. A bad file raises ParameterError naming the
    section, the key and the column."""
    from .core.registry import define as _define
    return _define(path_or_dict)


def check_model(path_or_dict) -> list[dict]:
    """Every problem of a model file as {message, section, key, column}; [] when it is good.
    Never raises for bad content (the model editor shows the problems in place)."""
    from .equations import check_model as _check
    return _check(path_or_dict)


def model_latex(path_or_dict) -> dict:
    """{species (and algebraic species): LaTeX of its right-hand side} of a model file."""
    from .equations import model_latex as _latex
    return _latex(path_or_dict)


def describe(model: str) -> dict:
    """The model's schema: parameters (name, type, default, range/choices, unit, help),
    scenarios and fields (with the default field and the surfaces drawn together), and
    `size_param`, the parameter that sets the problem size. The GUI's panels are built from it."""
    return model_class(model).describe()


def validate(model: str, scenario: str | None = None, **params) -> dict:
    """Every parameter of `model` (and `scenario`) validated as `create` would, defaults filled
    in, without building anything; raises ParameterError naming the item and the allowed range."""
    cls = model_class(model)
    sc = cls.scenario(scenario)
    p = validate_all(cls.schema(sc.name), params, model)
    cls._check_params(p)
    return p


def check_param(model: str, name: str, value, scenario: str | None = None):
    """One parameter value of `model` converted to its type and checked against its range (the
    cross-parameter constraints are checked by `validate`/`create`)."""
    schema = model_class(model).schema(model_class(model).scenario(scenario).name)
    if name not in schema:
        raise ParameterError(f"{model}: unknown parameter '{name}'; known parameters: "
                             + ", ".join(schema))
    return schema[name].validate(value, model)


def create(model: str, *, backend: str = "auto", dtype: str = "float64",
           scenario: str | None = None, comm=None, **params) -> Simulation:
    """A new simulation of `model` (see available_models()) on `backend` ("auto" | "numpy" |
    "cupy"); `sim.backend` says which backend was picked. `comm` (an mpi4py communicator, e.g.
    MPI.COMM_WORLD, called on every rank): the grid decomposed over its ranks, one GPU per rank
    (docs/DISTRIBUTED.md); a model that cannot be decomposed raises ParameterError."""
    if comm is not None:
        from .core import decomp
        return decomp.create(model_class(model), comm, backend=backend, dtype=dtype,
                             scenario=scenario, **params)
    return model_class(model)(backend=backend, dtype=dtype, scenario=scenario, **params)


def mpi_world():
    """MPI.COMM_WORLD (mpi4py) for `create(..., comm=)` and `load(..., comm=)` in a process
    started by mpirun/mpiexec/srun; ParameterError saying how to start one otherwise, or what to
    install when mpi4py is missing (docs/DISTRIBUTED.md)."""
    from .core.decomp_comm import mpi_world as _world
    return _world()


def create_ensemble(model: str, members, *, backend: str = "auto", dtype: str = "float64",
                    scenario: str | None = None, **common):
    """E simulations of `model` on one mesh, member i with the parameters `common` updated by
    `members[i]` (a list of dicts of the parameters `describe(model)["ensemble"]` names: the
    others are shared). `ens.step(n)`, `ens.advance(t_end)`, `ens.t`, `ens.steps`,
    `ens.diverged`, `ens.reasons`, `ens.member(i)` (a Simulation holding member i). On the GPU
    the surface reaction–diffusion members advance in one kernel launch per step, each bit for
    bit its solo run. A model without ensembles raises ParameterError."""
    return model_class(model).ensemble(members, backend=backend, dtype=dtype, scenario=scenario,
                                       **common)


def load(path, backend: str = "auto", *, model: str | None = None, comm=None) -> Simulation:
    """Restore a checkpoint written by `sim.save(path)` (with or without include_fields);
    continuing gives the same results as an uninterrupted run on the same backend. `model`, when
    given, is the model the file must hold. Anything wrong with the file (not a checkpoint,
    truncated, modified, another model's, a newer format, bad values) raises ParameterError
    naming the file and the problem; nothing in it is ever executed (see core/checkpoint.py).
    `comm`: continued decomposed over its ranks (any number, whatever wrote the file)."""
    if comm is not None:
        from .core import decomp
        return decomp.load(path, comm, backend=backend, model=model)
    return _checkpoint.load(path, backend=backend, model=model)
