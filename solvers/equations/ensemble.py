"""Ensembles of model files (docs/EQUATIONS.md): E members on one geometry that differ in the
model file's own parameters, `seed`, `dt` and `cfl` (describe()["ensemble"]), created by
`solvers.create_ensemble(model_id, members, ...)` and run by `pdestudio sweep FILE.toml --vary
...` as one task per group of members.

The members share one template simulation (the geometry, the operators and, on the GPU, the
compiled kernels are built once); each keeps its own state (row m of one (E, n) array per
species), clock, step size and stable bound as its solo run computed them at creation.

Batched (CuPy, kernel=fused, an explicit integrator without a positive edge flux): ONE launch
of the generated `eq_stage_batch` per stage advances every member (codegen.py: member m =
blockIdx.y, its rows of the species and accumulators, its row of the parameter array `P`
(E × the model's parameters, every one a runtime scalar as in the solo kernel) and its stage
scalars t, t_out, a2·Δt, b·Δt from a small (E, 4) device array per stage); the node's
arithmetic is eq_stage's text for text, so every member is bit for bit its solo fused run. Each
member keeps its own clock: the landing rule of core/clock.py walked on the host, vectorised
over the members (a block of steps at a time), gives each step's per-member Δt; a member that
has landed or stopped is inactive in that step (its row copied unchanged). Every
`check_interval` steps one reduction finds the members with non-finite values: such a member
goes back to the start of that block and is replayed alone through the template's solo scheme,
which stops it at the failing step with its solo run's reason and state; the others go on.

Elsewhere (NumPy, kernel=array, integrator=imex, the positive flux's adaptive step) the members
advance one after another through the template's scheme, so they too are bit for bit their
solo runs; a member that diverges keeps its state from before the failing step, is flagged with
the reason and stops.
"""
from __future__ import annotations

import numpy as np

from ..core import clock
from ..core.errors import ParameterError, SimulationDiverged
from ..core.ensemble import EnsembleBase
from ..core.params import ensemble_members
from . import scenarios
from .reference import TABLEAUS, Evaluator

MAX_MEMBERS = 65535  # members of one batched launch (its grid's y dimension)


def batchable(sim) -> bool:
    """Whether `sim`'s scheme has the batched stage kernel (module docstring)."""
    return (sim.kernel == "fused" and not sim.transports
            and sim.params["integrator"] in TABLEAUS)


