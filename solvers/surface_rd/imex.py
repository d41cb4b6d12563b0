"""integrator=imex for the surface models (docs/MODELS.md §2): the constant-coefficient Laplacian
terms implicit, everything else explicit (semi-implicit Euler),

    (A + δt·c·K) s⁺ = A·(s + δt·f_explicit(u, v))

with A the lumped (mixed) vertex areas and K = −diag(A)·L the symmetric cotangent stiffness
(K = Σ_edges h_ij (e_i − e_j)(e_i − e_j)ᵀ), solved by conjugate gradients with a Jacobi
preconditioner, warm-started from the explicit predictor, in the simulation's backend (NumPy /
scipy.sparse, or CuPy / cupyx.scipy.sparse: the GPU runs it on the array path, except
chemotaxis with scheme=positive on a lattice mesh, whose whole step lattice_imex.py fuses). On a
lattice mesh (the generated rectangle, whose cotangent Laplacian is
the 5-point one) the solve is exact by type-I cosine transforms (solvers/mesh/lattice.py).

    gray-scott   Du Δu and Dv Δv implicit; the reaction explicit
    chemotaxis   D Δn and Δc implicit; explicit: scheme=positive the cell flux −∇·(α n ∇c) with
                 the upwind limit (D → 0) of the Scharfetter–Gummel flux, with the adaptive step
                 min(δt, THETA/max_i λ_i) of reference.py, λ_i now the upwind losses and the
                 reaction only (no diffusion), so n ≥ 0 after the explicit part; the implicit
                 solve keeps it where the cotangent weights are ≥ 0 (K an M-matrix);
                 scheme=paper −α n Δc − α ∇n·∇c; both with s r n (N − n) and s (n/(1+n) − c)

Stability (the bound below which δt is accepted): the implicit part is unconditionally stable.
Gray–Scott: the reaction alone, δt ≤ 2/(3 + F + k) (its Jacobian's Gershgorin radius, as in
reference.py). Chemotaxis: about the uniform state a Laplacian mode −λ is advanced by
G(λ) = diag(1/(1 + δt D λ), 1/(1 + δt λ))·(I + δt J_e(λ)), J_e = [[−s r N, α N λ],
[s/(1+N)², −s]]; δt is the largest step with spectral radius ρ(G) ≤ 1 for every λ in
[0, λ_max] whose mode decays in the PDE (`linear_imex_bound`).
"""
from __future__ import annotations

import numpy as np

from ..core.scheme import SchemeBase
from .reference import THETA, EdgeOperators, chemotaxis_jacobian

RTOL = {"float64": 1e-10, "float32": 1e-5}
MAX_ITER = 1000


def linear_imex_bound(p, lam_max: float, samples: int = 2001) -> float:
    """The largest δt of chemotaxis' IMEX step that damps every mode that decays in the PDE
    (module docstring); found on a geometric scan of δt, then by bisection."""
    lam = np.linspace(0.0, lam_max, samples)
    full = chemotaxis_jacobian(p, lam)
    decays = np.linalg.eigvals(full).real.max(axis=1) < 0
    D, a, s, r, N = (p[k] for k in ("D", "alpha", "s", "r", "N"))
    lam = lam[decays]
    if not len(lam):
        return float("inf")
    Je = np.zeros((len(lam), 2, 2))
    Je[:, 0, 0], Je[:, 0, 1] = -s * r * N, a * N * lam
    Je[:, 1, 0], Je[:, 1, 1] = s / (1 + N) ** 2, -s

    def stable(dt):
        G = np.eye(2) + dt * Je
        G[:, 0, :] /= (1 + dt * D * lam)[:, None]
        G[:, 1, :] /= (1 + dt * lam)[:, None]
        return np.abs(np.linalg.eigvals(G)).max() <= 1 + 1e-12

    grid = np.geomspace(1e-6, 1e4, 121)
    ok = [stable(dt) for dt in grid]
    if all(ok):
        return float("inf")
    first = ok.index(False)
    if first == 0:
        return 0.0
    lo, hi = grid[first - 1], grid[first]
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if stable(mid) else (lo, mid)
    return float(lo)


class Implicit:
    """(A + δt·c·K) x = A·b by Jacobi-preconditioned CG on a backend; K from the cotangent
    Laplacian L of the renumbered mesh (sim.ops.L, float64)."""

    def __init__(self, sim):
        xp, real = sim.xp, sim.real
        self.xp, self.real = xp, real
        area = np.asarray(sim.imesh.mixed_areas, dtype=np.float64)
        import scipy.sparse as sp
        K = (-sp.diags(area) @ sim.ops.L).tocsr()
        if xp is np:
            self.K = K.astype(real)
        else:
            import cupyx.scipy.sparse as csp
            self.K = csp.csr_matrix(K.astype(real))
        self.area = xp.asarray(area, dtype=real)
        self.kdiag = xp.asarray(K.diagonal(), dtype=real)
        self.rtol = RTOL[np.dtype(real).name]
        self.iterations = 0  # of the last solve
        # a lattice mesh (the generated rectangle): cosine transforms instead of CG
        from ..mesh.lattice import LatticeSolver
        lat = sim.ops.lattice
        self.lattice = None if lat is None else LatticeSolver(lat, xp, real)

    def solve(self, b, dtc: float, x0=None):
        """x with (A + dtc·K) x = A·b; x0 the first guess (default b)."""
        if self.lattice is not None:
            self.iterations = 0
            return self.lattice.solve([b], [dtc])[0]
        xp, c = self.xp, self.real(dtc)
        area, K = self.area, self.K

        def op(v):
            return area * v + c * (K @ v)

        rhs = area * b
        inv = 1 / (area + c * self.kdiag)
        x = (b if x0 is None else x0).copy()
        r = rhs - op(x)
        z = inv * r
        d = z
        rz = xp.vdot(r, z)
        stop = (self.rtol * float(xp.sqrt(xp.vdot(rhs, inv * rhs)))) ** 2
        k = 0
        while k < MAX_ITER and float(rz) > stop:
            q = op(d)
            alpha = rz / xp.vdot(d, q)
            x = x + alpha * d
            r = r - alpha * q
            z = inv * r
            rz_new = xp.vdot(r, z)
            d = z + (rz_new / rz) * d
            rz = rz_new
            k += 1
        self.iterations = k
        return x


