"""Unstructured first-order finite volumes on triangle meshes, written once with `xp` (NumPy or
CuPy): the float64 reference, the CPU backend and the GPU `array` path ([P2], [P4]; docs/MODELS.md
§3.3–3.4). One or two layers, the edge fluxes of riemann.py on the edge tables of tables.py.

One explicit step W ← W − Δt/|V| Σ |E| D over the state W (nv, M) in the internal numbering
(nv = 3 per layer: h, qx, qy), in place. The time step (eq. (3)): Δt = min_i 2 δ |V_i| /
Σ_j |E_ij| max_k |λ_ij,k| over the current state (the same-step form of docs/MODELS.md [P2]; [P4] lags
it one step to fuse kernels). With `eigen_precision = float64` on a float32 state the per-edge
work runs in float64 (docs/MODELS.md [P2]'s mixed precision).

One layer with `shock_fix` (the default): the shock sensor of riemann.py, S_i = max over the
three edges of cell i of the compression max(0, un_L − un_R) (per edge first, then the maximum
over each cell's slots), and ν = shock_nu(S_L, S_R) into the flux: the carbuncle cure.
"""
from __future__ import annotations

import numpy as np

from ...core.scheme import SchemeBase
from ..riemann import FLUXES, compression, rotate, shock_nu


class TriReference(SchemeBase):
    def __init__(self, sim):
        super().__init__(sim)
        t, xp, p = sim.tables, sim.xp, sim.params
        self.t, self.xp, self.layers = t, xp, sim.layers
        self.nv = 3 * sim.layers
        self.flux = FLUXES[sim.layers, p["scheme"]]
        self.g, self.r = p["g"], p.get("r", 0.0)
        self.dtype = np.dtype(sim.dtype)
        self.eig_dtype = np.dtype("float64" if p.get("eigen_precision") == "float64"
                                  else sim.dtype)
        f = lambda a, d=self.dtype: xp.asarray(a, dtype=d)  # noqa: E731
        self.L = xp.asarray(t.edge_l.astype(np.int64))
        rr = t.edge_r.astype(np.int64)
        self.wall = xp.asarray(rr < 0)
        self.Rc = xp.asarray(np.where(rr >= 0, rr, t.edge_l))
        self.inner = xp.asarray(np.flatnonzero(rr >= 0))
        self.nx, self.ny, self.len = f(t.nx), f(t.ny), f(t.length)
        self.area = f(t.area)
        self.shock_fix = sim.layers == 1 and bool(p.get("shock_fix", False))
        m = t.n_cells
        sl, sr = t.slot_l.astype(np.int64), t.slot_r.astype(np.int64)
        self.pos_l = xp.asarray(sl * m + t.edge_l)
        self.pos_r = xp.asarray((sr * m + rr)[rr >= 0])
        self.acc = xp.zeros((self.nv, 3 * m), dtype=self.dtype)
        self.sacc = xp.zeros(3 * m, dtype=self.dtype)
        self.sens = xp.zeros(3 * m, dtype=self.eig_dtype)

    def sensor_nu(self, WL, WR, nx, ny):
        """ν of every edge from the cells' shock sensors (riemann.py: S_i = the largest
        compression max(0, un_L − un_R) over the edges of cell i; walls: un_R = −un_L)."""
        xp = self.xp
        qnL = rotate(WL[1], WL[2], nx, ny)[0]
        qnR = xp.where(self.wall, -qnL, rotate(WR[1], WR[2], nx, ny)[0])
        hR = xp.where(self.wall, WL[0], WR[0])
        e = compression(xp, WL[0], qnL, hR, qnR)
        self.sens[self.pos_l] = e
        self.sens[self.pos_r] = e[self.inner]
        S = self.sens.reshape(3, self.t.n_cells).max(axis=0)
        return shock_nu(xp, S[self.L], S[self.Rc])

    def fluctuations(self, W, H):
        """Per-edge contributions DL, DR (nv, E) and wave speeds (E,)."""
        ed = self.eig_dtype
        c = (lambda a: a.astype(ed)) if ed != self.dtype else (lambda a: a)  # noqa: E731
        WL = tuple(c(W[k][self.L]) for k in range(self.nv))
        WR = tuple(c(W[k][self.Rc]) for k in range(self.nv))
        nx, ny = c(self.nx), c(self.ny)
        kw = {"nu": self.sensor_nu(WL, WR, nx, ny)} if self.shock_fix else {}
        DL, DR, s = self.flux(self.xp, WL, WR, c(H[self.L]), c(H[self.Rc]), nx, ny, self.wall,
                              self.g, self.r, **kw)
        back = lambda a: a.astype(self.dtype)  # noqa: E731
        return [back(d) for d in DL], [back(d) for d in DR], back(s)

    def step(self, t, dt_limit):
        xp, W, H = self.xp, self.sim.W, self.sim.state["H"]
        cfl = self.sim.params["cfl"]
        DL, DR, s = self.fluctuations(W, H)
        m = self.t.n_cells
        ln = self.len
        for k in range(self.nv):
            self.acc[k][self.pos_l] = DL[k] * ln
            self.acc[k][self.pos_r] = (DR[k] * ln)[self.inner]
        self.sacc[self.pos_l] = s * ln
        self.sacc[self.pos_r] = (s * ln)[self.inner]
        ssum = self.sacc.reshape(3, m).sum(axis=0)
        dts = 2 * cfl * self.area / ssum  # NaN cells: the finiteness check (no All-NaN warning)
        dt = float(xp.where(xp.isnan(dts), xp.inf, dts).min())
        if dt_limit is not None:
            dt = min(dt, dt_limit)
        tot = self.acc.reshape(self.nv, 3, m).sum(axis=1)
        W -= (self.dtype.type(dt) / self.area) * tot
        return dt
