"""The `xp` numerics of the surface reaction–diffusion models: the float64 reference, the CPU
backend and the GPU `array` path (the paper's naive baseline: Laplacians, face gradients, vertex
gradients, then the update), and the stability bounds the time-step guard uses.

Discrete differential operators on a triangulated surface ([P1] eqs. (2)–(4), docs/MODELS.md §2.2),
built once in float64 from a `TriangleMesh` as sparse matrices:

    L  (N × N)   cotangent Laplace–Beltrami with Meyer's mixed areas (paper's eq. (2)):
                 (L f)_i = 1/(2A_i) Σ_j (cot α_ij + cot β_ij)(f_j − f_i)
    F  (3M × N)  face gradients (eq. (3)): rows d·M + T hold component d of
                 ∇f(T) = (f_j − f_i)(x_i − x_k)^⊥/(2A_T) + (f_k − f_i)(x_j − x_i)^⊥/(2A_T),
                 v^⊥ = n̂ × v, n̂ ∝ (x_j − x_i) × (x_k − x_i) (counter-clockwise rotation)
    W  (N × M)   vertex gradients (eq. (4)): the mean of the incident face gradients weighted by
                 the incident angles θ, normalised per vertex.

Applied as array code (`xp` = NumPy or CuPy, sparse products) by the explicit-Euler schemes
`ChemotaxisEuler` and `GrayScottEuler`. The fused kernels use the same operators folded into
one-ring stencils (`stencil`): since ∇f_i = Σ_T w_iT ∇f(T) is linear in f and vanishes for
constants, ∇f_i = Σ_{j ∈ 1-ring(i)} G_ij (f_j − f_i) with G = W·F, so a whole step needs only the
1-ring.

Stability bound of chemotaxis (derived here). About the uniform state (N, N/(1+N)), a Laplacian
eigenmode with eigenvalue −λ evolves by the Jacobian J(λ) = [[−Dλ − srN, αNλ], [s/(1+N)², −λ − s]].
Explicit Euler needs |1 + δt μ| ≤ 1 for every eigenvalue μ of J(λ) with Re μ < 0, i.e.
δt ≤ min −2 Re μ/|μ|² over λ in [0, λ_max] (`linear_euler_bound`), λ_max bounded by Gershgorin
(largest absolute row sum of L). On fine meshes this tends to 2 / max(λ_max + s, Dλ_max + srN)
(the off-diagonal coupling is O(1) against diagonals O(λ) apart); on coarse ones the coupling
lowers it. A larger δt is refused. Turing threshold: det J(λ) < 0 for some λ > 0 iff
αN/(1+N)² > D + rN + 2√(D r N).

The positive scheme (scheme=positive, the default; issue 16). The paper's −α n Δc − α ∇n·∇c with
averaged vertex gradients is not positivity-preserving: on coarse or irregular meshes n goes
negative, −α n Δc turns anti-diffusive there and the run blows up (the sample snake at t ≈ 37,
whatever δt). Written in divergence form, ∂n/∂t = ∇·(D∇n − α n∇c) + s r n (N − n), the cell
flux is assembled edge by edge on the cotangent dual, with the Laplacian's own weights: per edge
(i, j) with half weight h = (cot α + cot β)/2 and Péclet number P = α (c_j − c_i)/D, vertex i
gains (and j loses) the Scharfetter–Gummel flux

    F_ij = h D (B(P) n_j − B(−P) n_i),     B(x) = x/(eˣ − 1),  B(−x) = B(x) + x,

which is D h (n_j − n_i) − α h (c_j − c_i)(n_i + n_j)/2 + O(P²) (central) for small P and the
upwind flux −α h (c_j − c_i) n_upwind (n taken where the chemotactic velocity α∇c comes from)
for large |P|, and exact for the 1D flux-free states n ∝ exp(α c/D). A_i ∂n_i/∂t = Σ_j F_ij +
A_i s r n_i (N − n_i); since F_ji = −F_ij (computed so, bit for bit, by both vertices in the
kernel), Σ_i A_i n_i changes per step by δt Σ_i A_i s r n_i (N − n_i) alone, to round-off, on
closed and open meshes (the boundary has zero flux). The c equation is the paper's,
Δc = Σ_j h_ij (c_j − c_i)/A_i.

Positivity. With h ≥ 0 the coefficient of n_j in F_ij is h D B(P) ≥ 0 and that of n_i is
−h D B(−P) ≤ 0. Where the mesh has obtuse angles h < 0 and the flux would take from i in
proportion to n_j; there F_ij is capped at μ n_donor (clamped to [−μ n_i, μ n_j]), μ = |h| D
B(−|P|) (a no-op for smooth n, bit-symmetric too). So each vertex loses at most λ_i n_i per unit
time, λ_i = (Σ_j ℓ_ij)/A_i + s r max(n_i − N, 0), ℓ_ij = h D B(−P_ij) (h ≥ 0) or μ_ij (h < 0),
and gains only non-negative amounts: n_i⁺ ≥ n_i (1 − δt λ_i) ≥ 0 for δt ≤ 1/max_i λ_i. Since
B(−P) ≤ 1 + max(P, 0), λ_i ≤ (D Σ_j |h_ij| + α Σ_j |h_ij| max(c_j − c_i, 0))/A_i + s r (n_i − N)⁺
(|c_j − c_i| on edges with h < 0), the CFL-like bound of explicit upwind transport plus diffusion. c changes in time, so the step
adapts: δt_k = min(δt, THETA/max_i λ_i(n^k, c^k)), THETA = 0.9 (a margin for rounding and float32),
one reduction per step (on the device in the fused scheme). δt is the model's step, refused
above the linear stability bound below. Linearised about the uniform state, F_ij is
α N h (c_j − c_i) plus D h (n_j − n_i) (the cap is inactive), the paper's linearisation: the
stability bound, the Turing threshold and the growth rates are the same for both schemes.

Stability bound of Gray–Scott: the diffusion modes need δt·max(Du, Dv)·λ_max ≤ 2 and the reaction
Jacobian [[−v² − F, −2uv], [v², 2uv − F − k]] has Gershgorin radius ≤ 3 + F + k for u, v in
[0, 1], so δt ≤ 2 / (max(Du, Dv) λ_max + 3 + F + k).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..core.scheme import SchemeBase
from ..mesh.operators import cotan_laplacian  # noqa: F401  (re-exported: ladder, tests)
from ..mesh.triangles import TriangleMesh


def face_gradient_coefficients(mesh: TriangleMesh) -> np.ndarray:
    """(M, 3, 3): g[T, k] with ∇f(T) = Σ_k f_{v_k} g[T, k]. For corner k the vector is the
    opposite edge (from v_{k+1} to v_{k+2}) rotated by n̂ × · and divided by 2A_T, which is the
    paper's eq. (3) rearranged (the three vectors sum to zero)."""
    p = mesh.points[mesh.cells]  # (M, 3 corners, 3)
    cr = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    two_area = np.linalg.norm(cr, axis=1)
    nhat = cr / two_area[:, None]
    opp = np.roll(p, -2, axis=1) - np.roll(p, -1, axis=1)  # v_{k+2} − v_{k+1}
    return np.cross(nhat[:, None, :], opp) / two_area[:, None, None]


