"""integrator=imex for model files (docs/EQUATIONS.md): the constant-coefficient lap terms c·lap(s)
of a species' own equation implicit (I(s) = c·L₀ s), everything else explicit (E), by the
second-order, L-stable IMEX Runge–Kutta scheme ARS(2,2,2) of Ascher, Ruuth & Spiteri (1997),
γ = 1 − 1/√2, δ = 1 − 1/(2γ):

    (I − γ·dt·c·L₀) U₂ = s + γ·dt·E(s)
    (I − γ·dt·c·L₀) U₃ = s + dt·(δ·E(s) + (1 − δ)·E(U₂)) + (1 − γ)·dt·I(U₂),   s⁺ = U₃

with I(U₂) = (U₂ − rhs₂)/(γ·dt) from the first solve (no extra product), both solves with the
same matrix. `imex1` is the first-order semi-implicit Euler, (I − dt·c·L₀) s⁺ = s + dt·E(s);
`imex3` the third-order ARS(3,4,3) of the same paper (three solves a step, γ ≈ 0.4359; its
explicit part is not stiffly accurate: one more evaluation of E at the last stage), `imex443` its
ARS(4,4,3) (four solves, γ = 1/2; on Schnakenberg 4–5× further from the converged pattern than
ARS(3,4,3) at the same step, docs/EQUATIONS.md). All are one table each in ARS, run by one loop.
A one-step scheme: a changed step (an adaptive step, the last step onto an end time), a brush
stroke or a restart from a checkpoint need no history.

L₀ is the Laplacian with homogeneous boundary conditions (the boundary values' contributions,
lap(s) − L₀ s, stay in the explicit part, so the scheme is consistent for any boundary). The
explicit step is bounded by the remaining diffusion only.

Solves: cell-centred grids diagonalise L₀ per axis with fast transforms (scipy.fft / cupyx):
periodic rFFT, Neumann–Neumann DCT-II, Dirichlet–Dirichlet DST-II, Dirichlet–Neumann DST-IV,
Neumann–Dirichlet DCT-IV, eigenvalues −(2 − 2cos θ_k)/h². Vertex grids and meshes solve the
sparse system: on meshes the symmetric form (A + dt·c·K) s⁺ = A·rhs (A the mixed areas, K the
cotangent stiffness), Dirichlet vertices eliminated. A lattice mesh without Dirichlet vertices
(the generated rectangle: the 5-point Laplacian, solvers/mesh/lattice.py) solves by type-I cosine
transforms on either backend. Any other mesh: on the CPU a sparse LU factorisation
(SuperLU, minimum-degree ordering of A + Aᵀ), made once per (species, dt·c) and reused
by every solve; on the GPU conjugate gradients with a Jacobi preconditioner (cupyx.scipy.sparse).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .reference import ExplicitReference

TRANSFORMS = {("P", "P"): None, ("N", "N"): ("dct", 2, 0.0), ("D", "D"): ("dst", 2, 1.0),
              ("D", "N"): ("dst", 4, 0.5), ("N", "D"): ("dct", 4, 0.5)}


ARS_GAMMA = 1.0 - 1.0 / np.sqrt(2.0)
ARS_DELTA = 1.0 - 1.0 / (2.0 * ARS_GAMMA)
# (c, implicit A, explicit Â[, explicit weights b̂]) of the IMEX Runge–Kutta schemes of Ascher,
# Ruuth & Spiteri (1997) with an explicit first stage and a constant implicit diagonal (one
# matrix per step); without b̂ the last stage is the new state
_G, _D = ARS_GAMMA, ARS_DELTA
ARS = {
    "imex1": ((0.0, 1.0), ((), (0.0, 1.0)), ((), (1.0,))),
    "imex": ((0.0, _G, 1.0), ((), (0.0, _G), (0.0, 1.0 - _G, _G)),
             ((), (_G,), (_D, 1.0 - _D))),
    "imex443": ((0.0, 0.5, 2 / 3, 0.5, 1.0),
              ((), (0.0, 0.5), (0.0, 1 / 6, 0.5), (0.0, -0.5, 0.5, 0.5),
               (0.0, 1.5, -1.5, 0.5, 0.5)),
              ((), (0.5,), (11 / 18, 1 / 18), (5 / 6, -5 / 6, 0.5),
               (0.25, 1.75, 0.75, -1.75))),
}


def _ars343():
    """ARS(3,4,3): third order, L-stable, three solves a step. γ is the root in (0, 1/2) of
    6γ³ − 18γ² + 9γ − 1 = 0; the explicit part is not stiffly accurate (its weights b̂ equal
    the implicit ones, so the new state is the last stage plus dt·Σ (b̂_j − Â_4j)·E_j, with
    E_3 at the last stage). Â_32 is the paper's 0.3966543747, Â_42 = Â_43 solve the third-order
    condition Σ b_i Â_ij c_j = 1/6 exactly (the paper's 10 digits leave 6e-11)."""
    g = float(next(r.real for r in np.roots([6.0, -18.0, 9.0, -1.0]) if 0.3 < r.real < 0.5))
    c3 = (1.0 + g) / 2.0
    b1, b2 = -1.5 * g * g + 4.0 * g - 0.25, 1.5 * g * g - 5.0 * g + 1.25
    a32 = 0.3966543747
    a42 = (1.0 / 6.0 - b2 * a32 * g) / (g * (g + c3))
    return ((0.0, g, c3, 1.0),
            ((), (0.0, g), (0.0, (1.0 - g) / 2.0, g), (0.0, b1, b2, g)),
            ((), (g,), (c3 - a32, a32), (1.0 - 2.0 * a42, a42, a42)),
            (0.0, b1, b2, g))


ARS["imex3"] = _ars343()


def final_weights(table) -> list[float] | None:
    """The weights w_j of the explicit rates E_j (stages 0 … last) in s⁺ = Y_last + dt·Σ w_j·E_j
    where the explicit part is not stiffly accurate (w_j = b̂_j − Â_last,j), else None."""
    c, A, Ahat, *bhat = table
    if not bhat:
        return None
    last = len(c) - 1
    return [bhat[0][j] - (Ahat[last][j] if j < last else 0.0) for j in range(len(c))]


def _hom(kind: str) -> str:
    return {"periodic": "P", "dirichlet": "D"}.get(kind, "N")


class ImexReference(ExplicitReference):
    def __init__(self, sim):
        super().__init__(sim)
        self.implicit = sim.implicit_terms()
        self._solvers = {}
        # species whose boundary carries no values (periodic, or zero flux): lap(s) = L₀ s,
        # so the explicit boundary part of their implicit terms is zero and is not computed
        self.homogeneous = {s for s in sim.species
                            if all(side.kind == "periodic" or (side.kind == "neumann"
                                                                and side.value == ("num", 0.0))
                                   for side in sim.sides[s].values())}

    def _explicit(self, Y, t):
        """(E(Y) per species: the rates without the implicit terms plus the boundary values'
        part of each implicit c·lap(s), the implicit coefficient c per species (0: none),
        the loss-rate maximum or None)."""
        sim = self.sim
        k, lam = self.rates(Y, t, implicit=self.implicit)
        env = self.rates.env(Y, t)
        coef = dict.fromkeys(sim.species, 0.0)
        for s, term in self.implicit:
            c = float(self.rates.ev(term.coef, env))
            coef[s] += c
            if s not in self.homogeneous:  # the boundary values' part of c·lap(s): explicit
                k[s] = k[s] + sim.real(c) * (self.ops.lap(Y[s], s, env, self.rates.ev)
                                             - self.hom_lap(Y[s], s))
        return k, coef, lam

    def step(self, t, dt_limit):
        sim = self.sim
        dt = sim.dt if dt_limit is None else min(sim.dt, dt_limit)
        U = dict(sim.state)
        E1, coef, lam = self._explicit(U, t)
        if lam is not None:
            if not lam >= 0:
                return float("nan")
            if lam > 0:
                dt = min(dt, 0.9 / lam)
        real = sim.real
        c, A, Ahat = ARS[sim.params["integrator"]][:3]
        w = final_weights(ARS[sim.params["integrator"]])
        E, I = [E1], [None]
        for i in range(1, len(c)):
            gdt = A[i][i] * dt
            Y, Ii = {}, {}
            for s in sim.species:
                rhs = U[s]
                for j in range(i):
                    if Ahat[i][j]:
                        rhs = rhs + real(Ahat[i][j] * dt) * E[j][s]
                    if j and A[i][j]:
                        rhs = rhs + real(A[i][j] * dt) * I[j][s]
                Y[s] = self._solve(rhs, s, gdt * coef[s], t + c[i] * dt)
                if i + 1 < len(c):  # I(Y) = (Y − rhs)/(γ·dt), for the later stages
                    Ii[s] = (Y[s] - rhs) * real(1.0 / gdt)
            self.pin(Y, t + c[i] * dt)
            if i + 1 < len(c):
                I.append(Ii)
                E.append(self._explicit(Y, t + c[i] * dt)[0])
        if w is not None:  # the explicit part not stiffly accurate: s⁺ = Y + dt·Σ w_j·E_j
            E.append(self._explicit(Y, t + dt)[0])
            for s in sim.species:
                for j, wj in enumerate(w):
                    if wj:
                        Y[s] = Y[s] + real(wj * dt) * E[j][s]
            self.pin(Y, t + dt)
        for s in sim.species:
            sim.state[s] = Y[s]
        return dt

    def _solve(self, rhs, s, dtc, t_new):
        if dtc == 0.0:
            return rhs
        ops = self.ops
        if hasattr(ops, "axes") and ops.pinned(s):
            # a vertex grid's Dirichlet nodes enter their neighbours' implicit rows: give them
            # their value at the stage's time first (meshes eliminate them in _mesh_solve)
            env = self.rates.env({**self.sim.state, s: rhs}, t_new)
            rhs = ops.pin_values(rhs.copy(), s, env, self.rates.ev)
        return self.solve(rhs, s, dtc, t_new)

    # ---- the homogeneous Laplacian and its solves ---------------------------------------
    def _axes(self, s):
        names = ("left", "right", "bottom", "top")
        ops = self.ops
        out = []
        for a in range(ops.axes):
            lo, hi = ops.sides[s][names[2 * a]], ops.sides[s][names[2 * a + 1]]
            out.append((ops.axes - 1 - a, _hom(lo.kind), _hom(hi.kind), ops.h[a]))
        return out

    def hom_lap(self, f, s):
        """L₀ f: the Laplacian with homogeneous boundary values."""
        ops = self.ops
        if not hasattr(ops, "axes"):
            return ops.L @ f
        return (self._matrix(s) @ f.ravel()).reshape(f.shape)

    def _matrix(self, s):
        key = ("L0", s)
        if key not in self._solvers:
            mats = []
            for ax, lo, hi, h in self._axes(s):
                n = self.ops.shape[ax]
                T = sp.diags([np.ones(n - 1), -2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1],
                             format="lil")
                vertex = self.ops.vertex
                for end, kind in ((0, lo), (n - 1, hi)):
                    other = 1 if end == 0 else n - 2
                    if kind == "P":
                        T[end, n - 1 - end] += 1
                    elif kind == "N":
                        T[end, other if vertex else end] += 1
                    elif vertex:  # pinned node: no rate
                        T[end, :] = 0
                    else:
                        T[end, end] -= 1
                mats.append((ax, T.tocsr() / h**2))
            size = self.ops.shape
            L = None
            for ax, T in mats:
                left = sp.identity(int(np.prod(size[:ax])), format="csr")
                right = sp.identity(int(np.prod(size[ax + 1:])), format="csr")
                term = sp.kron(sp.kron(left, T), right, format="csr")
                L = term if L is None else L + term
            xp = self.sim.xp
            if xp is np:
                self._solvers[key] = L.astype(self.sim.real)
            else:
                import cupyx.scipy.sparse as csp
                self._solvers[key] = csp.csr_matrix(L.astype(self.sim.real))
            self._solvers[("L0host", s)] = L
        return self._solvers[key]

    def solve(self, rhs, s, dtc: float, t_new: float):
        ops = self.ops
        if not hasattr(ops, "axes"):
            return self._mesh_solve(rhs, s, dtc, t_new)
        if not ops.vertex:
            return self._spectral(rhs, s, dtc)
        xp = self.sim.xp
        key = ("lu", s, dtc)
        self._matrix(s)
        if key not in self._solvers:
            A = sp.identity(ops.size, format="csc") - dtc * self._solvers[("L0host", s)].tocsc()
            if xp is np:
                from scipy.sparse.linalg import splu
                self._solvers = {k: v for k, v in self._solvers.items() if k[0] != "lu"}
                self._solvers[key] = splu(A)
            else:
                import cupyx.scipy.sparse as csp
                self._solvers[key] = csp.csr_matrix(A.tocsr().astype(self.sim.real))
        f = self._solvers[key]
        if xp is np:
            return f.solve(np.asarray(rhs, dtype=np.float64).ravel()).reshape(rhs.shape).astype(
                self.sim.real)
        from cupyx.scipy.sparse.linalg import spsolve
        return spsolve(f, rhs.ravel()).reshape(rhs.shape).astype(self.sim.real)

    def _fft(self):
        if self.sim.xp is np:
            import scipy.fft as fft
        else:
            import cupyx.scipy.fft as fft
        return fft

    def _spectral(self, rhs, s, dtc):
        xp = self.sim.xp
        if xp is not np:
            try:
                return self._spectral_on(rhs, s, dtc, xp, self._fft())
            except (AttributeError, NotImplementedError, ValueError, TypeError):
                # a transform cupyx lacks (e.g. DST-IV): this solve on the host
                import scipy.fft as host_fft
                host = self._spectral_on(xp.asnumpy(rhs), s, dtc, np, host_fft)
                return xp.asarray(host)
        return self._spectral_on(rhs, s, dtc, np, self._fft())

    def _spectral_on(self, rhs, s, dtc, xp, fft):
        axes = self._axes(s)
        u = rhs
        denom = 1.0
        periodic = [ax for ax, lo, hi, h in axes if lo == "P"]
        for ax, lo, hi, h in axes:  # the real transforms first
            tr = TRANSFORMS[(lo, hi)]
            if tr is None:
                continue
            kind, typ, shift = tr
            u = getattr(fft, kind)(u, type=typ, axis=ax, norm="ortho")
        if periodic:
            u = fft.rfftn(u, axes=periodic)
        for ax, lo, hi, h in axes:
            n = rhs.shape[ax]
            tr = TRANSFORMS[(lo, hi)]
            if tr is None:
                k = xp.arange(n // 2 + 1 if ax == periodic[-1] else n)
                theta = 2 * np.pi * k / n
            else:
                theta = np.pi * (xp.arange(n) + tr[2]) / n
            lam = -(2 - 2 * xp.cos(theta)) / h**2
            shape = [1] * rhs.ndim
            shape[ax] = -1
            denom = denom - dtc * lam.reshape(shape)
        u = u / denom
        if periodic:
            u = fft.irfftn(u, s=[rhs.shape[a] for a in periodic], axes=periodic)
        for ax, lo, hi, h in axes:
            tr = TRANSFORMS[(lo, hi)]
            if tr is None:
                continue
            kind, typ, shift = tr
            u = getattr(fft, "i" + kind)(u, type=typ, axis=ax, norm="ortho")
        return xp.ascontiguousarray(u.real if xp.iscomplexobj(u) else u).astype(self.sim.real)

    _lattice = False  # not looked for yet

    @property
    def lattice(self):
        """The fast solver of a lattice mesh (solvers/mesh/lattice.py), or None."""
        if self._lattice is False:
            from ..mesh.lattice import LatticeSolver, find_lattice
            lat = find_lattice(self.sim.mesh, self.ops.L64)
            self._lattice = None if lat is None else LatticeSolver(lat, self.sim.xp,
                                                                   self.sim.real)
        return self._lattice

    @lattice.setter
    def lattice(self, value):
        self._lattice = value

    def _mesh_solve(self, rhs, s, dtc, t_new):
        xp = self.sim.xp
        ops = self.ops
        if not ops.pinned(s) and self.lattice is not None:
            return self.lattice.solve([rhs], [dtc])[0]
        key = ("mesh", s, dtc)
        if key not in self._solvers:
            area = np.asarray(self.sim.mesh.mixed_areas)
            K = -sp.diags(area) @ ops.L64  # the symmetric cotangent stiffness
            A = (sp.diags(area) + dtc * K).tocsr()
            pinned = ops.pinned(s)
            free = np.ones(ops.size, bool)
            for idx, _ in pinned:
                free[idx] = False
            fi = np.flatnonzero(free)
            bi = np.flatnonzero(~free)
            Aff, Afb = A[fi][:, fi], A[fi][:, bi]
            conv = (lambda m: m.astype(self.sim.real)) if xp is np else (
                lambda m: __import__("cupyx.scipy.sparse", fromlist=["x"]).csr_matrix(
                    m.astype(self.sim.real)))
            # one factorisation per species: its (dt·c) of the current step
            self._solvers = {k: v for k, v in self._solvers.items()
                             if k[0] != "mesh" or k[1] != s}
            lu = None
            if xp is np:
                from scipy.sparse.linalg import splu
                lu = splu(Aff.tocsc(), permc_spec="MMD_AT_PLUS_A")
            self._solvers[key] = (conv(Aff), conv(Afb), xp.asarray(fi), xp.asarray(bi),
                                  xp.asarray(1.0 / Aff.diagonal(), dtype=self.sim.real),
                                  xp.asarray(area, dtype=self.sim.real), lu)
        Aff, Afb, fi, bi, jac, area, lu = self._solvers[key]
        b = (area * rhs)[fi]
        x = rhs.copy()
        if len(bi):
            env = self.rates.env({**self.sim.state, s: rhs}, t_new)
            x = ops.pin_values(x, s, env, self.rates.ev)
            b = b - Afb @ x[bi]
        if lu is not None:  # the CPU: the factorisation
            x[fi] = lu.solve(np.asarray(b, dtype=np.float64)).astype(self.sim.real)
            return x
        x0 = rhs[fi]
        if xp is np:
            from scipy.sparse.linalg import LinearOperator, cg
            M = LinearOperator(Aff.shape, matvec=lambda v: jac * v, dtype=Aff.dtype)
        else:
            from cupyx.scipy.sparse.linalg import LinearOperator, cg
            M = LinearOperator(Aff.shape, matvec=lambda v: jac * v, dtype=Aff.dtype)
        tol = 1e-12 if np.dtype(self.sim.real) == np.float64 else 1e-6
        try:
            sol, info = cg(Aff, b, x0=x0, rtol=tol, atol=0.0, maxiter=2000, M=M)
        except TypeError:  # cupyx's cg names the relative tolerance `tol`
            sol, info = cg(Aff, b, x0=x0, tol=tol, atol=0.0, maxiter=2000, M=M)
        x[fi] = sol
        return x