class EquationEnsemble(EnsembleBase):
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
        rows, self._dt = {s: [] for s in sim.species}, []
        ev = Evaluator(np, np.float64)
        geometry = scenarios.geometry_numbers(sim.params)
        for p in self.params:  # each member's initial state and step, as its solo run's
            user = {k: float(p[k]) for k in sim.definition.parameters}
            init = scenarios.initial_state(sim.definition, user, sim.coords, sim.shape,
                                           p["seed"], ev, geometry)
            state = {s: sim.xp.asarray(init[s], dtype=sim.dtype) for s in sim.species}
            sim.params, sim.state = p, dict(state)
            sim._params_changed()
            for s in sim.species:
                rows[s].append(state[s].reshape(-1))
            self._dt.append((sim.dt, sim.dt_max))
        self.state = {s: sim.xp.stack(v) for s, v in rows.items()}  # (E, n), C-contiguous
        self.t = np.zeros(self.size)
        self.steps = np.zeros(self.size, dtype=np.int64)
        self.diverged = np.zeros(self.size, dtype=bool)
        self.reasons = [""] * self.size
        self._installed = None
        self._solo_scheme = None  # how a member is stepped alone (None: sim._make_scheme)
        self._batch = None
        if batchable(sim) and self.size <= MAX_MEMBERS:
            self._start_batched()

    def _start_batched(self, xp=None, kernels=None, solo_scheme=None) -> None:
        """The batched driver; `xp`, `kernels` and `solo_scheme` default to CuPy, the compiled
        module and the template's own scheme (the CPU harness of the tests passes NumPy, the
        same source built by g++ and its solo twin)."""
        sim = self.sim
        if sim.transports or sim.params["integrator"] not in TABLEAUS:
            raise ValueError(f"{self.model}: the batched stages need an explicit integrator "
                             "without a positive edge flux")
        self._batch = BatchedStages(self, xp, kernels)
        self._solo_scheme = solo_scheme

    @property
    def batched(self) -> bool:
        return self._batch is not None

    @property
    def dt(self) -> np.ndarray:
        return np.array([d for d, _ in self._dt])

    # ---- stepping -----------------------------------------------------------------------
    def _run(self, n, t_end):
        if self._batch is not None:
            return self._run_batched(n, t_end)
        for m in range(self.size):
            if not self.diverged[m]:
                self._solo(m, n, t_end)

    def _solo(self, m: int, n, t_end) -> None:
        """Member m alone through the template's scheme (n steps, at most n towards t_end)."""
        sim = self._install(m)
        try:
            if t_end is None:
                sim.step(n)
            else:
                sim.advance(t_end, max_steps=n)
        except SimulationDiverged as e:
            self.diverged[m] = True
            self.reasons[m] = str(e)
        self._keep(m)

    def _run_batched(self, n, t_end) -> None:
        self._refuse_stuck(t_end)
        check = self.sim.check_interval
        done = 0
        while n is None or done < n:
            block = check if n is None else min(check, n - done)
            before = ({k: v.copy() for k, v in self.state.items()}, self.t.copy(),
                      self.steps.copy())
            taken = self._block(block, t_end)
            if taken == 0:
                break
            self._check(before, t_end)
            done += taken

    def _active(self, t, t_end) -> np.ndarray:
        active = ~self.diverged
        if t_end is not None:
            active &= ~(t_end - t <= clock.LAND_RTOL * max(1.0, abs(t_end)))
        return active

    def _refuse_stuck(self, t_end) -> None:
        """A solo run's refusal of steps that cannot move its clock (core/clock.py)."""
        dt = self.dt
        for m in np.flatnonzero(self._active(self.t, t_end)):
            lim = clock.limit(float(self.t[m]), t_end)
            if not clock.moves(float(self.t[m]), min(dt[m], lim or dt[m])):
                raise clock.stuck(self.model, float(self.t[m]), float(dt[m]))

    def _block(self, count: int, t_end) -> int:
        """Up to `count` batched steps: the members' clocks walked on the host as their solo
        runs walk them (Simulation._steps_unchecked, clock.after_step), then the launches."""
        dt = self.dt
        t, times, sizes, flags = self.t.copy(), [], [], []
        for _ in range(count):
            active = self._active(t, t_end)
            if not active.any():
                break
            if t_end is None:
                d = dt
                after = t + d
            else:
                lim = t_end - t
                d = np.minimum(dt, lim)
                after = np.where(d >= lim * (1 - clock.SNAP_RTOL), t_end, t + d)
            times.append(t)
            sizes.append(np.where(active, d, 0.0))
            flags.append(active)
            t = np.where(active, after, t)
            self.steps += active
        if times:
            self._batch.run(self.state, np.array(times), np.array(sizes), np.array(flags))
        self.t = t
        return len(times)

    def _check(self, before, t_end) -> None:
        """Members with non-finite values after a block: back to the block's start, then
        replayed alone (their solo run's stop, reason and kept state)."""
        xp = self.xp
        ok = None
        for v in self.state.values():
            f = xp.isfinite(v).all(axis=1)
            ok = f if ok is None else ok & f
        ok = np.asarray(ok.get() if hasattr(ok, "get") else ok)
        state0, t0, steps0 = before
        for m in np.flatnonzero(~ok & ~self.diverged):
            k = int(self.steps[m] - steps0[m])
            for s, v in self.state.items():
                v[m] = state0[s][m]
            self.t[m], self.steps[m] = t0[m], steps0[m]
            self._solo(m, k, t_end)

    # ---- members ------------------------------------------------------------------------
    def _install(self, m: int):
        """Member m into the template simulation (its parameters, state, clock and step)."""
        if self._installed is not None and self._installed != m:
            self._keep(self._installed)
        sim = self.sim
        sim.params = self.params[m]
        sim.user_params = {k: float(sim.params[k]) for k in sim.definition.parameters}
        sim.state = {s: v[m].reshape(sim.shape).copy() for s, v in self.state.items()}
        sim.t, sim.steps = float(self.t[m]), int(self.steps[m])
        sim.dt, sim.dt_max = self._dt[m]
        sim.scheme = self._solo_scheme(sim) if self._solo_scheme else sim._make_scheme()
        self._installed = m
        return sim

    def _keep(self, m: int) -> None:
        sim = self.sim
        for s, v in self.state.items():
            v[m] = sim.state[s].reshape(-1)
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
                f"{'batched' if self.batched else 'one after another'}>")


