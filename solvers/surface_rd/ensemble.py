"""Ensembles of the surface reaction–diffusion models (issue 19): E members on ONE mesh that differ
in their pointwise parameters, step sizes and random initial perturbations, advanced together.

    ens = solvers.create_ensemble("gray-scott", members=[{"F": 0.03}, {"F": 0.04}],
                                  backend="cupy", dtype="float32", vertices=20_000)
    ens.advance(100.0)             # every member lands exactly on t = 100, as its solo run would
    sim = ens.member(1)            # a Simulation holding member 1 now (save, quantities, fields)

State: one (E, n) array per species, row m = member m in the mesh's internal (renumbered) order.
On CuPy with the fused kernels of scheme=paper chemotaxis and Gray–Scott, ONE launch per step
advances every member (kernels/chemotaxis.cu `*_batch`: member m = blockIdx.y, its parameters
and its step size read from small device arrays, the neighbour tables shared and read from L2);
the vertex update is the solo kernel's own device function, so every member is bit for bit its
solo run (a `gpu` test checks it). Gray–Scott on a lattice mesh (the rectangle) runs a whole
block of steps in ONE launch instead (lattice_gs.py: a member a thread-block cluster, its state
in shared memory), bit for bit its solo run too. Each member keeps its own clock: a host walk
of the landing rule of core/clock.py vectorised over the members gives each step's per-member
Δt (0 once a member has landed, stopped or diverged: its row is copied unchanged). Every CHECK
steps one reduction finds members with non-finite values (every CHECK_GRAPHS steps where the
batch replays CUDA graphs; every `check_every` steps where the batch names it, as the lattice
one does); such a member goes back to its state at the start of that block of steps, is
flagged with a reason, and stops; the others go on.

Members that agree on what the initial condition reads (the model's `initial_params` and the
seed) share one initial state, computed once.

The positive chemotaxis scheme (adaptive δt) batches too: each member keeps its own device
clock and λ slots (fused.BatchedPositive), and a block's step sizes are walked on the host as a
solo run's are. Elsewhere (NumPy, kernel=array) the members run one after another through one
template simulation (the same code as solo).
"""
from __future__ import annotations

import numpy as np

from ..core import clock
from ..core.errors import ParameterError, SimulationDiverged
from ..core.ensemble import EnsembleBase
from ..core.params import ensemble_members
from .model import choose_dt

CHECK = 64  # steps between two finiteness checks (one host synchronisation)
# the same where the batch replays CUDA graphs (launch_many): each check is a host wait that
# leaves the GPU idle while the host prepares the next block, ~4 µs a step at 64 (H200, 64
# members of 20k vertices: 21 µs a step in the kernel, 29 in a sweep); at 256 still ~1 µs a step
# (H200, float32, 20k vertices, µs a step with 256 / 1024: 32 members 10.3 / 9.3-9.5, 64 members
# 16.9 / 15.9-16.0; docs/BENCHMARKS.md, "Longer batches on small grids")
CHECK_GRAPHS = 1024


