"""Ensembles of model files (docs/EQUATIONS.md): E members on one geometry that differ in the
model file's own parameters, `seed`, `dt` and `cfl` (describe()["ensemble"]), created by
`solvers.create_ensemble(model_id, members, ...)` and run by `pdestudio sweep FILE.toml --vary
...` as one task per group of members.

The members share one template simulation (the geometry, the operators and, on the GPU, the
compiled kernels are built once); each keeps its own state, clock, step size and stable bound as
its solo run computed them at creation, and advances through the template's scheme in turn
(NumPy, or CuPy with the fused kernels or the array path), so every member is bit for bit its
solo run. A member that diverges keeps its state from before the failing step, is flagged with
the reason and stops; the others go on.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ParameterError, SimulationDiverged
from ..core.ensemble import EnsembleBase
from ..core.params import ensemble_members
from . import scenarios
from .reference import Evaluator


class EquationEnsemble(EnsembleBase):
    batched = False  # the members advance one after another (module docstring)

    def __init__(self, cls, members, *, backend="auto", dtype="float64", scenario=None,
                 **common):
        members = list(members)
        self.params = ensemble_members(cls, members, scenario, common,
                                       "the geometry and the scheme")
        self.model = cls.model
        self.sim = sim = cls(backend=backend, dtype=dtype, scenario=scenario,
                             **{**common, **members[0]})
        self.backend, self.dtype, self.xp = sim.backend, sim.dtype, sim.xp
        self.size = len(members)
        self._states, self._dt = [], []
        ev = Evaluator(np, np.float64)
        geometry = scenarios.geometry_numbers(sim.params)
        for p in self.params:  # each member's initial state and step, as its solo run's
            user = {k: float(p[k]) for k in sim.definition.parameters}
            init = scenarios.initial_state(sim.definition, user, sim.coords, sim.shape,
                                           p["seed"], ev, geometry)
            state = {s: sim.xp.asarray(init[s], dtype=sim.dtype) for s in sim.species}
            sim.params, sim.state = p, dict(state)
            sim._params_changed()
            self._states.append(state)
            self._dt.append((sim.dt, sim.dt_max))
        self.t = np.zeros(self.size)
        self.steps = np.zeros(self.size, dtype=np.int64)
        self.diverged = np.zeros(self.size, dtype=bool)
        self.reasons = [""] * self.size
        self._installed = None

    @property
    def dt(self) -> np.ndarray:
        return np.array([d for d, _ in self._dt])

    def _run(self, n, t_end):
        for m in range(self.size):
            if self.diverged[m]:
                continue
            sim = self._install(m)
            try:
                if t_end is None:
                    sim.step(n)
                else:
                    sim.advance(t_end)
            except SimulationDiverged as e:
                self.diverged[m] = True
                self.reasons[m] = str(e)
            self._keep(m)

    def _install(self, m: int):
        """Member m into the template simulation (its parameters, state, clock and step)."""
        if self._installed is not None and self._installed != m:
            self._keep(self._installed)
        sim = self.sim
        sim.params = self.params[m]
        sim.user_params = {k: float(sim.params[k]) for k in sim.definition.parameters}
        sim.state = {k: v.copy() for k, v in self._states[m].items()}
        sim.t, sim.steps = float(self.t[m]), int(self.steps[m])
        sim.dt, sim.dt_max = self._dt[m]
        sim.scheme = sim._make_scheme()
        self._installed = m
        return sim

    def _keep(self, m: int) -> None:
        sim = self.sim
        self._states[m] = {k: v.copy() for k, v in sim.state.items()}
        self.t[m], self.steps[m] = sim.t, sim.steps
        self._installed = None

    def member(self, m: int):
        """A Simulation holding member m's current state, clock and parameters (the template,
        reloaded: valid until the next call)."""
        if not (isinstance(m, (int, np.integer)) and 0 <= m < self.size):
            raise ParameterError(f"{self.model}: ensemble member {m!r}; allowed: "
                                 f"0..{self.size - 1}")
        sim = self._install(int(m))
        self._installed = None  # the caller may step it: not written back
        return sim

    def __repr__(self) -> str:
        return (f"<EquationEnsemble {self.model} x{self.size} {self.backend} {self.dtype} "
                "one after another>")