class BatchedStages:
    """eq_stage_batch on the ensemble's (E, n) arrays (module docstring): per step one launch
    per stage for every member, the stages ping-ponging between two buffer sets as in
    fused.FusedEquations.step, the state rebound to the last one."""

    def __init__(self, ens: EquationEnsemble, xp=None, kernels=None):
        from .fused import BLOCK, compile_kernels, device_geometry
        sim = ens.sim
        if xp is None:
            import cupy as xp
        self.xp, self.sim, self.block = xp, sim, BLOCK
        self.k = kernels if kernels is not None else compile_kernels(sim, batched=True)
        self.geo, n = device_geometry(sim, xp)
        names = tuple(sim.definition.parameters)
        rows = np.array([[float(p[k]) for k in names] or [0.0] for p in ens.params])
        self.P = xp.ascontiguousarray(xp.asarray(rows, dtype=sim.real))  # as the solo P
        self.np = np.int32(rows.shape[1])
        self.grid = ((n + BLOCK - 1) // BLOCK, ens.size)
        self.stages = TABLEAUS[sim.params["integrator"]]
        shape = (ens.size, n)
        self.buffers = [{s: xp.empty(shape, dtype=sim.dtype) for s in sim.species}
                        for _ in range(2)]
        self.acc = {s: xp.zeros(shape, dtype=sim.dtype) for s in sim.species}

    def scalars(self, times, sizes) -> np.ndarray:
        """(steps, stages, E, 4) of t + c·Δt, t_out, a2·Δt, b·Δt: fused.FusedEquations.step's
        host arithmetic in float64, then the real type, per member."""
        st = self.stages
        out = np.empty((len(times), len(st), times.shape[1], 4))
        for i, (c, a0, a1, a2, a3, b) in enumerate(st):
            nxt = st[i + 1][0] if i + 1 < len(st) else 1.0
            out[:, i, :, 0] = times + c * sizes
            out[:, i, :, 1] = times + nxt * sizes
            out[:, i, :, 2] = a2 * sizes
            out[:, i, :, 3] = b * sizes
        return out.astype(self.sim.real)

    def run(self, state: dict, times, sizes, flags) -> None:
        """len(times) steps; row q of `times`, `sizes`, `flags`: each member's t, Δt and
        whether it steps (host arrays, one upload for the block)."""
        xp, real, species = self.xp, self.sim.real, self.sim.species
        S = xp.asarray(self.scalars(times, sizes))
        act = xp.asarray(flags.astype(np.uint8))
        kern = self.k["eq_stage_batch"]
        for q in range(len(times)):
            U = dict(state)
            Y = U
            for i, (c, a0, a1, a2, a3, b) in enumerate(self.stages):
                out = self.buffers[0] if Y is not self.buffers[0] else self.buffers[1]
                args = []
                for s in species:
                    args += [Y[s], U[s], out[s], self.acc[s]]
                kern(self.grid, (self.block,), tuple(args) + (
                    self.P, self.np, S[q, i], act[q], real(a0), real(a1), real(a3),
                    np.int32(i == 0)) + self.geo)
                Y = out
            state.update(Y)
            # the old state's arrays become a free buffer set
            self.buffers[0 if Y is self.buffers[0] else 1] = U
