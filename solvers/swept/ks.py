"""ks-1d: the Kuramoto–Sivashinsky equation u_t = −(u u_x + u_xx + u_xxxx), periodic
(seed 003 Appendix C, SPEC §4).

Central differences on a five-point stencil (eq. (7), with −2u_i in the second difference):
    f(u)_i = −[ (u_{i+1}² − u_{i−1}²)/(4Δx) + (u_{i+1} − 2u_i + u_{i−1})/Δx²
               + (u_{i+2} − 4u_{i+1} + 6u_i − 4u_{i−1} + u_{i−2})/Δx⁴ ],
midpoint RK2 in time (eqs. (8)–(9)): predictor u* = u + Δt/2 f(u), final u' = u + Δt f(u*).
Two tiers per step on a radius-2 stencil: the swept rule's second-order domain of dependence.
Every term of f is a difference of fluxes, so Σ_i u_i (the mean) is conserved to round-off.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.errors import ParameterError
from ..core.params import Param, Scenario
from ..core.registry import register
from ..core.simulation import FieldInfo
from ..mesh import Grid1D
from .model import BLOCK, METHOD, SweptSimulation


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


@register
class KuramotoSivashinsky1D(SweptSimulation):
    model = "ks-1d"
    title = "Kuramoto–Sivashinsky (1D)"
    description = ("u_t = −(u u_x + u_xx + u_xxxx), periodic: 5-point central differences, "
                   "midpoint RK2; classic or swept GPU kernels (seed 003).")
    parameters = (
        Param("nx", "int", 256, "Number of grid nodes on the periodic domain.", lo=8, hi=2**28),
        Param("L", "float", 32 * math.pi, "Length of the periodic domain.", lo=0, lo_open=True),
        Param("dt", "float", None, "Fixed time step; empty: min(¼ of the linear stability "
              "limit ≈ Δx⁴/8 of midpoint RK2, Δx/20 for the advection of |u| ≲ 4).", lo=0,
              lo_open=True, nullable=True),
        Param("amplitude", "float", 1.0, "Amplitude of the initial state "
              "a·cos(2πx/L)(1 + sin(2πx/L)).", lo=0),
        METHOD,
        BLOCK,
    )
    scenarios = (Scenario("periodic-chaos", "Spatio-temporal chaos from u0 = cos(x/16)(1 + "
                          "sin(x/16)) on [0, 32π) (Kassam & Trefethen's set-up)."),)
    field_infos = {"u": FieldInfo("node", "", "the chaotic field u")}
    default_field = "u"
    R, NV, tiers_per_step, bc = 2, 1, 2, "periodic"
    CU_FILE = Path(__file__).with_name("ks.cu")
    state_names = ("u",)
    PREFIX = "ks"

    @classmethod
    def _check_params(cls, p: dict) -> None:
        super()._check_params(p)
        dx = p["L"] / p["nx"]
        lim = stable_dt(dx)
        if p["dt"] is not None and p["dt"] > lim:
            raise ParameterError(f"{cls.model}: parameter 'dt' = {p['dt']:g} exceeds the linear "
                                 f"stability limit of midpoint RK2 for Δx = {dx:.4g}; allowed: a finite "
                                 f"number in (0, {lim:.4g}]")

    def _setup(self) -> None:
        p = self.params
        self.dx = p["L"] / p["nx"]
        x = np.arange(p["nx"]) * self.dx
        self.mesh = Grid1D(x)
        k = 2 * np.pi * x / p["L"]
        u0 = p["amplitude"] * np.cos(k) * (1 + np.sin(k))
        self._U = self.xp.asarray(u0[None, :], dtype=self.dtype)
        self._bind_state()
        self._setup_buffers()


    @property
    def dt(self) -> float:
        d = self.params["dt"]
        return d if d is not None else min(stable_dt(self.dx) / 4, self.dx / 20)

    def _tier_fn(self, dt):
        return ks_tier(dt, self.dx)

    def _kernel_args(self, dt):
        r, dx = self.real, self.dx
        return (r(dt), r(1 / (4 * dx)), r(1 / dx**2), r(1 / dx**4))
