"""Explicit stencil schemes of seed 003 as array code, in both orders of operations.

A scheme is a sequence of *tiers* (sub-time-steps). Tier j computes, at every node, a new value of
row j % 2 from the values of row (j − 1) % 2 at the node and its R neighbours on each side (the
stencil `S[0..2R]`, S[R] = the node itself) and from the node's own old value in row j % 2 (`b`):

    heat:                 one tier per step, R = 1                        (row parity unused)
    Kuramoto–Sivashinsky: predictor tier (odd j) + final tier (even j), R = 2
    Euler:                the same two tiers on (ρ, ρu, E), R = 2

Arrays have the components first: shape (NV, n) for a state, (NV, ...) for a stencil slice, so the
same `tier(par, S, b)` function serves the whole-domain ("classic") order and the swept order.

Boundaries, applied where a stencil crosses the end of the domain (node j = g + r outside [0, n)):
    "mirror"    node −j resp. 2(n − 1) − j (insulated ends of heat-1d: T_{−1} = T_1),
    "periodic"  node j mod n (ks-1d),
    "dirichlet" a fixed ghost state (euler-1d: the left/right states of the tube).

`classic_tier` evaluates a tier over the whole domain at once (the float64 reference, the CPU path
and the GPU `array` path). `swept_emulate` evaluates the same tiers in the order of the swept GPU
kernels (Magee & Niemeyer §4: every block of W nodes advances its triangle, then diamonds between
shifted blocks, passing only the two working rows of each block — its edges — between stages) on
arrays that stand for the blocks' shared memory. Its shared memory starts as NaN, so a value used
before it was computed would poison the result: `swept == classic` (bit for bit in NumPy) is the
test that the order of operations is right.
"""
from __future__ import annotations

import numpy as np

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