class GrayScottImex(SchemeBase):
    """Semi-implicit Euler of Gray–Scott (module docstring)."""

    def __init__(self, sim):
        super().__init__(sim)
        self.solver = Implicit(sim)

    def step(self, t, dt_limit):
        sim = self.sim
        p, real = sim.params, sim.real
        dt = sim.dt if dt_limit is None else min(sim.dt, dt_limit)
        u, v = sim.state["u"], sim.state["v"]
        uvv = u * v * v
        du = -uvv + real(p["F"]) * (1 - u)
        dv = uvv - real(p["F"] + p["k"]) * v
        sim.state["u"] = self.solver.solve(u + real(dt) * du, dt * p["Du"])
        sim.state["v"] = self.solver.solve(v + real(dt) * dv, dt * p["Dv"])
        return dt


def upwind_rates(n, c, eo: EdgeOperators, p, xp):
    """(explicit ∂n/∂t, loss rate λ per vertex) of −∇·(α n ∇c) + s r n (N − n) with the upwind
    (D → 0) limit of reference.positive_rates' edge flux: vertex i gains
    h (B_j n_j − B_i n_i), B the upwind coefficient α|c_j − c_i| on the donor side, 0 on the
    other; capped at μ n_donor where h < 0."""
    a, s, r, N = (p[k] for k in ("alpha", "s", "r", "N"))
    ni, nj = n[eo.i], n[eo.j]
    dc = c[eo.j] - c[eo.i]
    bq = xp.abs(dc) * a
    up = dc >= 0  # the chemotactic velocity points from i to j: i is the donor
    zero = xp.zeros_like(bq)
    kj, ki = xp.where(up, zero, bq), xp.where(up, bq, zero)
    flux = eo.h * (kj * nj - ki * ni)
    mu = xp.abs(eo.h) * bq
    flux = xp.where(eo.neg, xp.minimum(xp.maximum(flux, -mu * ni), mu * nj), flux)
    sr = s * r
    dn = (eo.B @ flux) / eo.area + sr * n * (N - n)
    loss = eo.P @ xp.concatenate([xp.where(eo.neg, mu, eo.h * ki),
                                  xp.where(eo.neg, mu, eo.h * kj)])
    return dn, loss / eo.area + sr * xp.maximum(n - N, 0)


class ChemotaxisImex(SchemeBase):
    """Semi-implicit Euler of chemotaxis, scheme=positive or paper (module docstring)."""

    def __init__(self, sim):
        super().__init__(sim)
        self.solver = Implicit(sim)
        self.positive = sim.params["scheme"] == "positive"
        if self.positive:
            self.eo = EdgeOperators(sim.imesh, sim.xp, sim.real)
        else:
            self.ops = sim.ops.arrays(sim.xp, sim.real)  # (shared by the mesh's schemes)

    def step(self, t, dt_limit):
        sim = self.sim
        p, xp, real = sim.params, sim.xp, sim.real
        n, c = sim.state["cells"], sim.state["chemo"]
        dt = sim.dt if dt_limit is None else min(sim.dt, dt_limit)
        if self.positive:
            dn, lam = upwind_rates(n, c, self.eo, p, xp)
            lmax = float(lam.max())
            if not lmax >= 0:
                return float("nan")
            if lmax > 0:
                dt = min(dt, THETA / lmax)
        else:
            lap_c = self.ops.laplacian(c)
            grad = self.ops.vertex_gradient(xp.stack([n, c], axis=1))
            dot = (grad[:, :, 0] * grad[:, :, 1]).sum(axis=1)
            a = real(p["alpha"])
            dn = -a * n * lap_c - a * dot + real(p["s"] * p["r"]) * n * (real(p["N"]) - n)
        dc = real(p["s"]) * (n / (1 + n) - c)
        sim.state["cells"] = self.solver.solve(n + real(dt) * dn, dt * p["D"])
        sim.state["chemo"] = self.solver.solve(c + real(dt) * dc, dt)
        return dt


def by_integrator(explicit, imex):
    """A scheme factory for a SchemeEntry: `imex` where the parameter integrator is 'imex',
    else `explicit`."""

    def make(sim):
        return (imex if sim.params.get("integrator") == "imex" else explicit)(sim)

    make.explicit, make.imex = explicit, imex
    make.__name__ = f"{getattr(explicit, '__name__', 'scheme')}|{imex.__name__}"
    return make