def face_gradient_operator(mesh: TriangleMesh) -> sp.csr_matrix:
    g = face_gradient_coefficients(mesh)
    m, n = mesh.n_cells, mesh.n_vertices
    rows = (np.arange(3)[:, None, None] * m + np.arange(m)[None, :, None])  # (3, M, 1)
    rows = np.broadcast_to(rows, (3, m, 3))
    cols = np.broadcast_to(mesh.cells[None], (3, m, 3))
    vals = np.moveaxis(g, 2, 0)  # (d, M, corner)
    return sp.csr_matrix((vals.ravel(), (rows.ravel(), cols.ravel())), shape=(3 * m, n))


def vertex_average_operator(mesh: TriangleMesh) -> sp.csr_matrix:
    """W_iT = θ_iT / Σ_T' θ_iT' (incident angles, paper's eq. (4))."""
    theta = mesh.corner_angles.ravel()
    rows = mesh.cells.ravel()
    cols = np.repeat(np.arange(mesh.n_cells), 3)
    tot = np.bincount(rows, weights=theta, minlength=mesh.n_vertices)
    return sp.csr_matrix((theta / tot[rows], (rows, cols)),
                         shape=(mesh.n_vertices, mesh.n_cells))


@dataclass
class Stencil:
    """The operators folded into one-ring stencils, as CSR over the 1-ring (no diagonal):
    (L f)_i = Σ_k lap[k] (f_{nbr[k]} − f_i) and ∇f_i = Σ_k grad[k] (f_{nbr[k]} − f_i) for k in
    indptr[i]:indptr[i+1]."""

    indptr: np.ndarray  # (N+1,) int64
    nbr: np.ndarray  # (nnz,) int64
    lap: np.ndarray  # (nnz,) float64
    grad: np.ndarray  # (nnz, 3) float64


