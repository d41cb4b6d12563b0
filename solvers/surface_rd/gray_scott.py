"""gray-scott: the Gray–Scott reaction–diffusion system on a triangulated surface, on the same
operators and kernels as chemotaxis (an extra of SPEC §2):

    ∂u/∂t = Du Δu − u v² + F (1 − u)
    ∂v/∂t = Dv Δv + u v² − (F + k) v

Δ the cotangent Laplace–Beltrami operator, zero flux on open boundaries, explicit Euler with
δt = C·dx². Stability bound: the diffusion modes need δt·max(Du, Dv)·λ_max ≤ 2 and the reaction
Jacobian [[−v² − F, −2uv], [v², 2uv − F − k]] has Gershgorin radius ≤ 3 + F + k for u, v in
[0, 1], so δt ≤ 2 / (max(Du, Dv) λ_max + 3 + F + k). Initial state u = 1, v = 0 with a few
seeded spots (u = 1/2, v = 1/4) of radius 1 plus 1% noise.
"""
from __future__ import annotations

import numpy as np

from ..core.params import SEED, Param
from ..core.registry import register
from ..core.simulation import FieldInfo
from .base import MESH_PARAMS, STEP_PARAMS, SurfaceRD


def gray_scott_rhs(u, v, ops, p: dict, xp):
    """(∂u/∂t, ∂v/∂t) as array code (reference, CPU backend, GPU `array` path)."""
    lap = ops.laplacian(xp.stack([u, v], axis=1))
    uvv = u * v * v
    du = p["Du"] * lap[:, 0] - uvv + p["F"] * (1 - u)
    dv = p["Dv"] * lap[:, 1] + uvv - (p["F"] + p["k"]) * v
    return du, dv


@register
class GrayScott(SurfaceRD):
    model = "gray-scott"
    title = "Gray–Scott on surfaces"
    description = ("Gray–Scott reaction–diffusion on a triangulated surface with the cotangent "
                   "Laplace–Beltrami operator and explicit Euler (same machinery as chemotaxis).")
    species = ("u", "v")
    parameters = MESH_PARAMS + (
        Param("Du", "float", 0.02, "Diffusion rate of u.", lo=0, lo_open=True),
        Param("Dv", "float", 0.01, "Diffusion rate of v.", lo=0, lo_open=True),
        Param("F", "float", 0.037, "Feed rate F.", lo=0, hi=1),
        Param("k", "float", 0.06, "Kill rate k.", lo=0, hi=1),
        Param("spots", "int", 12, "Number of seeded initial spots of v.", lo=0, hi=10_000),
    ) + STEP_PARAMS + (SEED,)
    field_infos = {
        "u": FieldInfo("vertex", "", "substrate u", (0.0, 1.0), lo=0.0),
        "v": FieldInfo("vertex", "", "activator v", (0.0, 0.5), lo=0.0),
    }
    default_field = "v"
    fused_rung = "gs"

    def stability_bound(self, lam):
        p = self.params
        bound = 2.0 / (max(p["Du"], p["Dv"]) * lam + 3 + p["F"] + p["k"])
        return bound, "2/(max(Du, Dv)·λ_max + 3 + F + k)"

    def initial_state(self, mesh, rng):
        n_v = mesh.n_vertices
        u = np.ones(n_v)
        v = np.zeros(n_v)
        centres = mesh.points[rng.choice(n_v, size=min(self.params["spots"], n_v), replace=False)]
        for c in centres:
            near = np.linalg.norm(mesh.points - c, axis=1) < 1.0
            u[near], v[near] = 0.5, 0.25
        u *= 1 + 0.01 * rng.uniform(-1, 1, n_v)
        v *= 1 + 0.01 * rng.uniform(-1, 1, n_v)
        return u, v

    def rhs(self, u, v, ops, xp):
        return gray_scott_rhs(u, v, ops, self.params, xp)

    def fused_args(self):
        p, r = self.params, self.real
        return (r(p["Du"]), r(p["Dv"]), r(p["F"]), r(p["k"]))
