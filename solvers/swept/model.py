"""heat-1d, ks-1d and euler-1d: one-dimensional explicit PDEs of docs/MODELS.md [P3] (Magee & Niemeyer,
docs/MODELS.md §4), each with classic, classic-graph and swept GPU kernels (`method`, fused.py).

    heat-1d   T_t = α T_xx on a rod with insulated ends: forward Euler, central differences
              (the paper's eq. (4)), T_i' = Fo (T_{i+1} + T_{i−1}) + (1 − 2 Fo) T_i, Fo ≤ ½, with
              mirrored ghost nodes T_{−1} = T_1, T_n = T_{n−2} (zero flux, eq. (5)); nodes
              x_i = i Δx, Δx = L/(nx−1). One tier per step on a three-point stencil.
    ks-1d     u_t = −(u u_x + u_xx + u_xxxx), periodic: central differences on a five-point
              stencil (eq. (7)), midpoint RK2 (eqs. (8)–(9)) as two tiers per step. Every term is
              a difference of fluxes, so the mean is conserved to round-off.
    euler-1d  the compressible Euler equations, Q = (ρ, ρu, E), P = (γ − 1)(E − (ρu)²/(2ρ))
              (eq. (13)), on cells of width Δx = L/nx, two ghost cells each side: Dirichlet
              (the left and right states) or periodic (`boundary`). Two schemes (`scheme`,
              gas.py), both two tiers per step on a five-cell stencil: muscl-hllc (default;
              MUSCL on (ρ, u, P), third-order face values where smooth, superbee at jumps, LimO3
              elsewhere; HLLC flux, SSP-RK2: ≥ second order on smooth flow, smooth extrema not
              clipped) and paper (the pressure-ratio limiter and Rusanov flux at the Roe average of
              eqs. (15)–(21), whose extracted eq. (21) has a wrong sign; midpoint RK2). Scenarios
              Sod's tube (diaphragm at L/2) and a periodic entropy wave (the order test).

The numerics are in reference.py (the tiers as xp code, the schemes) and fused.py with
kernels/*.cu (the CUDA schemes); the initial conditions in scenarios.py, closed forms in exact.py.
Each model keeps its prognostic variables in `U`, an (NV, n) array whose rows are the state arrays
(`state_names`), and a fixed step `dt` (the swept rule needs one Δt for all tiers).
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..core.errors import ParameterError
from ..core.params import CFL, Param, Scenario
from ..core.registry import register
from ..core.scheme import SchemeEntry, SchemeTable
from ..core.simulation import FieldInfo, QuantityInfo, Simulation
from ..mesh import Grid1D
from . import fused, reference, scenarios
from .gas import SCHEMES, euler_dt, pressure

METHODS = ("classic", "classic-graph", "swept")


def method_table(ref, fused_cls, options=({},)) -> SchemeTable:
    """The three GPU strategies (`method`) of one scheme: the same classes, other launches; the
    swept entry is checked on a grid it can tile."""
    tile = {"nx": 1024, "block": 128}
    return SchemeTable("method", {
        m: SchemeEntry(ref, fused_cls, tuple({**o, **tile} if m == "swept" else o
                                             for o in options)) for m in METHODS})
BLOCKS = (32, 64, 128, 256, 512, 1024)

METHOD = Param("method", "str", "classic",
               "GPU strategy: classic (one launch per sub-step), classic-graph (the same kernels "
               "replayed from a CUDA graph of 256 steps), swept (swept time-space decomposition "
               "in shared memory; output every block/2 steps for heat, block/8 for KS and Euler, "
               "classic steps for the rest). On the CPU and the array path swept runs its array "
               "emulation and classic-graph runs classic.",
               choices=METHODS)
BLOCK = Param("block", "int", 256,
              "Threads per GPU block; for swept also the nodes per block (nx must be a multiple).",
              choices=BLOCKS)


class SweptSimulation(Simulation):
    """What the three models share: `method` and `block`, the state as the rows of `U`, the
    steps of a swept cycle (`cycle_steps`: block / (2R) tiers) and the benchmark settings."""

    state_names: ClassVar[tuple[str, ...]] = ()  # the rows of self.U, in order
    check_interval = 4096
    size_param = "nx"
    bench_sizes = tuple(2**k for k in range(11, 21, 3))
    bench_variants = ({"method": "classic"}, {"method": "classic-graph"}, {"method": "swept"})

    @classmethod
    def _check_params(cls, p: dict) -> None:
        if p["method"] == "swept":
            W, n = p["block"], p["nx"]
            if n % W or n < W:
                near = max(W, round(n / W) * W)
                raise ParameterError(
                    f"{cls.model}: parameter 'nx' = {n} cannot be tiled by method 'swept' with "
                    f"'block' = {W}: allowed: nx a positive multiple of block (e.g. {near}), or a "
                    f"smaller block, or method 'classic'")

    def _start(self, x, U0) -> None:
        """The common end of _setup: the mesh on the nodes x, the state U0 (NV, n)."""
        self.mesh = Grid1D(x)
        self.set_rows(self.xp.asarray(U0, dtype=self.dtype))
        S = self.schemes.entry(self.params).reference
        self.cycle_steps = reference.steps_per_cycle(self.params["block"], S.R, S.tiers_per_step)
        if self.params["method"] == "swept":
            self.check_interval = max(self.check_interval, 64 * self.cycle_steps)

    def set_rows(self, U) -> None:
        """Make U (NV, n) the state: the state arrays become its rows (a ping-pong swap)."""
        self.U = U
        for c, name in enumerate(self.state_names):
            self.state[name] = U[c]

    def work(self):
        n = self.params["nx"]
        nv = len(self.state_names)
        return n, 2 * nv * n * np.dtype(self.dtype).itemsize  # read and write the state once


@register
class Heat1D(SweptSimulation):
    model = "heat-1d"
    title = "Heat equation (1D)"
    description = ("T_t = α T_xx on an insulated rod: forward Euler, central differences; "
                   "classic or swept GPU kernels ([P3], docs/MODELS.md, Magee & Niemeyer).")
    parameters = (
        Param("nx", "int", 1024, "Number of grid nodes along the rod.", lo=3, hi=2**28),
        Param("L", "float", 1.0, "Length of the rod.", unit="m", lo=0, lo_open=True),
        Param("alpha_heat", "float", 1.0, "Thermal diffusivity α.", unit="m²/s", lo=0,
              lo_open=True, live=True),
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
    state_names = ("T",)
    quantity_infos = {
        "heat": QuantityInfo("K·m", "∫ T dx (trapezoidal rule): conserved with insulated ends"),
        "max T": QuantityInfo("K", "highest temperature"),
        "min T": QuantityInfo("K", "lowest temperature"),
        "error": QuantityInfo("K", "max |T − T_exact|, T_exact the continuous decay of the "
                              "initial cosine mode, exp(−α(kπ/L)² t)"),
    }

    def _quantities(self) -> dict:
        p, T = self.params, self.U[0]
        xp = self.xp
        if getattr(self, "_x_dev", None) is None:
            self._x_dev = xp.asarray(self.mesh.x)
        k = p["mode"] * math.pi / p["L"]  # exact.heat_mode, on the backend
        exact_T = p["T_mean"] + p["amplitude"] * math.exp(-p["alpha_heat"] * k * k * self.t) \
            * xp.cos(k * self._x_dev)
        heat = (T.sum() - 0.5 * (T[0] + T[-1])) * self.dx
        return {"heat": heat, "max T": T.max(), "min T": T.min(),
                "error": self.xp.abs(T - exact_T).max()}
    schemes = method_table(reference.HeatScheme, fused.HeatFused)
    check_params = {"nx": 1000}

    def _setup(self) -> None:
        p = self.params
        x = np.linspace(0.0, p["L"], p["nx"])
        self.dx = p["L"] / (p["nx"] - 1)
        T0 = scenarios.cosine_mode(x, p["L"], p["mode"], p["amplitude"], p["T_mean"])
        self._start(x, T0[None, :])

    @property
    def dt(self) -> float:
        """The fixed step Δt = Fo Δx² / α."""
        return self.params["Fo"] * self.dx**2 / self.params["alpha_heat"]

    def divergence_advice(self) -> str:
        return ("With Fo ≤ ½ every step is a convex combination of neighbouring values (a "
                "maximum principle), so a smaller Fo cannot help: non-finite values come from "
                "the data, values near the limit of the real type (±1.8e308 in float64, ±3.4e38 "
                "in float32); rescale the temperature (or use float64).")

    memory_per_cell = 64  # peak host bytes per cell, float64 (core/memory.py)


@register
class KuramotoSivashinsky1D(SweptSimulation):
    model = "ks-1d"
    title = "Kuramoto–Sivashinsky (1D)"
    description = ("u_t = −(u u_x + u_xx + u_xxxx), periodic: 5-point central differences, "
                   "midpoint RK2; classic or swept GPU kernels ([P3], docs/MODELS.md).")
    parameters = (
        Param("nx", "int", 256, "Number of grid nodes on the periodic domain; at least one per "
              "unit length (nx ≥ L, ≈ 6.3 nodes per 2π: coarser grids diverge at ≤ 0.76 "
              "per unit length and give a chaos 15–34 % too energetic at 0.8–0.9); two per unit "
              "length put the statistics within a few per cent.", lo=8, hi=2**28),
        Param("L", "float", 32 * math.pi, "Length of the periodic domain (the unstable "
              "wavelengths are those longer than 2π; nx must be ≥ L).", lo=0, lo_open=True),
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
    state_names = ("u",)
    schemes = method_table(reference.KSScheme, fused.KSFused)
    check_params = {"nx": 1000}

    # Nodes per unit length below which the grid is refused (benchmarks/swept/ks_resolution.py:
    # divergence at ≤ 0.76, ⟨u²⟩ 15–34 % too high at 0.8–0.9, within 15 % at 1, 3 % at 2).
    min_nodes_per_length: ClassVar[float] = 1.0
    contract_params = {"nx": 16, "L": 16.0}  # small and resolved (tests/solvers/test_contract.py)

    @classmethod
    def min_nx(cls, L: float) -> int:
        """The fewest nodes the resolution guard accepts on a domain of length L."""
        return max(8, math.ceil(cls.min_nodes_per_length * L - 1e-9))

    @classmethod
    def _check_params(cls, p: dict) -> None:
        super()._check_params(p)
        need = cls.min_nx(p["L"])
        if p["nx"] < need:
            raise ParameterError(
                f"{cls.model}: parameter 'nx' = {p['nx']} is too coarse for L = {p['L']:.6g}: "
                f"{p['nx'] / p['L']:.3g} nodes per unit length "
                f"({2 * math.pi * p['nx'] / p['L']:.3g} per 2π); the scheme needs at least "
                f"{cls.min_nodes_per_length:g} per unit length to resolve the unstable "
                f"wavelengths (> 2π) of KS (coarser grids diverge or give the wrong chaos); "
                f"allowed: nx ≥ {need} for this L, or L ≤ {p['nx'] / cls.min_nodes_per_length:.6g}"
                " for this nx")
        dx = p["L"] / p["nx"]
        lim = reference.stable_dt(dx)
        if p["dt"] is not None and p["dt"] > lim:
            raise ParameterError(f"{cls.model}: parameter 'dt' = {p['dt']:g} exceeds the linear "
                                 f"stability limit of midpoint RK2 for Δx = {dx:.4g}; allowed: a "
                                 f"finite number in (0, {lim:.4g}]")

    def _setup(self) -> None:
        p = self.params
        self.dx = p["L"] / p["nx"]
        x = np.arange(p["nx"]) * self.dx
        self._start(x, scenarios.ks_initial(x, p["L"], p["amplitude"])[None, :])

    @property
    def dt(self) -> float:
        d = self.params["dt"]
        return d if d is not None else min(reference.stable_dt(self.dx) / 4, self.dx / 20)

    def divergence_advice(self) -> str:
        p = self.params
        advice = (f"Use more nodes for this L: nx = {p['nx']} on L = {p['L']:.6g} is "
                  f"{p['nx'] / p['L']:.3g} per unit length; nx = {math.ceil(2 * p['L'])} (two "
                  "per unit length) resolves KS's chaos well.")
        if p["dt"] is not None:
            auto = min(reference.stable_dt(self.dx) / 4, self.dx / 20)
            advice += (f" Or leave dt empty: its default ({auto:.3g} here) keeps to a quarter of "
                       "the linear stability limit and to the advection bound.")
        return advice

    memory_per_cell = 80  # peak host bytes per cell, float64 (core/memory.py)


@register
class Euler1D(SweptSimulation):
    model = "euler-1d"
    title = "Euler equations (1D, Sod tube)"
    description = ("Compressible Euler equations, finite volumes: MUSCL on ρ, u, P (third order "
                   "where smooth, superbee at jumps) with an HLLC flux and SSP-RK2 (default), or the paper's pressure-ratio "
                   "limiter with a Rusanov flux; Dirichlet or periodic ends; classic or swept GPU "
                   "kernels ([P3], docs/MODELS.md).")
    parameters = (
        Param("nx", "int", 512, "Number of cells in the tube [0, L].", lo=4, hi=2**27),
        Param("L", "float", 1.0, "Length of the tube.", lo=0, lo_open=True),
        Param("scheme", "str", "muscl-hllc",
              "Finite volumes: muscl-hllc (MUSCL on the primitive variables: unlimited third-"
              "order face values where smooth, superbee at jumps, LimO3 elsewhere; HLLC flux, "
              "SSP-RK2: second order or better on smooth flow, sharp contacts) or "
              "paper ([P3]'s pressure-ratio limiter, Rusanov flux at the Roe average, "
              "midpoint RK2: first order where the pressure is uniform; kept for the swept "
              "comparison).", choices=SCHEMES),
        Param("boundary", "str", "dirichlet",
              "Ends: dirichlet (ghost cells holding the left and right states) or periodic.",
              choices=("dirichlet", "periodic")),
        Param("gamma", "float", 1.4, "Ratio of specific heats γ.", lo=1, lo_open=True, hi=5),
        Param("rho_left", "float", 1.0, "Density left of the diaphragm (and the left end); "
              "entropy-wave: the mean density.", lo=0, lo_open=True),
        Param("p_left", "float", 1.0, "Pressure left of the diaphragm (and the left end); "
              "entropy-wave: the pressure.", lo=0, lo_open=True),
        Param("u_left", "float", 0.0, "Velocity left of the diaphragm (and the left end); "
              "entropy-wave: the velocity."),
        Param("rho_right", "float", 0.125, "Density right of the diaphragm (and the right end).",
              lo=0, lo_open=True),
        Param("p_right", "float", 0.1, "Pressure right of the diaphragm (and the right end).",
              lo=0, lo_open=True),
        Param("u_right", "float", 0.0, "Velocity right of the diaphragm (and the right end)."),
        Param("x0", "float", None, "Position of the diaphragm in (0, L); empty: L/2.", lo=0,
              lo_open=True, nullable=True),
        CFL.with_default(0.4),
        METHOD,
        BLOCK,
    )
    scenarios = (
        Scenario("sod", "Sod's shock tube: (ρ, P, u) = (1, 1, 0) | (0.125, 0.1, 0), γ = 1.4, "
                 "diaphragm at L/2; compare with the exact Riemann solution at t = 0.2 L."),
        Scenario("entropy-wave", "A density wave carried by uniform flow on a periodic domain: "
                 "ρ = ρ_left (1 + 0.2 sin(2πx/L)), u = u_left, P = p_left (cell averages); "
                 "exact solution ρ(x − u t); the smooth-flow order test.",
                 {"boundary": "periodic", "u_left": 1.0}),
    )
    field_infos = {
        "rho": FieldInfo("cell", "", "density ρ", lo=0, lo_open=True),
        "rhou": FieldInfo("cell", "", "momentum ρu"),
        "E": FieldInfo("cell", "", "total energy per volume ρe", lo=0, lo_open=True),
        "u": FieldInfo("cell", "", "velocity", settable=False),
        "p": FieldInfo("cell", "", "pressure P = (γ−1)(E − ρu²/2)", settable=False),
    }
    default_field = "rho"
    state_names = ("rho", "rhou", "E")
    # the method picks the launches, `scheme` the kernels (EulerFused.kernel_source)
    schemes = method_table(reference.EulerScheme, fused.EulerFused,
                           ({"scheme": "muscl-hllc"}, {"scheme": "paper"},
                            {"scheme": "muscl-hllc", "boundary": "periodic"}))
    check_params = {"nx": 1000}

    @classmethod
    def _check_params(cls, p: dict) -> None:
        super()._check_params(p)
        if p["x0"] is not None and not p["x0"] < p["L"]:
            raise ParameterError(f"{cls.model}: parameter 'x0' = {p['x0']:g} lies outside the "
                                 f"tube [0, L = {p['L']:g}]; allowed: a number in (0, {p['L']:g})"
                                 " or empty (L/2)")

    def _setup(self) -> None:
        p = self.params
        n, L = p["nx"], p["L"]
        self.dx = L / n
        x = (np.arange(n) + 0.5) * self.dx
        g = p["gamma"]
        self.left = scenarios.conserved(p["rho_left"], p["u_left"], p["p_left"], g)
        self.right = scenarios.conserved(p["rho_right"], p["u_right"], p["p_right"], g)
        if self.scenario_name == "entropy-wave":
            Q0 = scenarios.entropy_wave(x, self.dx, L, p["rho_left"], p["u_left"],
                                        p["p_left"], g)
        else:
            x0 = L / 2 if p["x0"] is None else p["x0"]
            Q0 = scenarios.shock_tube(x, x0, self.left, self.right)
        self._start(x, Q0)
        self._dt = euler_dt(Q0, g, p["cfl"], self.dx)

    def divergence_advice(self) -> str:
        if self.params["scheme"] == "paper":
            return ("The paper's pressure-ratio limiter is neither TVD nor positivity-preserving "
                    "(it fails on Toro's 123 problem at any cfl, and on Sod's tube from cfl 0.9): "
                    "use scheme=muscl-hllc, or a lower cfl.")
        return ("Lower cfl: the step is fixed from the state when it was set (a Courant number of "
                "cfl/2 there) and stays stable while the waves are at most twice as fast as "
                "then; stronger jumps (e.g. LeBlanc's tube, pressure ratio 1e9) need a lower cfl.")

    @property
    def dt(self) -> float:
        """The step, fixed for the run: cfl Δx / (2 max(|u| + c)) over the state when it was set
        (the factor 2 covers the faster waves a jump creates: Sod's max |u| + c grows from 1.18
        to 2.19). It comes from the initial data, and again from the state after set_field or a
        change of cfl (forget_dt); a checkpoint and the divergence restore bring their own."""
        if self._dt is None:
            self._dt = euler_dt(self._be.asnumpy(self.U), self.params["gamma"],
                                          self.params["cfl"], self.dx)
        return self._dt

    def _params_changed(self) -> None:
        self.forget_dt()  # cfl (live) changed: the step follows it from the state now

    def forget_dt(self) -> None:
        """The state or cfl changed from outside: Δt is computed again where it is next needed."""
        self._dt = None

    def _aux_state(self) -> dict:
        return {"dt": self.dt}

    def _set_aux_state(self, aux: dict) -> None:
        if "dt" in aux:
            self._dt = float(aux["dt"])

    def _fields(self) -> dict:
        Q, g = self.U, self.params["gamma"]
        return {"rho": Q[0], "rhou": Q[1], "E": Q[2], "u": lambda: Q[1] / Q[0],
                "p": lambda: pressure(Q, g)}

    def _derived_bounds(self) -> list:
        """The pressure P > 0, checked while stepping with ρ > 0 and E > 0 (issue 28)."""
        return [("p", pressure(self.U, self.params["gamma"]), 0.0, True)]

    def _check_field(self, name: str, values: np.ndarray) -> None:
        Q = self._be.asnumpy(self.U).astype(np.float64)
        Q[self.state_names.index(name)] = values
        P = pressure(Q, self.params["gamma"])
        if not (P > 0).all():
            i = int(np.argmin(P))
            raise ParameterError(
                f"{self.model}: field '{name}' gives pressure {P[i]:g} in cell {i}; allowed: "
                "values with P = (γ−1)(E − (ρu)²/(2ρ)) > 0 in every cell")

    memory_per_cell = 576  # peak host bytes per cell, float64 (core/memory.py)