class SurfaceOperators:
    """L, F, W of a mesh in float64 (scipy.sparse; F and W, which Gray–Scott never reads, built
    when first asked), their one-ring stencil, and the Gershgorin bound of the Laplacian's
    spectrum that the time-step guard uses."""

    def __init__(self, mesh: TriangleMesh):
        self.mesh = mesh
        self.L = cotan_laplacian(mesh)
        self._arrays: dict = {}

    @cached_property
    def F(self) -> sp.csr_matrix:
        return face_gradient_operator(self.mesh)

    @cached_property
    def W(self) -> sp.csr_matrix:
        return vertex_average_operator(self.mesh)

    def arrays(self, xp, dtype) -> ArrayOperators:
        """The operators on a backend in a real type (on the current GPU), made once and shared
        by every scheme built on this mesh (those an ensemble builds for its members, one after
        another, and every simulation that shares the mesh set-up: meshes.py)."""
        key = (xp, np.dtype(dtype), -1 if xp is np else xp.cuda.Device().id)
        if key not in self._arrays:
            self._arrays[key] = ArrayOperators(self, xp, dtype)
        return self._arrays[key]

    @cached_property
    def lambda_max(self) -> float:
        """Upper bound of |eigenvalue| of L (Gershgorin: the largest absolute row sum). L is
        similar to the symmetric A^(-1/2) K A^(-1/2), so its eigenvalues are real, ≤ 0."""
        return float(abs(self.L).sum(axis=1).max())

    @cached_property
    def lattice(self):
        """The mesh's lattice (mesh/lattice.py `find_lattice`: the generated rectangle, whose
        cotangent Laplacian is the 5-point one) or None; the fast paths of the IMEX solve and of
        the fused lattice kernels ask it once per mesh set-up (meshes.py)."""
        from ..mesh.lattice import find_lattice
        return find_lattice(self.mesh, self.L)

    @cached_property
    def stencil(self) -> Stencil:
        n, m = self.mesh.n_vertices, self.mesh.n_cells
        indptr, nbr = self.mesh.vertex_vertex
        rows = np.repeat(np.arange(n), np.diff(indptr))
        keys = rows * np.int64(n) + nbr  # sorted, as the CSR is

        def on_ring(a: sp.spmatrix) -> np.ndarray:
            """The entries of `a` at (i, j ∈ 1-ring(i)) in CSR order (0 where not stored)."""
            c = a.tocoo()
            k = c.row.astype(np.int64) * n + c.col
            pos = np.searchsorted(keys, k)
            hit = (pos < len(keys)) & (keys[np.minimum(pos, len(keys) - 1)] == k)
            out = np.zeros(len(keys))
            np.add.at(out, pos[hit], c.data[hit])
            return out

        lap = on_ring(self.L)
        grad = np.column_stack([on_ring(self.W @ self.F[d * m:(d + 1) * m]) for d in range(3)])
        return Stencil(np.asarray(indptr), np.asarray(nbr), lap, grad)


