"""What a simulation declares and hands out besides its state: field and quantity declarations,
snapshots, and the divergence raised at a physical bound (re-exported by core/simulation.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import SimulationDiverged


class BoundViolated(SimulationDiverged):
    """A step took a field below its physical lower bound (a density < 0, a pressure <= 0), the
    first sign of a divergence, long before any value is non-finite. The state from before that
    step, where every bound holds, is kept."""

    def __init__(self, model: str, t: float, step: int, field: str, low: float, lo: float,
                 lo_open: bool, advice: str | None = None):
        super().__init__(model, t, step, field, advice)
        self.low, self.lo, self.lo_open = low, lo, lo_open
        rel = ">" if lo_open else ">="
        self.args = (f"{model}: field '{field}' fell to {low:.6g} in step {step + 1} (from t = "
                     f"{t:.6g}), below its bound ({field} {rel} {lo:g}); the state from before "
                     f"that step (step {step}, t = {t:.6g}), where every bound holds, is kept. "
                     + self.advice,)

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class FieldInfo:
    """Where a field lives ('node', 'cell', 'vertex'), its unit, a suggested colour range
    (None = from the data), a line of help, and whether `set_field` accepts it."""

    location: str
    unit: str = ""
    help: str = ""
    range: tuple[float, float] | None = None
    settable: bool = True
    lo: float | None = None  # values must be >= lo (or > lo if lo_open), e.g. a depth
    lo_open: bool = False
    # while stepping, how far below lo a field may go before the run stops (a scheme that is not
    # positivity-preserving may undershoot a little and stay bounded); 0: not at all
    undershoot: float = 0.0

    def describe(self, name: str) -> dict:
        return {"name": name, "location": self.location, "unit": self.unit, "help": self.help,
                "range": list(self.range) if self.range else None, "settable": self.settable}


@dataclass(frozen=True)
class QuantityInfo:
    """A scalar a model declares (`Simulation.quantities`): its unit and a line of help."""

    unit: str = ""
    help: str = ""

    def describe(self, name: str) -> dict:
        return {"name": name, "unit": self.unit, "help": self.help}


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The whole state of a simulation at one moment (`Simulation.snapshot`): copies of the
    state arrays on the simulation's backend (device memory on the GPU), the clock, the scheme's
    auxiliary scalars and the parameters. `nbytes` is what it holds."""

    model: str
    backend: str
    dtype: str
    state: Mapping[str, Any]
    t: float
    steps: int
    aux: str
    params: Mapping[str, Any]

    @property
    def nbytes(self) -> int:
        return int(sum(int(a.nbytes) for a in self.state.values()))

    def state_for(self, sim) -> dict:
        """Copies of this snapshot's state as `sim`'s arrays (its backend and dtype), after
        checking that they fit it: a ParameterError naming what does not (Simulation.restore)."""
        from .errors import ParameterError
        if self.model != sim.model:
            raise ParameterError(f"{sim.model}: snapshot is of model '{self.model}'")
        if set(self.state) != set(sim.state):
            raise ParameterError(f"{sim.model}: snapshot holds state "
                                 f"{sorted(self.state)}, this simulation {sorted(sim.state)}")
        for k, a in self.state.items():
            if tuple(a.shape) != tuple(sim.state[k].shape):
                raise ParameterError(f"{sim.model}: snapshot state '{k}' has shape "
                                     f"{tuple(a.shape)}, this simulation {tuple(sim.state[k].shape)}")
        state = {}
        for k, a in self.state.items():
            if self.backend != sim.backend:
                a = sim.xp.asarray(a.get() if hasattr(a, "get") else a)
            cur = sim.state[k]
            state[k] = a.astype(cur.dtype) if a.dtype != cur.dtype else a.copy()
        return state


__all__ = ["BoundViolated", "FieldInfo", "QuantityInfo", "Snapshot"]
