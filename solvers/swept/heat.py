"""heat-1d: T_t = α T_xx on a rod with insulated ends (seed 003, SPEC §4).

Forward Euler in time, central differences in space:
    T_i' = Fo (T_{i+1} + T_{i−1}) + (1 − 2 Fo) T_i,   Fo = α Δt / Δx² ≤ ½,
with mirrored ghost nodes T_{−1} = T_1, T_n = T_{n−2} (zero flux). Nodes x_i = i Δx, Δx = L/(nx−1).
A cosine mode cos(kπx/L) is an exact eigenvector of the discrete operator: it decays by the factor
1 − 2 Fo (1 − cos(kπΔx/L)) per step, which the tests use.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from ..core.params import Param, Scenario
from ..core.registry import register
from ..core.simulation import FieldInfo, Simulation
from ..mesh import Grid1D

CU_FILE = Path(__file__).with_name("heat.cu")
BLOCK = 256


def heat_step(u, fo: float, xp):
    """One forward-Euler step of the insulated rod, as array code (the float64 reference, the
    CPU backend and the GPU `array` path)."""
    v = xp.empty_like(u)
    c = 1 - 2 * fo
    v[1:-1] = fo * (u[2:] + u[:-2]) + c * u[1:-1]
    v[0] = fo * (u[1] + u[1]) + c * u[0]
    v[-1] = fo * (u[-2] + u[-2]) + c * u[-1]
    return v


@register
class Heat1D(Simulation):
    model = "heat-1d"
    title = "Heat equation (1D)"
    description = ("T_t = α T_xx on an insulated rod: forward Euler, central differences "
                   "(seed 003, Magee & Niemeyer).")
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
        Param("method", "str", "classic", "GPU kernel strategy: classic (one launch per step).",
              choices=("classic",)),
    )
    scenarios = (Scenario("insulated-rod", "A rod with insulated ends; the initial temperature "
                          "is T_mean + amplitude·cos(kπx/L), which decays exactly as "
                          "exp(−α(kπ/L)² t)."),)
    field_infos = {"T": FieldInfo("node", "K", "temperature")}
    bench_sizes = (2**12, 2**14, 2**16, 2**18, 2**20, 2**22)

    def _setup(self) -> None:
        p = self.params
        x = np.linspace(0.0, p["L"], p["nx"])
        self.mesh = Grid1D(x)
        self.dx = p["L"] / (p["nx"] - 1)
        T0 = p["T_mean"] + p["amplitude"] * np.cos(p["mode"] * np.pi * x / p["L"])
        self.state["T"] = self.xp.asarray(T0, dtype=self.dtype)
        self._buf = self.xp.empty_like(self.state["T"])
        if self.kernel == "fused":
            self._kernels = load_kernels(CU_FILE, self.dtype, ["heat_step"])

    @property
    def dt(self) -> float:
        """The fixed step Δt = Fo Δx² / α."""
        return self.params["Fo"] * self.dx**2 / self.params["alpha_heat"]

    def _step(self, dt_limit):
        dt = self.dt if dt_limit is None else min(self.dt, dt_limit)
        fo = dt * self.params["alpha_heat"] / self.dx**2
        u = self.state["T"]
        if self.kernel == "fused":
            n = u.size
            self._kernels["heat_step"](((n + BLOCK - 1) // BLOCK,), (BLOCK,),
                                       (u, self._buf, np.int32(n), self.real(fo)))
            self.state["T"], self._buf = self._buf, u
        else:
            self.state["T"] = heat_step(u, fo, self.xp)
        return dt

    def work(self):
        n = self.params["nx"]
        return n, 2 * n * np.dtype(self.dtype).itemsize  # read T once, write T' once