class ArrayOperators:
    """The operators on a backend (`xp` = numpy or cupy) in a real type: the array path."""

    def __init__(self, ops: SurfaceOperators, xp, dtype):
        self.xp, self.dtype, self._ops = xp, dtype, ops
        self.m = ops.mesh.n_cells
        self.L = self._conv(ops.L)

    def _conv(self, a):
        if self.xp is np:
            return a.astype(self.dtype).tocsr()
        import cupyx.scipy.sparse as csp
        return csp.csr_matrix(a.astype(self.dtype).tocsr())

    @cached_property
    def F(self):  # (built when first used: Gray–Scott never does)
        return self._conv(self._ops.F)

    @cached_property
    def W(self):
        return self._conv(self._ops.W)

    def laplacian(self, f):
        return self.L @ f

    def vertex_gradient(self, f):
        """(N, 3, ...) vertex gradients of f (N,) or of several fields f (N, k)."""
        gf = self.F @ f  # (3M, ...)
        gf = gf.reshape((3, self.m) + f.shape[1:])
        return self.xp.stack([self.W @ gf[d] for d in range(3)], axis=1)


# ---- linearisation and stability bounds ------------------------------------------------------
def linear_euler_bound(jacobian, lam_max: float, samples: int = 4001) -> float:
    """The largest δt for which explicit Euler damps every decaying mode of a linearised
    two-species system: a Laplacian eigenmode with eigenvalue −λ, λ in [0, λ_max], evolves by
    the 2×2 matrix `jacobian(λ)` (shape (len(λ), 2, 2)); an eigenvalue μ with Re μ < 0 needs
    |1 + δt μ| ≤ 1, i.e. δt ≤ −2 Re μ / |μ|². Growing modes (Re μ ≥ 0, the Turing band) grow in
    the PDE too and set no limit."""
    lam = np.linspace(0.0, lam_max, samples)
    mu = np.linalg.eigvals(jacobian(lam))
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(mu.real < 0, -2 * mu.real / np.abs(mu) ** 2, np.inf)
    return float(b.min())


def chemotaxis_jacobian(p, lam: np.ndarray) -> np.ndarray:
    """J(λ) of chemotaxis linearised about the uniform state (module docstring)."""
    D, a, s, r, N = (p[k] for k in ("D", "alpha", "s", "r", "N"))
    J = np.empty((len(lam), 2, 2))
    J[:, 0, 0], J[:, 0, 1] = -D * lam - s * r * N, a * N * lam
    J[:, 1, 0], J[:, 1, 1] = s / (1 + N) ** 2, -lam - s
    return J


def turing_threshold(D: float, r: float, N: float) -> float:
    """The α above which the uniform state of chemotaxis is unstable (module docstring)."""
    return (1 + N) ** 2 / N * (D + r * N + 2 * np.sqrt(D * r * N))


# ---- rates and the explicit-Euler schemes ----------------------------------------------------
def chemotaxis_rhs(n, c, ops, p, xp):
    """(∂n/∂t, ∂c/∂t) of chemotaxis (docs/MODELS.md [P1] eq. (1)) as array code."""
    nc = xp.stack([n, c], axis=1)
    lap = ops.laplacian(nc)  # (N, 2)
    grad = ops.vertex_gradient(nc)  # (N, 3, 2)
    dot = (grad[:, :, 0] * grad[:, :, 1]).sum(axis=1)
    lap_n, lap_c = lap[:, 0], lap[:, 1]
    D, a, s, r, N = (p[k] for k in ("D", "alpha", "s", "r", "N"))
    dn = D * lap_n - a * n * lap_c - a * dot + (s * r) * n * (N - n)
    dc = lap_c + s * (n / (1 + n) - c)
    return dn, dc


def gray_scott_rhs(u, v, ops, p, xp):
    """(∂u/∂t, ∂v/∂t) of Gray–Scott as array code."""
    lap = ops.laplacian(xp.stack([u, v], axis=1))
    uvv = u * v * v
    du = p["Du"] * lap[:, 0] - uvv + p["F"] * (1 - u)
    dv = p["Dv"] * lap[:, 1] + uvv - (p["F"] + p["k"]) * v
    return du, dv