class SurfaceEnsemble(EnsembleBase):
    def __init__(self, cls, members, *, backend="auto", dtype="float64", scenario=None,
                 **common):
        members = list(members)
        self.params = ensemble_members(cls, members, scenario, common,
                                       "the mesh and the scheme")
        self.model = cls.model
        self.sim = sim = cls(backend=backend, dtype=dtype, scenario=scenario, **common,
                             **members[0])
        self.backend, self.dtype, self.xp = sim.backend, sim.dtype, sim.xp
        self.size = len(members)
        dts, rows, which = [], {k: [] for k in cls.species}, []
        first: dict = {}  # initial state's key -> its row in `rows`
        xp = sim.xp
        for m, p in enumerate(self.params):
            bound, formula = cls.stability_bound(p, sim.ops.lambda_max)
            dts.append(choose_dt(cls.model, p, bound, formula, sim.dx, sim.ops.lambda_max))
            # members that agree on what the initial condition reads share one initial state
            # (computed once: the same arrays each member's own call would give; member 0's is
            # the template simulation's, made with member 0's parameters)
            key = (("member", m) if cls.initial_params is None else
                   ("seed", p["seed"], *(p[k] for k in cls.initial_params)))
            if key not in first:
                first[key] = len(first)
                if m == 0:
                    init = [sim.state[k] for k in cls.species]
                else:
                    init = [xp.asarray(sim._internal(a), dtype=sim.dtype) for a in
                            cls.initial_condition(sim.mesh, p, np.random.default_rng(p["seed"]))]
                for k, a in zip(cls.species, init):
                    rows[k].append(a)
            which.append(first[key])
        self.dt = np.array(dts, dtype=np.float64)
        self.state = {k: xp.stack(v) for k, v in rows.items()}
        if len(first) < len(which):  # row m = its initial state's row (a gather: a new array)
            take = xp.asarray(np.array(which, dtype=np.intp))
            self.state = {k: v[take] for k, v in self.state.items()}
        self.t = np.zeros(self.size)
        self.steps = np.zeros(self.size, dtype=np.int64)
        self.diverged = np.zeros(self.size, dtype=bool)
        self.reasons = [""] * self.size
        self.stalled = np.zeros(self.size, dtype=bool)  # a device clock found non-finite rates
        self._batch = None
        if sim.kernel == "fused":
            from .fused import batched_kernel
            self._batch = batched_kernel(sim, self.params, self.dt)
        self.batched = self._batch is not None

    # ---- stepping -----------------------------------------------------------------------
    def _run(self, n, t_end):
        if self._batch is None:
            for m in range(self.size):
                if not self.diverged[m]:
                    self._solo(m, n, t_end)
            return
        done = 0
        check = (getattr(self._batch, "check_every", None)
                 or (CHECK_GRAPHS if hasattr(self._batch, "launch_many") else CHECK))
        while n is None or done < n:
            block = check if n is None else min(check, n - done)
            before = ({k: v.copy() for k, v in self.state.items()}, self.t.copy(),
                      self.steps.copy())
            if getattr(self._batch, "device_clock", False):
                taken = self._batch.run_block(self, block, t_end)
            else:
                taken = self._block(block, t_end)
            self._check(before)
            done += taken
            if taken < block:
                break

    def _block(self, count: int, t_end) -> int:
        """Up to `count` batched steps; returns how many were launched."""
        xp, real = self.xp, np.dtype(self.dtype).type
        if hasattr(self._batch, "launch_many") and self._whole_block(count, t_end):
            # every active member takes `count` whole steps of its dt: the clock walked as the
            # loop below walks it (t + dt per step), the launches replayed as CUDA graphs, and
            # no per-step host work keeping the GPU waiting
            active = ~self.diverged
            d = np.where(active, self.dt, 0.0)
            self._batch.launch_many(self.state, d.astype(real), count)
            # while the GPU works: t + d + d + ... added in order, as `count` steps add it (an
            # inactive member adds 0)
            walk = np.empty((count + 1, self.size))
            walk[0], walk[1:] = self.t, d
            self.t = np.add.accumulate(walk, axis=0)[-1]
            self.steps += active * count
            return count
        rows = []
        for _ in range(count):
            active = ~self.diverged
            if t_end is not None:
                active &= ~self._landed(t_end)
            if not active.any():
                break
            if t_end is None:
                d = np.where(active, self.dt, 0.0)
                self.t = np.where(active, self.t + d, self.t)
            else:
                # the solo clock: whole steps while dt < limit·(1 − snap), then the shortened
                # last one, which always lands (core/clock.py after_step)
                lim = t_end - self.t
                whole = self.dt < lim * (1 - clock.SNAP_RTOL)
                d = np.where(active, np.where(whole, self.dt, np.minimum(self.dt, lim)), 0.0)
                after = np.where(d >= lim * (1 - clock.SNAP_RTOL), t_end, self.t + d)
                self.t = np.where(active, after, self.t)
            self.steps += active
            rows.append(d)
        if rows and hasattr(self._batch, "launch_many"):  # runs of equal rows: CUDA graphs
            R = np.asarray(rows).astype(real)
            i = 0
            while i < len(R):
                j = i + 1
                while j < len(R) and np.array_equal(R[j], R[i]):
                    j += 1
                self._batch.launch_many(self.state, R[i], j - i)
                i = j
        elif rows:
            dts = xp.asarray(np.asarray(rows).astype(real))
            for row in dts:
                self._batch.launch(self.state, row)
        return len(rows)

    def _whole_block(self, count: int, t_end) -> bool:
        """Whether every active member's next `count` steps are whole steps of its dt (none
        shortened to land on t_end; a margin of 1e-6 relative covers the rounding of t)."""
        active = ~self.diverged
        if not active.any():
            return False
        if t_end is None:
            return True
        lim = (t_end - self.t[active]) * (1 - clock.SNAP_RTOL)
        return bool(np.all((count + 1) * self.dt[active] * (1 + 1e-6) < lim))

    def _landed(self, t_end: float) -> np.ndarray:
        return t_end - self.t <= clock.LAND_RTOL * max(1.0, abs(t_end))

    def _check(self, before) -> None:
        xp = self.xp
        ok = None
        for v in self.state.values():
            f = xp.isfinite(v).all(axis=1)
            ok = f if ok is None else ok & f
        ok = np.asarray(ok.get() if hasattr(ok, "get") else ok) & ~self.stalled
        self.stalled[:] = False
        for m in np.flatnonzero(~ok & ~self.diverged):
            state0, t0, steps0 = before
            bad = [k for k, v in self.state.items() if not bool(xp.isfinite(v[m]).all())]
            for k, v in self.state.items():
                v[m] = state0[k][m]
            t_bad = self.t[m]
            self.t[m], self.steps[m] = t0[m], steps0[m]
            self.diverged[m] = True
            self.reasons[m] = (f"{self.model}: member {m} diverged: non-finite values in "
                               f"'{bad[0] if bad else '?'}' between t = {t0[m]:.6g} and "
                               f"t = {t_bad:.6g}; its state at t = {t0[m]:.6g} is kept")

    def _install(self, m: int):
        """Put member m into the template simulation (a fresh scheme: no stale buffers)."""
        sim = self.sim
        sim.params = self.params[m]
        sim.dt = float(self.dt[m])
        sim.state = {k: v[m].copy() for k, v in self.state.items()}
        sim.t, sim.steps = float(self.t[m]), int(self.steps[m])
        sim.scheme = sim._make_scheme()
        return sim

    def _solo(self, m: int, n, t_end) -> None:
        sim = self._install(m)
        try:
            if t_end is None:
                sim.step(n)
            else:
                sim.advance(t_end)
        except SimulationDiverged as e:
            self.diverged[m] = True
            self.reasons[m] = str(e)
        for k, v in self.state.items():
            v[m] = sim.state[k]
        self.t[m], self.steps[m] = sim.t, sim.steps

    # ---- members ------------------------------------------------------------------------
    def quantities(self, m: int) -> dict[str, float]:
        """member(m).quantities() without installing member m (no scheme built; the template,
        and a Simulation that member() gave, unchanged): the same computation on the same
        copies of its rows, so the same numbers."""
        m = self._index(m)
        sim = self.sim
        return sim._quantity_floats(sim._quantities({k: v[m].copy()
                                                     for k, v in self.state.items()}))

    def all_quantities(self) -> list[dict[str, float]]:
        """[quantities(m) for every member], the same numbers, with one synchronisation: each
        member's scalars computed as quantities(m) computes them, then fetched all at once (the
        same floats: a real scalar widens to float64 exactly, on the device or here)."""
        sim = self.sim
        names = list(sim._quantity_infos())
        qs = [sim._quantities({k: v[m].copy() for k, v in self.state.items()})
              for m in range(self.size)]
        if not names or not qs:
            return [{} for _ in qs]
        xp = self.xp
        flat = sim._be.asnumpy(xp.stack([xp.asarray(q[n]).reshape(()) for q in qs
                                         for n in names])).astype(np.float64)
        vals = flat.reshape(len(qs), len(names))
        return [{n: float(v) for n, v in zip(names, row)} for row in vals]

    def _index(self, m) -> int:
        if not (isinstance(m, (int, np.integer)) and 0 <= m < self.size):
            raise ParameterError(f"{self.model}: ensemble member {m!r}; allowed: "
                                 f"0..{self.size - 1}")
        return int(m)

    def member(self, m: int):
        """A Simulation holding member m's current state, clock and parameters (the ensemble's
        template simulation, reloaded: valid until the next call). Save it, ask its quantities
        or fields, or step it on alone."""
        return self._install(self._index(m))

    def __repr__(self) -> str:
        return (f"<SurfaceEnsemble {self.model} x{self.size} {self.backend} {self.dtype} "
                f"{'batched' if self.batched else 'one after another'}>")
