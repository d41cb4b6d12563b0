"""The reference scheme of heat-1d, ks-1d and euler-1d: explicit stencil schemes of docs/MODELS.md [P3] as
`xp` array code (the float64 reference, the CPU backend and the GPU `array` path), in both orders
of operations.

A scheme is a sequence of *tiers* (sub-time-steps). Tier j computes, at every node, a new value of
row j % 2 from the values of row (j − 1) % 2 at the node and its R neighbours on each side (the
stencil `S[0..2R]`, S[R] = the node itself) and from the node's own old value in row j % 2 (`b`):

    heat:                 one tier per step, R = 1                        (row parity unused)
    Kuramoto–Sivashinsky: predictor tier (odd j) + final tier (even j), R = 2
    Euler:                two tiers on (ρ, ρu, E), R = 2: midpoint RK2 (scheme=paper) or
                          SSP-RK2 (scheme=muscl-hllc), the fluxes in gas.py

Arrays have the components first: shape (NV, n) for a state, (NV, ...) for a stencil slice, so the
same `tier(par, S, b)` function serves the whole-domain ("classic") order and the swept order.

Boundaries, applied where a stencil crosses the end of the domain (node j = g + r outside [0, n)):
    "mirror"    node −j resp. 2(n − 1) − j (insulated ends of heat-1d: T_{−1} = T_1),
    "periodic"  node j mod n (ks-1d),
    "dirichlet" a fixed ghost state (euler-1d: the left/right states of the tube);
euler-1d takes "periodic" too (boundary=periodic).

`classic_tier` evaluates a tier over the whole domain at once. `swept_emulate` evaluates the same
tiers in the order of the swept GPU kernels (Magee & Niemeyer §4: every block of W nodes advances
its triangle, then diamonds between shifted blocks, passing only the two working rows of each
block — its edges — between stages) on arrays that stand for the blocks' shared memory. Its shared
memory starts as NaN, so a value used before it was computed would poison the result:
`swept == classic` (bit for bit in NumPy) is the test that the order of operations is right.

Below them: each model's tiers (heat eq. (4), KS eqs. (7)–(9); Euler's in gas.py) and the
scheme classes (`TieredScheme` and one per model) that the models name as `reference_scheme`.
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..core import clock
from ..core.errors import NonFiniteStep
from ..core.scheme import SchemeBase
from .gas import TIERS, euler_dt, euler_tier, pressure  # noqa: F401  (euler-1d's numerics)

BOUNDARIES = ("mirror", "periodic", "dirichlet")


def pad(A, R: int, bc: str, ghosts, xp):
    """A (NV, n) with R ghost nodes on each side filled by the boundary rule -> (NV, n + 2R)."""
    n = A.shape[1]
    if bc == "periodic":
        left, right = A[:, n - R:], A[:, :R]
    elif bc == "mirror":
        left = A[:, R:0:-1]                   # nodes −R..−1 -> R..1
        right = A[:, n - 2:n - 2 - R:-1]      # nodes n..n+R−1 -> n−2..n−1−R (n ≥ R + 2)
    elif bc == "dirichlet":
        gl, gr = ghosts
        left = xp.broadcast_to(xp.asarray(gl, dtype=A.dtype)[:, None], (A.shape[0], R))
        right = xp.broadcast_to(xp.asarray(gr, dtype=A.dtype)[:, None], (A.shape[0], R))
    else:
        raise ValueError(bc)
    return xp.concatenate([left, A, right], axis=1)


def classic_tier(tier, par: int, A, B, R: int, bc: str, ghosts, xp):
    """One tier over the whole domain: tier(par, stencil of A, B) -> new row, shape of A."""
    n = A.shape[1]
    P = pad(A, R, bc, ghosts, xp)
    S = [P[:, R + r:R + r + n] for r in range(-R, R + 1)]
    return tier(par, S, B)


def classic_steps(tier, tiers_per_step: int, U, R, bc, ghosts, xp, steps: int = 1):
    """`steps` whole steps in the classic order; returns the new state (NV, n)."""
    for _ in range(steps):
        if tiers_per_step == 1:
            U = classic_tier(tier, 0, U, U, R, bc, ghosts, xp)
        else:  # predictor (odd tier) into a second row, then the final tier
            Up = classic_tier(tier, 1, U, U, R, bc, ghosts, xp)
            U = classic_tier(tier, 0, Up, U, R, bc, ghosts, xp)
    return U


def steps_per_cycle(W: int, R: int, tiers_per_step: int) -> int:
    """Steps between two swept outputs: a block of W nodes spans W / (2R) tiers."""
    return W // (2 * R) // tiers_per_step


def _neighbour_offsets(g, r: int, n: int, bc: str):
    """Offset, inside a block's contiguous window, of the value node g reads at stencil offset r,
    and the mask of reads that are ghost states (dirichlet). The same rule as `fetch` in the
    kernels."""
    j = g + r
    delta = np.full(g.shape, r)
    ghost_l = ghost_r = None
    if bc == "mirror":
        delta = np.where(j < 0, -2 * g - r, delta)
        delta = np.where(j >= n, 2 * (n - 1 - g) - r, delta)
    elif bc == "dirichlet":
        ghost_l, ghost_r = j < 0, j >= n
    return delta, ghost_l, ghost_r


def swept_emulate(tier, U, cycles: int, W: int, R: int, tiers_per_step: int, bc: str, ghosts, xp):
    """Advance U (NV, n) by cycles · steps_per_cycle steps in the order of the swept kernels:
    an up-triangle on blocks [bW, (b+1)W), then cycles − 1 diamonds on blocks shifted by W/2 and
    back, then a down-triangle that writes the full row. Between stages only the two working
    rows of every block (its edges) are kept, as the kernels keep them in global memory."""
    NV, n = U.shape
    assert n % W == 0 and cycles >= 1
    nb, SW, T = n // W, W + 2 * R, W // (2 * R)
    dtype = U.dtype
    gl = gr = None
    if bc == "dirichlet":
        gl = xp.asarray(ghosts[0], dtype=dtype)[:, None, None]
        gr = xp.asarray(ghosts[1], dtype=dtype)[:, None, None]
    blocks = np.arange(nb)

    def run_tier(s, g0, j, lo, hi):
        par = j & 1
        xs = np.arange(lo, hi + 1)
        g = (g0[:, None] + xs[None, :]) % n                    # (nb, m) node of each position
        rowA = s[par ^ 1].reshape(NV, nb * SW)
        S = []
        for r in range(-R, R + 1):
            delta, ml, mr = _neighbour_offsets(g, r, n, bc)
            flat = blocks[:, None] * SW + R + xs[None, :] + delta
            v = rowA[:, xp.asarray(flat)]
            if ml is not None:
                v = xp.where(xp.asarray(ml)[None], gl, v)
                v = xp.where(xp.asarray(mr)[None], gr, v)
            S.append(v)
        b = s[par][:, :, R + lo:R + hi + 1]
        s[par][:, :, R + lo:R + hi + 1] = tier(par, S, b)

    def load(E, g0):
        """A fresh shared memory (NaN) holding the W + 2R window of both rows around each block."""
        s = xp.full((2, NV, nb, SW), np.nan, dtype=dtype)
        idx = (g0[:, None] - R + np.arange(SW)[None, :]) % n
        s[...] = E[:, :, xp.asarray(idx)]
        return s

    def dump(s, g0):
        E = xp.empty((2, NV, n), dtype=dtype)
        idx = (g0[:, None] + np.arange(W)[None, :]) % n
        E[:, :, xp.asarray(idx)] = s[:, :, :, R:R + W]
        return E

    def expand(s, g0):
        for j in range(1, T + 1):
            run_tier(s, g0, j, W // 2 - R * j, W // 2 + R * j - 1)

    def contract(s, g0, offset):
        for j in range(1, T):
            run_tier(s, g0, offset + j, R * j, W - 1 - R * j)

    # up-triangle: row 0 = the state (tier 0), row 1 never read before written
    g0 = blocks * W
    s = xp.full((2, NV, nb, SW), np.nan, dtype=dtype)
    s[0][:, :, R:R + W] = U.reshape(NV, nb, W)
    contract(s, g0, 0)
    E = dump(s, g0)
    for stage in range(1, cycles):  # diamonds: expand to the full row, contract again
        g0 = blocks * W + (stage % 2) * (W // 2)
        s = load(E, g0)
        expand(s, g0)
        contract(s, g0, T)
        E = dump(s, g0)
    g0 = blocks * W + (cycles % 2) * (W // 2)  # down-triangle: the full row T (even: row 0)
    s = load(E, g0)
    expand(s, g0)
    out = xp.empty_like(U)
    idx = (g0[:, None] + np.arange(W)[None, :]) % n
    out[:, xp.asarray(idx)] = s[0][:, :, R:R + W]
    return out


def sum_in_order(t: float, dt: float, m: int) -> float:
    """t + dt + … + dt (m steps) added left to right: the time after m whole steps of dt, bit for
    bit what m calls of core.clock.after_step give where no step lands (cumsum adds in order)."""
    acc = np.full(m + 1, float(dt))
    acc[0] = t
    return float(np.cumsum(acc)[-1])


# ---- heat-1d: T_i' = Fo (T_{i+1} + T_{i−1}) + (1 − 2 Fo) T_i (eq. (4)) -------------------------
def heat_tier(fo: float):
    """The update of eq. (4) as a tier on a three-point stencil S = (T_{i−1}, T_i, T_{i+1})."""
    c = 1 - 2 * fo

    def tier(par, S, b):
        return fo * (S[0] + S[2]) + c * S[1]
    return tier


# ---- ks-1d: u_t = −(u u_x + u_xx + u_xxxx), midpoint RK2 (eqs. (7)–(9)) --------------------------
def ks_rhs(S, dx: float):
    """f(u) of eq. (7) from the stencil S = (u_{i−2}, …, u_{i+2})."""
    c1, c2, c4 = 1 / (4 * dx), 1 / dx**2, 1 / dx**4
    return -((S[3] * S[3] - S[1] * S[1]) * c1
             + (S[3] - 2 * S[2] + S[1]) * c2
             + (S[4] - 4 * S[3] + 6 * S[2] - 4 * S[1] + S[0]) * c4)


def ks_tier(dt: float, dx: float):
    """Predictor tier (par 1): u + Δt/2 f(u); final tier (par 0): u_old + Δt f(u*)."""
    h = dt / 2

    def tier(par, S, b):
        if par:
            return S[2] + h * ks_rhs(S, dx)
        return b + dt * ks_rhs(S, dx)
    return tier


def stable_dt(dx: float) -> float:
    """Linear stability limit of midpoint RK2 for the 5-point operator: the most negative
    eigenvalue −16/Δx⁴ + 4/Δx² (at the grid frequency) times Δt must stay ≥ −2."""
    lam = 16 / dx**4 - 4 / dx**2
    return 2 / lam if lam > 0 else math.inf


# ---- the schemes --------------------------------------------------------------------------------
class TieredScheme(SchemeBase):
    """A tiered scheme with the fixed step `sim.dt` on the state `sim.U` (NV, n) (the rows of
    which are the state arrays). `step` takes one classic step. `run` takes whole batches of
    `period()` steps first where the method has them (here: swept cycles, by the emulation of the
    kernels' order, with method=swept), then classic steps for the rest, keeping time with
    core.clock exactly as step-by-step stepping would. A model's subclass sets the stencil's shape
    (R, tiers_per_step, bc) and provides `tier`, `ghosts` and `kernel_args` (the scalars of the
    same tier as the fused kernels take them: fused.py's classes derive from these)."""

    R: ClassVar[int] = 1
    tiers_per_step: ClassVar[int] = 1
    bc: ClassVar[str] = "mirror"

    def tier(self, dt: float):  # pragma: no cover - abstract
        """tier(par, S, b) -> new row: the scheme's tiers with step dt, as xp code."""
        raise NotImplementedError

    def ghosts(self):
        """The Dirichlet ghost states (left, right), or None."""
        return None

    def kernel_args(self, dt: float) -> tuple:  # pragma: no cover - abstract
        """The scalars after (…, n) in the kernels' signatures (kernels/<model>.cu)."""
        raise NotImplementedError

    def period(self) -> int:
        """Steps per batch of `run` (0: classic steps only)."""
        return self.sim.cycle_steps if self.sim.params["method"] == "swept" else 0

    def classic(self, dt: float) -> None:
        sim = self.sim
        sim.U[...] = classic_steps(self.tier(dt), self.tiers_per_step, sim.U, self.R, self.bc,
                                   self.ghosts(), sim.xp)

    def batch(self, count: int, dt: float) -> None:
        """`count` batches of period() whole steps of dt."""
        sim = self.sim
        sim.U[...] = swept_emulate(self.tier(dt), sim.U, count, sim.params["block"], self.R,
                                   self.tiers_per_step, self.bc, self.ghosts(), sim.xp)

    def step(self, t: float, dt_limit: float | None) -> float:
        dt = self.sim.dt if dt_limit is None else min(self.sim.dt, dt_limit)
        self.classic(dt)
        return dt

    def run(self, count: int, t: float, t_end: float | None) -> tuple[int, float]:
        dt = float(self.sim.dt)
        if not (math.isfinite(dt) and dt > 0):
            raise NonFiniteStep(f"time step {dt}")
        k, P = 0, self.period()
        if P and count >= P:
            batches = clock.full_steps(t, dt, count, t_end) // P
            if batches:
                self.batch(batches, dt)
                k = batches * P
                t = sum_in_order(t, dt, k)
        while k < count and not clock.landed(t, t_end):
            t = clock.after_step(t, self.step(t, clock.limit(t, t_end)), t_end)
            k += 1
        return k, t


class HeatScheme(TieredScheme):
    """heat-1d: forward Euler, one tier per step, mirrored ends."""

    R, tiers_per_step, bc = 1, 1, "mirror"

    def fo(self, dt: float) -> float:
        """The Fourier number of a step dt: α Δt / Δx²."""
        return dt * self.sim.params["alpha_heat"] / self.sim.dx**2

    def tier(self, dt):
        return heat_tier(self.fo(dt))

    def kernel_args(self, dt):
        return (self.sim.real(self.fo(dt)),)


class KSScheme(TieredScheme):
    """ks-1d: midpoint RK2 (two tiers per step) on the periodic 5-point stencil."""

    R, tiers_per_step, bc = 2, 2, "periodic"

    def tier(self, dt):
        return ks_tier(dt, self.sim.dx)

    def kernel_args(self, dt):
        r, dx = self.sim.real, self.sim.dx
        return (r(dt), r(1 / (4 * dx)), r(1 / dx**2), r(1 / dx**4))


class EulerScheme(TieredScheme):
    """euler-1d: two tiers per step of the finite volumes of `scheme` (gas.py), Dirichlet ends
    holding the tube's left and right states, or periodic (`boundary`)."""

    R, tiers_per_step = 2, 2

    @property
    def bc(self) -> str:
        return self.sim.params["boundary"]

    def tier(self, dt):
        p = self.sim.params
        return TIERS[p["scheme"]](dt / self.sim.dx, p["gamma"], self.sim.xp)

    def ghosts(self):
        return self.sim.left, self.sim.right

    def kernel_args(self, dt):
        sim, r = self.sim, self.sim.real
        return ((r(dt / sim.dx), r(sim.params["gamma"]), np.int32(self.bc == "periodic"))
                + tuple(r(v) for v in sim.left) + tuple(r(v) for v in sim.right))

    def invalidate(self) -> None:
        """The state or cfl changed from outside the stepping: Δt follows them (sim.forget_dt)."""
        self.sim.forget_dt()
