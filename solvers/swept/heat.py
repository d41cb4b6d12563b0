"""heat-1d: T_t = α T_xx on a rod with insulated ends (seed 003 Appendix B, SPEC §4).

Forward Euler in time, central differences in space (the paper's eq. (4)):
    T_i' = Fo (T_{i+1} + T_{i−1}) + (1 − 2 Fo) T_i,   Fo = α Δt / Δx² ≤ ½,
with mirrored ghost nodes T_{−1} = T_1, T_n = T_{n−2} (zero flux, eq. (5)). Nodes x_i = i Δx,
Δx = L/(nx−1). A cosine mode cos(kπx/L) is an exact eigenvector of the discrete operator: it decays
by the factor 1 − 2 Fo (1 − cos(kπΔx/L)) per step, which the tests use.
One tier per step with a three-point stencil: the swept rule's first-order domain of dependence.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.params import Param, Scenario
from ..core.registry import register
from ..core.simulation import FieldInfo
from ..mesh import Grid1D
from . import stencil
from .model import BLOCK, METHOD, SweptSimulation


def heat_tier(fo: float):
    """The update of eq. (4) as a tier on a three-point stencil S = (T_{i−1}, T_i, T_{i+1})."""
    c = 1 - 2 * fo

    def tier(par, S, b):
        return fo * (S[0] + S[2]) + c * S[1]
    return tier


def heat_step(u, fo: float, xp):
    """One forward-Euler step of the insulated rod, as array code (the float64 reference, the
    CPU backend and the GPU `array` path)."""
    return stencil.classic_tier(heat_tier(fo), 0, u[None], u[None], 1, "mirror", None, xp)[0]


@register
class Heat1D(SweptSimulation):
    model = "heat-1d"
    title = "Heat equation (1D)"
    description = ("T_t = α T_xx on an insulated rod: forward Euler, central differences; "
                   "classic or swept GPU kernels (seed 003, Magee & Niemeyer).")
    parameters = (
        Param("nx", "int", 1024, "Number of grid nodes along the rod.", lo=3, hi=2**28),
        Param("L", "float", 1.0, "Length of the rod.", unit="m", lo=0, lo_open=True),
        Param("alpha_heat", "float", 1.0, "Thermal diffusivity α.", unit="m²/s", lo=0,
              lo_open=True),
        Param("Fo", "float", 0.45, "Fourier number α Δt / Δx² (explicit stability needs ≤ ½); "
              "fixes the time step.", lo=0, hi=0.5, lo_open=True, live=True),
        Param("mode", "int", 1, "Wave number k of the initial cosine mode cos(kπx/L).", lo=0,
              hi=10**6),
        Param("amplitude", "float", 1.0, "Amplitude of the initial cosine mode.", unit="K"),
        Param("T_mean", "float", 0.0, "Mean temperature (conserved with insulated ends).",
              unit="K"),
        METHOD,
        BLOCK,
    )
    scenarios = (Scenario("insulated-rod", "A rod with insulated ends; the initial temperature "
                          "is T_mean + amplitude·cos(kπx/L), which decays exactly as "
                          "exp(−α(kπ/L)² t)."),)
    field_infos = {"T": FieldInfo("node", "K", "temperature")}
    default_field = "T"
    R, NV, tiers_per_step, bc = 1, 1, 1, "mirror"
    CU_FILE = Path(__file__).with_name("heat.cu")
    state_names = ("T",)
    PREFIX = "heat"

    def _setup(self) -> None:
        p = self.params
        x = np.linspace(0.0, p["L"], p["nx"])
        self.mesh = Grid1D(x)
        self.dx = p["L"] / (p["nx"] - 1)
        T0 = p["T_mean"] + p["amplitude"] * np.cos(p["mode"] * np.pi * x / p["L"])
        self._U = self.xp.asarray(T0[None, :], dtype=self.dtype)
        self._bind_state()
        self._setup_buffers()


    @property
    def dt(self) -> float:
        """The fixed step Δt = Fo Δx² / α."""
        return self.params["Fo"] * self.dx**2 / self.params["alpha_heat"]

    def _fo(self, dt: float) -> float:
        return dt * self.params["alpha_heat"] / self.dx**2

    def _tier_fn(self, dt):
        return heat_tier(self._fo(dt))

    def _kernel_args(self, dt):
        return (self.real(self._fo(dt)),)
