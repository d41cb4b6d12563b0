"""Mean-curvature and Willmore flow of graphs (seed 000, Oberhuber, Suzuki & Žabka; SPEC §1).

    mean-curvature:  φ_t = Q ∇·(∇φ/Q) + F                                   (6), scheme (17)
    willmore:        φ_t = −Q ∇·((1/Q) P ∇w − ½ (w²/Q³) ∇φ) + F,  w = Q ∇·(∇φ/Q)   (10)–(11), (21)–(22)

on the nodes of a uniform grid (complementary finite volumes, `operators.py`), integrated by the
adaptive Runge–Kutta–Merson method (Algorithm 4.1, SPEC §1.3): `solvers.core.integrators.
RungeKuttaMerson` on the NumPy / CuPy-array paths, fused CUDA kernels with the step accepted or
rejected on the device on the `fused` path (`fused.py`, `curvature.cu`, `curvature_ops.cuh`).

Boundaries: Dirichlet keeps φ = g (the boundary nodes follow dg/dt; w = 0, or w = w(ζ) for the exact
solution of `eoc-exact`, SPEC §1.5), Neumann copies the inner neighbours (19)–(20), (24)–(25).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.integrators import RungeKuttaMerson
from ..core.params import Param, Scenario
from ..core.registry import register
from ..core.simulation import FieldInfo, Simulation
from ..mesh import Grid2D
from .exact import ExactSolution
from .reference import curvature_terms, mean_curvature_rhs, neumann_fill, willmore_rhs

DOMAINS = {"sine-rings": (-2.0, 2.0), "eoc-exact": (-4.0, 4.0)}

PARAMETERS = (
    Param("nx", "int", 128, "Cells along x (nodes = nx + 1). The scheme needs at least 4.",
          lo=4, hi=16384),
    Param("ny", "int", None, "Cells along y (nodes = ny + 1); empty = nx.", lo=4, hi=16384,
          nullable=True),
    Param("tolerance", "float", 1e-6, "Runge–Kutta–Merson tolerance ε on the estimated local "
          "error max|0.2k1 − 0.9k3 + 0.8k4 − 0.1k5|/3 of a step.", lo=0, lo_open=True),
    Param("dt", "float", None, "Initial Runge–Kutta–Merson step τ (then adapted); empty = "
          "chosen from the grid spacing.", unit="s", lo=0, lo_open=True, nullable=True),
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
    Scenario("sine-rings", "φ = sin(3π√(x² + y²)) on (−2, 2)², Neumann boundary, 128² cells "
             "(paper's Figures 1–2).", {"boundary": "neumann"}),
    Scenario("eoc-exact", "Exact solution ζ on [−4, 4]² with its forcing F = ζ_t − L[ζ] and "
             "Dirichlet data g = ζ (paper's Tables 2–4); T = 0.1.",
             {"boundary": "dirichlet", "tolerance": 1e-7, "nx": 64}),
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
    surfaces = ("phi",)
    size_param = "nx"
    bench_scenario = "eoc-exact"
    bench_t_end = 0.1

    # ---- set-up -------------------------------------------------------------------------
    def _setup(self) -> None:
        p = self.params
        xp = self.xp
        n1 = p["nx"]
        n2 = p["ny"] if p["ny"] is not None else n1
        a, b = DOMAINS[self.scenario_name]
        x = np.linspace(a, b, n1 + 1)
        y = np.linspace(a, b, n2 + 1)
        self.mesh = Grid2D(x, y)
        self.h1, self.h2 = (b - a) / n1, (b - a) / n2
        self.neumann = p["boundary"] == "neumann"
        self.exact = None
        if self.scenario_name == "eoc-exact":
            self.exact = ExactSolution(x, y, p["zeta_r"], p["zeta_n"], p["zeta_sigma"],
                                       self.willmore, xp, self.dtype)
            phi0 = self.exact.zeta(0.0)
        else:
            X, Y = np.meshgrid(x, y)
            phi0 = xp.asarray(np.sin(3 * math.pi * np.hypot(X, Y)), dtype=self.dtype)
        phi0 = xp.array(phi0, dtype=self.dtype)
        if self.neumann:
            neumann_fill(phi0)
        self.state["phi"] = phi0
        h = min(self.h1, self.h2)
        tau0 = p["dt"] if p["dt"] is not None else self.initial_step(h)
        self._rkm = RungeKuttaMerson(p["tolerance"], tau0)
        self._fused = None
        if self.kernel == "fused":
            from .fused import FusedRKM
            self._fused = FusedRKM(self)

    def initial_step(self, h: float) -> float:
        raise NotImplementedError

    # ---- the right-hand side (array code) -----------------------------------------------
    def _boundary_rate(self, t: float):
        """dg/dt on the Dirichlet boundary: ζ_t for eoc-exact, 0 for fixed data."""
        return self.exact.zeta_t(t) if self.exact is not None else None

    def _interior_rhs(self, t: float, phi):
        raise NotImplementedError

    def rhs(self, t: float, u):
        """f(t, u) of the method of lines (26) on all nodes."""
        xp = self.xp
        phi = neumann_fill(u.copy()) if self.neumann else u
        f = xp.empty_like(u)
        fi = self._interior_rhs(t, phi)
        if self.exact is not None:
            fi = fi + self.exact.forcing(t)
        if self.params["F"] != 0:
            fi = fi + self.params["F"]
        f[1:-1, 1:-1] = fi
        if self.neumann:
            neumann_fill(f)
        else:
            g_t = self._boundary_rate(t)
            _set_boundary(f, g_t)
        return f

    # ---- stepping ------------------------------------------------------------------------
    def _step(self, dt_limit):
        if self._fused is not None:
            return self._fused.step_one(dt_limit)
        # overflow in a blowing-up run is reported as SimulationDiverged, not as warnings
        with np.errstate(over="ignore", invalid="ignore"):
            u, tau = self._rkm.step(self.rhs, self.state["phi"], self.t, dt_limit, self.xp)
        self.state["phi"] = u
        return tau

    def _steps_unchecked(self, count, t_end):
        # the fused path runs whole batches of steps on the device; a per-step hook installed on
        # the instance (a wrapper of _step) is honoured by stepping one at a time
        if self._fused is None or "_step" in self.__dict__:
            return super()._steps_unchecked(count, t_end)
        return self._fused.run(count, t_end)

    @property
    def tau(self) -> float:
        """The step size the adaptive RKM will try next."""
        return self._fused.tau if self._fused is not None else self._rkm.tau

    @property
    def rejected(self) -> int:
        """RKM attempts rejected (last step on the array paths; last run on the fused path)."""
        return self._fused.rejected if self._fused is not None else self._rkm.rejected

    def _aux_state(self) -> dict:
        return {"tau": self.tau}

    def _set_aux_state(self, aux: dict) -> None:
        if "tau" in aux:
            self._rkm.tau = float(aux["tau"])
            if self._fused is not None:
                self._fused.tau = float(aux["tau"])

    # ---- fields --------------------------------------------------------------------------
    def _phi(self):
        return self.state["phi"]

    def _fields(self) -> dict:
        phi = self._phi()
        H = self.xp.empty_like(phi)
        H[1:-1, 1:-1] = curvature_terms(phi, self.h1, self.h2, self.xp)[1]
        neumann_fill(H)
        return {"phi": phi, "mean_curvature": H}

    def _set_field(self, name, arr) -> None:
        a = np.array(arr, dtype=np.float64)
        if self.neumann:
            neumann_fill(a)
        super()._set_field(name, a)

    def exact_phi(self, t: float | None = None):
        """Host copy of the exact solution ζ(t) (eoc-exact; None for other scenarios)."""
        if self.exact is None:
            return None
        z = self.exact.zeta(self.t if t is None else t)
        return self._be.asnumpy(z)

    def surface_area(self) -> float:
        """∫ Q dx over the interior control volumes (node Q (49) × h1 h2)."""
        Q = curvature_terms(self._phi(), self.h1, self.h2, self.xp)[0]
        return float(Q.sum()) * self.h1 * self.h2

    def willmore_energy(self) -> float:
        """∫ H² dS = ∫ H² Q dx over the interior control volumes."""
        Q, H, _ = curvature_terms(self._phi(), self.h1, self.h2, self.xp)
        return float((H * H * Q).sum()) * self.h1 * self.h2

    def work(self):
        cells = self.state["phi"].size
        # fused RKM attempt: stages read u,k1 | u,k1,k2 | u,k1,k3 | u,k1,k3,k4 and write k1..k4,
        # u_new: 13 reads + 5 writes per node
        return cells, 18 * cells * np.dtype(self.dtype).itemsize


def _set_boundary(f, src):
    if src is None:
        f[0, :] = 0
        f[-1, :] = 0
        f[:, 0] = 0
        f[:, -1] = 0
    else:
        f[0, :] = src[0, :]
        f[-1, :] = src[-1, :]
        f[:, 0] = src[:, 0]
        f[:, -1] = src[:, -1]


@register
class MeanCurvatureFlow(CurvatureFlow):
    model = "mean-curvature"
    title = "Mean-curvature flow of graphs"
    description = ("φ_t = Q ∇·(∇φ/Q) + F: complementary finite volumes, adaptive Runge–Kutta–"
                   "Merson (seed 000, Oberhuber, Suzuki & Žabka).")
    bench_sizes = (256, 512, 1024)

    def initial_step(self, h):
        return 0.1 * h * h

    def _interior_rhs(self, t, phi):
        return mean_curvature_rhs(phi, self.h1, self.h2, self.xp)


@register
class WillmoreFlow(CurvatureFlow):
    model = "willmore"
    title = "Willmore flow of graphs"
    description = ("φ_t = −Q ∇·((1/Q)P∇w − ½(w²/Q³)∇φ) + F, w = Q∇·(∇φ/Q): complementary finite "
                   "volumes, adaptive Runge–Kutta–Merson (seed 000).")
    willmore = True
    bench_sizes = (128, 256)

    def initial_step(self, h):
        return 0.01 * h**4

    def w_boundary(self, t):
        """w on the Dirichlet boundary: w(ζ(t)) for eoc-exact (SPEC §1.5), else 0."""
        return self.exact.w(t) if self.exact is not None else None

    def _interior_rhs(self, t, phi):
        xp = self.xp
        w = xp.empty_like(phi)
        w[1:-1, 1:-1] = mean_curvature_rhs(phi, self.h1, self.h2, xp)
        if self.neumann:
            neumann_fill(w)
        else:
            _set_boundary(w, self.w_boundary(t))
        return willmore_rhs(phi, w, self.h1, self.h2, xp)