class EulerReference(SchemeBase):
    """One explicit Euler step of the fixed δt `sim.dt` (shortened to dt_limit) with the rates
    of `rhs` on the operators of `sim.ops` in the simulation's backend and real type. A subclass
    sets `rhs` and `stability_bound(params, lambda_max) -> (δt bound, formula for messages)`."""

    rhs = None

    def __init__(self, sim):
        super().__init__(sim)
        self.ops = sim.ops.arrays(sim.xp, sim.real)

    def step(self, t, dt_limit):
        sim = self.sim
        dt = sim.dt if dt_limit is None else min(sim.dt, dt_limit)
        a, b = sim.species
        u, v = sim.state[a], sim.state[b]
        du, dv = self.rhs(u, v, self.ops, sim.params, sim.xp)
        sim.state[a] = u + sim.real(dt) * du
        sim.state[b] = v + sim.real(dt) * dv
        return dt


class ChemotaxisEuler(EulerReference):
    rhs = staticmethod(chemotaxis_rhs)

    @staticmethod
    def stability_bound(p, lam_max: float) -> tuple[float, str]:
        return (linear_euler_bound(lambda lam: chemotaxis_jacobian(p, lam), lam_max),
                "min −2Re μ/|μ|² over the eigenvalues μ of the linearisation J(λ), λ ≤ λ_max")


# ---- the positive chemotaxis scheme (scheme=positive) --------------------------------------
THETA = 0.9  # the positive scheme's step is at most THETA / max_i λ_i (module docstring)


class EdgeOperators:
    """The cotangent dual of a mesh as edge arrays on a backend (`xp`) in a real type: the edges
    (i, j), their half weights h = (cot α + cot β)/2 (the flux across the dual edge of ij is
    h·(f_j − f_i), so (L f)_i = Σ_j h_ij (f_j − f_i) / A_i), the mixed areas A and the incidence
    matrices (N × E) that gather per-edge values onto vertices: `B` with +1 at (i, e) and −1 at
    (j, e) (the net gain of a flux), `P` = [P_i P_j] with +1 at (i, e) and at (j, E + e)
    (one-sided sums)."""

    def __init__(self, mesh: TriangleMesh, xp, dtype):
        e = mesh.edges
        n, ne = mesh.n_vertices, len(e)
        h = 0.5 * np.asarray(mesh.cotangent_weights)
        cols = np.concatenate([np.arange(ne), np.arange(ne)])
        rows = np.concatenate([e[:, 0], e[:, 1]])
        B = sp.csr_matrix((np.concatenate([np.ones(ne), -np.ones(ne)]), (rows, cols)),
                          shape=(n, ne))
        P = sp.csr_matrix((np.ones(2 * ne), (rows, np.arange(2 * ne))), shape=(n, 2 * ne))
        if xp is np:
            conv = lambda a: a.astype(dtype).tocsr()  # noqa: E731
        else:
            import cupyx.scipy.sparse as csp
            conv = lambda a: csp.csr_matrix(a.astype(dtype).tocsr())  # noqa: E731
        arr = lambda a, t=dtype: xp.asarray(np.ascontiguousarray(a), dtype=t)  # noqa: E731
        self.xp = xp
        self.i, self.j = arr(e[:, 0], np.int64), arr(e[:, 1], np.int64)
        self.h, self.neg = arr(h), arr(h < 0, bool)
        self.area = arr(mesh.mixed_areas)
        self.B, self.P = conv(B), conv(P)


def bernoulli_pair(q, xp):
    """(B(q), B(−q)) of the Bernoulli function B(x) = x/(eˣ − 1) for q = |P| ≥ 0: B(q) ≤ 1,
    B(−q) = B(q) + q ≥ 1 (B(0) = 1, B(q) → 0 as q → ∞ without overflow trouble)."""
    safe = xp.where(q > 0, q, 1)
    b = xp.where(q > 0, safe / xp.expm1(safe), 1)
    return b, b + q


