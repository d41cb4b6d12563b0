"""chemotaxis: Murray & Myerscough's cell–chemotaxis model of snake-skin pigmentation on a
triangulated surface (seed 001 eq. (1); SPEC §2.1):

    ∂n/∂t = D Δn − α n Δc − α ∇n·∇c + s r n (N − n)
    ∂c/∂t = Δc + s ( n/(1+n) − c )

n = `cells` (cell density f_n), c = `chemo` (chemoattractant f_c), zero flux on open boundaries
(built into the cotangent operator), explicit Euler with fixed δt = C·dx².

Stability bound (derived here). About the uniform state (N, N/(1+N)), a Laplacian eigenmode with
eigenvalue −λ evolves by the Jacobian J(λ) = [[−Dλ − srN, αNλ], [s/(1+N)², −λ − s]]. Explicit
Euler needs |1 + δt μ| ≤ 1 for every eigenvalue μ of J(λ) with Re μ < 0, i.e.
δt ≤ min −2 Re μ/|μ|² over λ in [0, λ_max] (`linear_euler_bound`), λ_max bounded by Gershgorin
(largest absolute row sum of L). On fine meshes this tends to 2 / max(λ_max + s, Dλ_max + srN)
(the off-diagonal coupling is O(1) against diagonals O(λ) apart); on coarse ones the coupling
lowers it. A larger δt is refused.

Turing threshold: det J(λ) < 0 for some λ > 0 iff αN/(1+N)² > D + rN + 2√(D r N); with the
paper's D, r, s, N that is α > 12.023, so the paper's α = 12.02 sits on the threshold (the uniform
state is neutrally stable and perturbations decay). The default here is α = 13 (growth rate
≈ 0.108·s at wavelength ≈ 3.8/√s; the spots need ≳ 12 mesh points per wavelength, e.g. the default
20,000-vertex rectangle); the paper's value is one `--set alpha=12.02` away.
"""
from __future__ import annotations

import numpy as np

from ..core.params import SEED, Param
from ..core.registry import register
from ..core.simulation import FieldInfo
from .base import MESH_PARAMS, STEP_PARAMS, SurfaceRD, linear_euler_bound


def chemotaxis_rhs(n, c, ops, p: dict, xp):
    """(∂n/∂t, ∂c/∂t) of eq. (1) as array code: the float64 reference, the CPU backend and the
    GPU `array` path (the paper's naive baseline: Laplacians, face gradients, vertex gradients,
    then the update)."""
    nc = xp.stack([n, c], axis=1)
    lap = ops.laplacian(nc)  # (N, 2)
    grad = ops.vertex_gradient(nc)  # (N, 3, 2)
    dot = (grad[:, :, 0] * grad[:, :, 1]).sum(axis=1)
    lap_n, lap_c = lap[:, 0], lap[:, 1]
    D, a, s, r, N = (p[k] for k in ("D", "alpha", "s", "r", "N"))
    dn = D * lap_n - a * n * lap_c - a * dot + (s * r) * n * (N - n)
    dc = lap_c + s * (n / (1 + n) - c)
    return dn, dc


def turing_threshold(D: float, r: float, N: float) -> float:
    """The α above which the uniform state is unstable (see the module docstring)."""
    return (1 + N) ** 2 / N * (D + r * N + 2 * np.sqrt(D * r * N))


@register
class Chemotaxis(SurfaceRD):
    model = "chemotaxis"
    title = "Chemotaxis on surfaces"
    description = ("Murray–Myerscough cell–chemotaxis reaction–diffusion on a triangulated "
                   "surface: cotangent Laplace–Beltrami, face and vertex gradients, explicit "
                   "Euler (seed 001, Descombes, Dhillon & Zwicker).")
    species = ("cells", "chemo")
    parameters = MESH_PARAMS + (
        Param("D", "float", 0.25, "Cell diffusion rate D.", lo=0, lo_open=True),
        Param("r", "float", 1.522, "Cell growth rate r.", lo=0),
        Param("alpha", "float", 13.0, "Chemotactic rate α (the paper's 12.02 sits just below "
              "the Turing threshold 12.023; above it patterns grow).", lo=0),
        Param("s", "float", 1.0, "Scale factor s (patterns shrink as 1/√s).", lo=0,
              lo_open=True),
        Param("N", "float", 1.0, "Maximum cell density (carrying capacity) N.", lo=0,
              lo_open=True),
        Param("perturbation", "float", 0.01, "Relative amplitude of the seeded random "
              "perturbation of the uniform initial state.", lo=0, hi=1),
    ) + STEP_PARAMS + (SEED,)
    field_infos = {
        "cells": FieldInfo("vertex", "", "cell density f_n", (0.0, 2.0), lo=0.0),
        "chemo": FieldInfo("vertex", "", "chemoattractant density f_c", (0.0, 1.0), lo=0.0),
    }
    default_field = "cells"

    def jacobian(self, lam: np.ndarray) -> np.ndarray:
        """J(λ) of the linearisation about the uniform state (module docstring)."""
        p = self.params
        D, a, s, r, N = (p[k] for k in ("D", "alpha", "s", "r", "N"))
        J = np.empty((len(lam), 2, 2))
        J[:, 0, 0], J[:, 0, 1] = -D * lam - s * r * N, a * N * lam
        J[:, 1, 0], J[:, 1, 1] = s / (1 + N) ** 2, -lam - s
        return J

    def stability_bound(self, lam):
        return (linear_euler_bound(self.jacobian, lam),
                "min −2Re μ/|μ|² over the eigenvalues μ of the linearisation J(λ), λ ≤ λ_max")

    def initial_state(self, mesh, rng):
        p = self.params
        n_v = mesh.n_vertices
        eps = p["perturbation"]
        n0 = p["N"] * (1 + eps * rng.uniform(-1, 1, n_v))
        c0 = p["N"] / (1 + p["N"]) * (1 + eps * rng.uniform(-1, 1, n_v))
        return n0, c0

    def rhs(self, n, c, ops, xp):
        return chemotaxis_rhs(n, c, ops, self.params, xp)

    def fused_args(self):
        p = self.params
        r = self.real
        return (r(p["D"]), r(p["alpha"]), r(p["s"] * p["r"]), r(p["N"]), r(p["s"]))
