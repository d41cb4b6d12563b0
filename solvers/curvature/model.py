"""Mean-curvature and Willmore flow of graphs ([P0], Oberhuber, Suzuki & Žabka; docs/MODELS.md §1).

    mean-curvature:  φ_t = Q ∇·(∇φ/Q) + F                                   (6), scheme (17)
    willmore:        φ_t = −Q ∇·((1/Q) P ∇w − ½ (w²/Q³) ∇φ) + F,  w = Q ∇·(∇φ/Q)   (10)–(11), (21)–(22)

on the nodes of a uniform grid over [−Lx/2, Lx/2] × [−Ly/2, Ly/2]. `integrator` picks the time
integration: `rkm`, the paper's adaptive Runge–Kutta–Merson method (Algorithm 4.1, docs/MODELS.md §1.3;
schemes `reference.RKMReference` in array code — NumPy, CuPy `array` path — and `fused.FusedRKM`,
CUDA kernels deciding acceptance on the device), or `imex`, linearly implicit IMEX Runge–Kutta
with the linearised Laplacian / bilaplacian solved by fast transforms (imex.py: `IMEXReference`,
and `FusedIMEX` with the fused right-hand-side kernels). Initial conditions and domains:
scenarios.py; the exact solution of `eoc-exact` and its forcing: exact.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.decomp import WHOLE, GridSplit
from ..core.errors import ParameterError
from ..core.params import Param, Scenario
from ..core.registry import register
from ..core.scheme import SchemeEntry, SchemeTable
from ..core.simulation import FieldInfo, QuantityInfo, Simulation
from ..mesh import Grid2D
from . import scenarios
from .fused import FusedRKM
from .imex import IMEXReference
from .imex_fused import FusedIMEX
from .reference import (RKMReference, mean_curvature_field, neumann_fill, step_controller,
                        surface_area, willmore_energy)
from .strips import NodeRows

# The error estimates of RKM and of the IMEX step doubling carry round-off up to about
# 0.8 x machine epsilon x max|phi| (float32, measured on eoc-exact and sine-rings, 64² to 256²:
# docs/VALIDATION.md, issue 28); below about 2.5 x that the controller shrinks τ step after step.
ROUNDOFF_FLOOR = 16

PARAMETERS = (
    Param("nx", "int", 128, "Cells along x (nodes = nx + 1). The scheme needs at least 4.",
          lo=4, hi=16384),
    Param("ny", "int", None, "Cells along y (nodes = ny + 1); empty = nx.", lo=4, hi=16384,
          nullable=True),
    Param("Lx", "float", 4.0, "Domain length along x: x ∈ [−Lx/2, Lx/2].", unit="m", lo=0,
          lo_open=True),
    Param("Ly", "float", None, "Domain length along y: y ∈ [−Ly/2, Ly/2]; empty = Lx.", unit="m",
          lo=0, lo_open=True, nullable=True),
    Param("integrator", "str", "rkm", "Time integration: rkm (the paper's explicit adaptive "
          "Runge–Kutta–Merson; stable only for τ ~ h² / h⁴) or imex (linearly implicit "
          "ARS(4,4,3): the Laplacian / bilaplacian of the flat graph implicit by fast cosine/sine "
          "transforms, the rest explicit; steps set by accuracy, not by h).",
          choices=("rkm", "imex")),
    Param("tolerance", "float", 1e-6, "Tolerance ε on the estimated local error of a step "
          "(rkm: max|0.2k1 − 0.9k3 + 0.8k4 − 0.1k5|/3; imex: max|φ(two half steps) − φ(one "
          "step)|/7, stiff components filtered). A tolerance below the round-off of these estimates "
          "(16 × machine epsilon × max|φ|: about 2e-6 × max|φ| in float32) is raised to it, "
          "and the run says so.", lo=0, lo_open=True, live=True),
    Param("dt", "float", None, "Initial step τ (then adapted); empty = chosen from the grid "
          "spacing.", unit="s", lo=0, lo_open=True, nullable=True),
    Param("boundary", "str", "neumann", "Boundary condition: neumann (∂νφ = 0, ∂νw = 0: "
          "boundary nodes copy their inner neighbours) or dirichlet (φ = g, w = 0 or w(g)).",
          choices=("neumann", "dirichlet")),
    Param("F", "float", 0.0, "Constant forcing term added to the right-hand side (on top of "
          "the exact forcing of eoc-exact).", unit="m/s"),
    Param("zeta_r", "float", 4.0, "eoc-exact: r of the exact solution ζ = cos(πt)(xⁿ − rⁿ)"
          "(yⁿ − rⁿ)exp(−σ(x² + y²))/r²ⁿ.", lo=0, lo_open=True),
    Param("zeta_n", "int", 2, "eoc-exact: the exponent n of the exact solution.", lo=1, hi=12),
    Param("zeta_sigma", "float", 1.0, "eoc-exact: σ of the exact solution.", lo=0, hi=50),
)

SCENARIOS = (
    Scenario("sine-rings", "φ = sin(3π√(x² + y²)) on (−2, 2)² (Lx = 4), Neumann boundary, 128² "
             "cells (paper's Figures 1–2).", {"boundary": "neumann"}),
    Scenario("eoc-exact", "Exact solution ζ on [−4, 4]² (Lx = 8; ζ keeps its r, n, σ on other "
             "domains) with its forcing F = ζ_t − L[ζ] and Dirichlet data g = ζ (paper's Tables "
             "2–4); T = 0.1.",
             {"boundary": "dirichlet", "tolerance": 1e-7, "nx": 64, "Lx": 8.0}),
)


class CurvatureFlow(Simulation):
    """What the two flows share: grid, scenarios, boundary data, RKM, fields and checkpoints."""

    willmore = False
    parameters = PARAMETERS
    scenarios = SCENARIOS
    field_infos = {
        "phi": FieldInfo("node", "m", "height φ of the graph surface"),
        "mean_curvature": FieldInfo("node", "1/m", "mean curvature H = ∇·(∇φ/Q) (scheme (48); "
                                    "boundary nodes copy their inner neighbours)", settable=False),
    }
    default_field = "phi"
    quantity_infos = {
        "max phi": QuantityInfo("m", "highest point of the graph"),
        "min phi": QuantityInfo("m", "lowest point of the graph"),
        "step size": QuantityInfo("s", "the adaptive step τ the controller proposes next"),
        "error": QuantityInfo("m", "max |φ − ζ(t)| against the exact solution (eoc-exact; "
                              "NaN for other scenarios)"),
    }

    def _quantities(self) -> dict:
        phi = self.state["phi"]
        err = math.nan if self.exact is None else self.xp.abs(phi - self.exact.zeta(self.t)).max()
        return {"max phi": phi.max(), "min phi": phi.min(), "step size": self.controller.tau,
                "error": err}
    surfaces = ("phi",)
    size_param = "nx"
    bench_scenario = "eoc-exact"
    bench_t_end = 0.1
    schemes = SchemeTable("integrator", {
        "rkm": SchemeEntry(RKMReference, FusedRKM, ({}, {"scenario": "eoc-exact"})),
        "imex": SchemeEntry(IMEXReference, FusedIMEX, ({}, {"scenario": "eoc-exact"}))})
    # (a tolerance above float32's round-off floor: both real types then control the same ε)
    check_params = {"nx": 37, "ny": 29, "tolerance": 1e-4}

    # ---- set-up -------------------------------------------------------------------------
    def _setup(self) -> None:
        p = self.params
        n1 = p["nx"]
        n2 = p["ny"] if p["ny"] is not None else n1
        lx = p["Lx"]
        x, y, self.h1, self.h2 = scenarios.nodes(n1, n2, lx, p["Ly"] if p["Ly"] is not None else lx)
        self.mesh = Grid2D(x, y)
        self.neumann = p["boundary"] == "neumann"
        # decomposed (core/decomp.py): this rank's node rows and its halos (strips.py)
        self.domain = getattr(self, "domain", WHOLE)
        self.nodes = NodeRows(self.domain)
        if self.domain is not WHOLE and min(self.domain.counts) < 2:
            raise ParameterError(
                f"{self.model}: {self.domain.comm.size} ranks split the {n2 + 1} node rows into "
                f"strips of {min(self.domain.counts)}; a strip needs at least 2 (its boundary "
                f"fill reads the next row); allowed: at most {(n2 + 1) // 2} ranks for "
                f"ny = {n2}, or a larger ny")
        self.exact = scenarios.exact_solution(self.scenario_name, x, y, p, self.willmore,
                                              self.xp, self.dtype, self.nodes.ext)
        self.state["phi"] = scenarios.initial_phi(
            x, y, self.exact, self.neumann, self.xp, self.dtype,
            None if self.nodes.whole else self.nodes)
        self.controller = step_controller(self)
        if self.domain is not WHOLE:  # the error estimate's max over all ranks: exact
            self.controller.reduce_max = self.domain.max
        self.controller.tolerance = self.tolerance_in_use()

    # ---- the adaptive step ----------------------------------------------------------------
    @property
    def tau(self) -> float:
        """The step size the adaptive integrator will try next."""
        return self.controller.tau

    @property
    def rejected(self) -> int:
        """Attempts rejected (last step on the array paths; last run on the fused RKM path)."""
        return self.controller.rejected

    def _params_changed(self) -> None:
        self.controller.tolerance = self.tolerance_in_use()  # live; τ is kept

    def tolerance_floor(self) -> float:
        """The smallest tolerance the error estimates resolve in this dtype: ROUNDOFF_FLOOR ×
        machine epsilon × max|φ| (max|φ| of the state when the run was set up, the tolerance
        changed, φ was set or a state restored)."""
        amp = self.domain.max(float(self.xp.abs(self.state["phi"]).max()))
        return ROUNDOFF_FLOOR * float(np.finfo(np.dtype(self.dtype)).eps) * amp

    def tolerance_in_use(self) -> float:
        """The tolerance ε the step controllers (every integrator, both backends) use: the
        parameter, raised to `tolerance_floor()` where it lies below (issue 28: float32 with
        ε = 1e-7 took steps ever smaller and never reached its end time)."""
        return max(float(self.params["tolerance"]), self.tolerance_floor())

    def notes(self) -> list[str]:
        tol, used = float(self.params["tolerance"]), self.controller.tolerance
        if used <= tol:
            return []
        return [f"tolerance {tol:g} is below what {self.dtype} resolves for this solution (the "
                f"round-off of the error estimate, about {ROUNDOFF_FLOOR} x machine epsilon x "
                f"max|phi|); the steps are controlled with tolerance {used:.3g}"
                + (" (use dtype=float64 for a smaller one)" if self.dtype == "float32" else "")]

    def _aux_state(self) -> dict:
        # the tolerance in use travels too: recomputed from a later state, its round-off floor
        # would differ, and a restored run would not continue bit for bit
        return {"tau": self.controller.tau, "tolerance": self.controller.tolerance}

    def _set_aux_state(self, aux: dict) -> None:
        if "tau" in aux:
            self.controller.tau = float(aux["tau"])
        self.controller.tolerance = (float(aux["tolerance"]) if "tolerance" in aux
                                     else self.tolerance_in_use())

    def divergence_advice(self) -> str:
        """What helps when a curvature flow blows up (reducing `dt` cannot: it is only the first
        step of the adaptive integrator)."""
        p = self.params
        tol = p["tolerance"]
        if self.willmore and self.dtype == "float32":
            return ("Willmore flow needs double precision: the paper ([P0], docs/MODELS.md) got no usable "
                    "single-precision result and neither do we; use dtype=float64.")
        tips = []
        if p["integrator"] == "rkm":
            order = "h⁴" if self.willmore else "h²"
            tips.append(f"The explicit Runge–Kutta–Merson step is stable only for τ of order "
                        f"{order}, and its error estimate accepted an unstable step at tolerance "
                        f"{tol:g}: lower the tolerance (e.g. {tol / 100:g}) so that such steps "
                        f"are rejected, or use integrator=imex, which treats the stiff linear part "
                        f"implicitly.")
        else:
            tips.append(f"The IMEX step treats only the linearisation about a flat graph "
                        f"implicitly; where the surface is steep (|∇φ| ≫ 1) the explicit "
                        f"remainder limits the step, and the error estimate accepted an unstable "
                        f"one at tolerance {tol:g}: lower the tolerance (e.g. {tol / 100:g}), or "
                        f"use integrator=rkm.")
        if self.controller.tolerance > tol:
            tips.append(f"In {self.dtype} the tolerance cannot go below the round-off of the "
                        f"error estimate ({self.controller.tolerance:.3g} here): use float64 "
                        f"for a tighter step control.")
        return " ".join(tips)

    # ---- fields --------------------------------------------------------------------------
    def _fields(self) -> dict:
        phi = self.state["phi"]

        def curvature():  # computed only when asked for (the live view of phi never does)
            # (decomposed: the neighbours' rows are exchanged, so this is collective there)
            ext = self.nodes.extend(phi, self.xp)
            return self.nodes.cut(mean_curvature_field(ext, self.h1, self.h2, self.xp))
        return {"phi": phi, "mean_curvature": curvature}

    def _set_field(self, name, arr) -> None:
        a = np.array(arr, dtype=np.float64)  # decomposed: this rank's rows of the whole field
        if self.neumann:
            neumann_fill(a, self.nodes.top, self.nodes.bottom)
        super()._set_field(name, a)
        self.controller.tolerance = self.tolerance_in_use()

    def exact_phi(self, t: float | None = None):
        """Host copy of the exact solution ζ(t) (eoc-exact; None for other scenarios)."""
        if self.exact is None:
            return None
        z = self.nodes.cut(self.exact.zeta(self.t if t is None else t))
        return self._be.asnumpy(z)

    def surface_area(self) -> float:
        """∫ Q dx over the interior control volumes (node Q (49) × h1 h2). Decomposed: summed on
        rank 0 from the gathered field, as on one process (collective)."""
        if self.domain is not WHOLE:
            return self.on_gathered(lambda g: g.surface_area())
        return surface_area(self.state["phi"], self.h1, self.h2, self.xp)

    def willmore_energy(self) -> float:
        """∫ H² dS = ∫ H² Q dx over the interior control volumes (decomposed: as surface_area)."""
        if self.domain is not WHOLE:
            return self.on_gathered(lambda g: g.willmore_energy())
        return willmore_energy(self.state["phi"], self.h1, self.h2, self.xp)

    def work(self):
        cells = self.state["phi"].size
        # fused RKM attempt: stages read u,k1 | u,k1,k2 | u,k1,k3 | u,k1,k3,k4 and write k1..k4,
        # u_new: 13 reads + 5 writes per node
        return cells, 18 * cells * np.dtype(self.dtype).itemsize

    memory_per_cell = 224  # peak host bytes per cell, float64 (core/memory.py)
    # the fused paths hold more (stage buffers, the exact-forcing tables): 413 B per node measured
    # in the device pool on the H100 for mean curvature 256² (CuPy 14), 481 for Willmore 128²
    device_memory_per_cell = 640


def _node_shape(p) -> tuple[int, int]:
    """(N2+1, N1+1): the node grid a decomposed run splits into strips of rows."""
    return ((p["ny"] if p["ny"] is not None else p["nx"]) + 1, p["nx"] + 1)


def _refuse(p) -> str | None:
    if p["integrator"] == "imex":
        return ("integrator=imex runs on one process: its FFT solve is global; allowed "
                "decomposed: rkm (integrator=rkm)")
    return None


@register
class MeanCurvatureFlow(CurvatureFlow):
    model = "mean-curvature"
    title = "Mean-curvature flow of graphs"
    description = ("φ_t = Q ∇·(∇φ/Q) + F: complementary finite volumes, adaptive Runge–Kutta–"
                   "Merson ([P0], docs/MODELS.md, Oberhuber, Suzuki & Žabka).")
    bench_sizes = (256, 512, 1024)
    # decomposed runs (core/decomp.py, docs/DISTRIBUTED.md): strips of node rows; scheme (17)
    # reads one row across a strip's edge
    decomposition = GridSplit(shape=lambda p: _node_shape(p), halo=lambda p: 1,
                              refuse=lambda p: _refuse(p))


@register
class WillmoreFlow(CurvatureFlow):
    model = "willmore"
    title = "Willmore flow of graphs"
    description = ("φ_t = −Q ∇·((1/Q)P∇w − ½(w²/Q³)∇φ) + F, w = Q∇·(∇φ/Q): complementary finite "
                   "volumes, adaptive Runge–Kutta–Merson ([P0], docs/MODELS.md).")
    willmore = True
    bench_sizes = (128, 256)
    # w = Q∇·(∇φ/Q) then the same stencil on w: two rows across a strip's edge
    decomposition = GridSplit(shape=lambda p: _node_shape(p), halo=lambda p: 2,
                              refuse=lambda p: _refuse(p))
    memory_per_cell = 352  # peak host bytes per cell, float64 (core/memory.py)
    device_memory_per_cell = 768