def positive_rates(n, c, eo: EdgeOperators, p, xp):
    """(∂n/∂t, ∂c/∂t, λ) of chemotaxis written as ∂n/∂t = ∇·(D∇n − α n∇c) + s r n (N − n),
    the cell flux assembled edge by edge on the cotangent dual (module docstring). Per edge
    e = (i, j), with P = α (c_j − c_i)/D the edge's Péclet number, the gain of i (loss of j) is
    the Scharfetter–Gummel flux F_e = h D (B(P) n_j − B(−P) n_i): upwind in the direction of
    the chemotactic velocity for |P| ≫ 1, central for |P| ≪ 1, exact for the flux-free states
    n ∝ exp(α c/D) in 1D. On edges of negative weight (h < 0, obtuse meshes) F_e is capped at
    μ n_donor, μ = |h| D B(−|P|). λ_i = (Σ_j loss coefficient of n_i) / A_i + s r max(n_i − N, 0)
    (loss coefficient h D B(−P) for h ≥ 0, μ for h < 0) bounds each vertex's loss rate per unit
    density: n_i⁺ ≥ n_i (1 − δt λ_i)."""
    D, a, s, r, N = (p[k] for k in ("D", "alpha", "s", "r", "N"))
    ni, nj, ci, cj = n[eo.i], n[eo.j], c[eo.i], c[eo.j]
    dc = cj - ci
    b, bq = bernoulli_pair(xp.abs(dc) * (a / D), xp)
    up = dc >= 0  # the chemotactic velocity points from i to j
    kj, ki = xp.where(up, b, bq), xp.where(up, bq, b)  # B(P), B(−P)
    hD = eo.h * D
    flux = hD * (kj * nj - ki * ni)
    mu = xp.abs(hD) * bq
    flux = xp.where(eo.neg, xp.minimum(xp.maximum(flux, -mu * ni), mu * nj), flux)
    sr = s * r
    dn_dt = (eo.B @ flux) / eo.area + sr * n * (N - n)
    dc_dt = (eo.B @ (eo.h * dc)) / eo.area + s * (n / (1 + n) - c)
    loss = eo.P @ xp.concatenate([xp.where(eo.neg, mu, hD * ki), xp.where(eo.neg, mu, hD * kj)])
    lam = loss / eo.area + sr * xp.maximum(n - N, 0)
    return dn_dt, dc_dt, lam


def positive_step_size(dt_user: float, lam_max: float, dt_limit: float | None) -> float:
    """min(δt, THETA/max λ, dt_limit); NaN where λ is not a number (a non-finite state)."""
    if not lam_max >= 0:
        return float("nan")
    dt = dt_user if lam_max == 0 else min(dt_user, THETA / lam_max)
    return dt if dt_limit is None else min(dt, dt_limit)


class PositiveChemotaxisEuler(SchemeBase):
    """Explicit Euler of `positive_rates` with the adaptive step min(δt, THETA/max_i λ_i) (one
    reduction per step), δt = `sim.dt` the model's step (below the linear stability bound)."""

    def __init__(self, sim):
        super().__init__(sim)
        self.eo = EdgeOperators(sim.imesh, sim.xp, sim.real)

    def step(self, t, dt_limit):
        sim = self.sim
        n, c = sim.state["cells"], sim.state["chemo"]
        dn, dc, lam = positive_rates(n, c, self.eo, sim.params, sim.xp)
        dt = positive_step_size(sim.dt, float(lam.max()), dt_limit)
        if dt == dt:  # not NaN: the base class reports a NaN step as a divergence
            sim.state["cells"] = n + sim.real(dt) * dn
            sim.state["chemo"] = c + sim.real(dt) * dc
        return dt

    stability_bound = staticmethod(ChemotaxisEuler.stability_bound)


class GrayScottEuler(EulerReference):
    rhs = staticmethod(gray_scott_rhs)

    @staticmethod
    def stability_bound(p, lam_max: float) -> tuple[float, str]:
        bound = 2.0 / (max(p["Du"], p["Dv"]) * lam_max + 3 + p["F"] + p["k"])
        return bound, "2/(max(Du, Dv)·λ_max + 3 + F + k)"
