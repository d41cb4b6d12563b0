"""euler-1d: the Euler equations of an ideal gas in Sod's shock tube (seed 003 Appendix D, SPEC §4).

Q = (ρ, ρu, E) with E = ρe, P = (γ − 1)(E − (ρu)²/(2ρ)) (eq. (13)), on cells of width Δx = 1/nx.
Second-order finite volumes (eqs. (15)–(21)):
  * reconstruction limited by the pressure ratio P_r,i = (P_{i+1} − P_i)/(P_i − P_{i−1}) for all
    three components: at the interface i+½, Q^L = Q_i + min(P_r,i, 1)/2 · (Q_{i+1} − Q_i) when
    0 < P_r,i < ∞, else Q_i; Q^R mirrors it with 1/P_r,i+1 (minmod on pressure ratios);
  * flux ½ (F(Q^R) + F(Q^L) + r_sp (Q^L − Q^R)), r_sp = sqrt(γ P_sp/ρ_sp) + |u_sp| at the Roe
    average (ρ_sp = sqrt(ρ_L ρ_R); u_sp, e_sp the sqrt(ρ)-weighted means; e = E/ρ);
  * Q_i' = Q_i − Δt/Δx (F_{i+½} − F_{i−½}) (the extracted eq. (21) has a wrong sign), midpoint RK2
    as two tiers: predictor with Δt/2, final with Δt;
  * Dirichlet ends: two ghost cells each side hold the tube's left and right states.
The step is fixed for the run (the swept rule needs one Δt for all tiers): Δt = cfl Δx / (2 max
(|u| + c)) over the state when it is set; the factor 2 covers the faster waves a jump creates (Sod:
max |u| + c grows from 1.18 to 2.19).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import ParameterError
from ..core.params import CFL, Param, Scenario
from ..core.registry import register
from ..core.simulation import FieldInfo
from ..mesh import Grid1D
from .model import BLOCK, METHOD, SweptSimulation


def pressure(q, gamma: float):
    return (gamma - 1) * (q[2] - 0.5 * q[1] * q[1] / q[0])


def _limited(pnum, pden, xp):
    """min(r, 1) for r = pnum/pden when 0 < r < ∞, else 0 (eqs. (16)–(17))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = pnum / pden
    return xp.where(xp.isfinite(r) & (r > 0), xp.minimum(r, 1), 0)


def interface_flux(Qm, Q0, Qp, Qpp, gamma: float, xp):
    """Flux at the interface between Q0 and Qp (eqs. (15)–(20)), from cells i−1 … i+2."""
    Pm, P0, Pp, Ppp = (pressure(q, gamma) for q in (Qm, Q0, Qp, Qpp))
    phl = _limited(Pp - P0, P0 - Pm, xp)     # P_r,i
    phr = _limited(Pp - P0, Ppp - Pp, xp)    # 1 / P_r,i+1
    QL = Q0 + 0.5 * phl * (Qp - Q0)
    QR = Qp + 0.5 * phr * (Q0 - Qp)
    return rusanov_roe(QL, QR, gamma, xp)


def rusanov_roe(QL, QR, gamma: float, xp):
    """½ (F(Q_R) + F(Q_L) + r_sp (Q_L − Q_R)) with r_sp at the Roe average (eqs. (18)–(20))."""
    rL, rR = QL[0], QR[0]
    uL, uR = QL[1] / rL, QR[1] / rR
    PL, PR = pressure(QL, gamma), pressure(QR, gamma)
    sL, sR = xp.sqrt(rL), xp.sqrt(rR)
    w = 1 / (sL + sR)
    rho_sp = sL * sR
    u_sp = (sL * uL + sR * uR) * w
    e_sp = (sL * (QL[2] / rL) + sR * (QR[2] / rR)) * w
    P_sp = (gamma - 1) * (rho_sp * e_sp - 0.5 * rho_sp * u_sp * u_sp)
    r_sp = xp.sqrt(gamma * P_sp / rho_sp) + xp.abs(u_sp)
    FL = (QL[1], QL[1] * uL + PL, uL * (QL[2] + PL))
    FR = (QR[1], QR[1] * uR + PR, uR * (QR[2] + PR))
    return xp.stack([0.5 * (FR[c] + FL[c] + r_sp * (QL[c] - QR[c])) for c in range(3)])


def euler_tier(lam: float, gamma: float, xp):
    """Predictor tier (par 1): Q − λ/2 ΔF(Q); final tier (par 0): Q_old − λ ΔF(Q*), λ = Δt/Δx."""
    half = lam / 2

    def tier(par, S, b):
        dF = (interface_flux(S[1], S[2], S[3], S[4], gamma, xp)
              - interface_flux(S[0], S[1], S[2], S[3], gamma, xp))
        if par:
            return S[2] - half * dF
        return b - lam * dF
    return tier


def conserved(rho, u, p, gamma):
    return np.array([rho, rho * u, p / (gamma - 1) + 0.5 * rho * u * u])


@register
class Euler1D(SweptSimulation):
    model = "euler-1d"
    title = "Euler equations (1D, Sod tube)"
    description = ("Compressible Euler equations: second-order finite volumes with a pressure-"
                   "ratio limiter and a Rusanov flux at the Roe average, midpoint RK2, Dirichlet "
                   "ends; classic or swept GPU kernels (seed 003).")
    parameters = (
        Param("nx", "int", 512, "Number of cells in the tube [0, 1].", lo=4, hi=2**27),
        Param("gamma", "float", 1.4, "Ratio of specific heats γ.", lo=1, lo_open=True, hi=5),
        Param("rho_left", "float", 1.0, "Density left of the diaphragm (and the left end).",
              lo=0, lo_open=True),
        Param("p_left", "float", 1.0, "Pressure left of the diaphragm (and the left end).",
              lo=0, lo_open=True),
        Param("u_left", "float", 0.0, "Velocity left of the diaphragm (and the left end)."),
        Param("rho_right", "float", 0.125, "Density right of the diaphragm (and the right end).",
              lo=0, lo_open=True),
        Param("p_right", "float", 0.1, "Pressure right of the diaphragm (and the right end).",
              lo=0, lo_open=True),
        Param("u_right", "float", 0.0, "Velocity right of the diaphragm (and the right end)."),
        Param("x0", "float", 0.5, "Position of the diaphragm.", lo=0, hi=1, lo_open=True,
              hi_open=True),
        CFL.with_default(0.4),
        METHOD,
        BLOCK,
    )
    scenarios = (Scenario("sod", "Sod's shock tube: (ρ, P, u) = (1, 1, 0) | (0.125, 0.1, 0), "
                          "γ = 1.4; compare with the exact Riemann solution at t = 0.2."),)
    field_infos = {
        "rho": FieldInfo("cell", "", "density ρ", lo=0, lo_open=True),
        "rhou": FieldInfo("cell", "", "momentum ρu"),
        "E": FieldInfo("cell", "", "total energy per volume ρe", lo=0, lo_open=True),
        "u": FieldInfo("cell", "", "velocity", settable=False),
        "p": FieldInfo("cell", "", "pressure P = (γ−1)(E − ρu²/2)", settable=False),
    }
    default_field = "rho"
    R, NV, tiers_per_step, bc = 2, 3, 2, "dirichlet"
    CU_FILE = Path(__file__).with_name("euler.cu")
    state_names = ("rho", "rhou", "E")
    PREFIX = "euler"
    # No fused multiply-add contraction: the pressure-ratio limiter is discontinuous where its
    # denominator P_{i+1} − P_i vanishes (uniform ghost cells at the Dirichlet ends), and a
    # contracted a·b − c leaves the rounding error of c instead of an exact 0 there. On the H100
    # that flipped min(P_r, 1) from 0 to 1 at the right end in float64 (error 4.9e-3 after 20
    # steps; a sentinel ghost state with another rounding matched NumPy to 4e-16).
    nvrtc_options = ("--fmad=false",)

    def _setup(self) -> None:
        p = self.params
        n = p["nx"]
        self.dx = 1.0 / n
        x = (np.arange(n) + 0.5) * self.dx
        self.mesh = Grid1D(x)
        g = p["gamma"]
        self._left = conserved(p["rho_left"], p["u_left"], p["p_left"], g)
        self._right = conserved(p["rho_right"], p["u_right"], p["p_right"], g)
        Q0 = np.where(x[None, :] < p["x0"], self._left[:, None], self._right[:, None])
        self._U = self.xp.asarray(Q0, dtype=self.dtype)
        self._bind_state()
        self._setup_buffers()
        self._dt = self._fixed_dt(Q0)

    def _fixed_dt(self, Q) -> float:
        Q = np.asarray(Q, dtype=np.float64)
        g = self.params["gamma"]
        u = Q[1] / Q[0]
        c = np.sqrt(g * pressure(Q, g) / Q[0])
        return float(self.params["cfl"] * self.dx / (2 * np.max(np.abs(u) + c)))

    @property
    def dt(self) -> float:
        return self._dt

    def _aux_state(self) -> dict:
        return {"dt": self._dt}

    def _set_aux_state(self, aux: dict) -> None:
        if "dt" in aux:
            self._dt = float(aux["dt"])

    def _fields(self) -> dict:
        Q, g = self._U, self.params["gamma"]
        return {"rho": Q[0], "rhou": Q[1], "E": Q[2], "u": Q[1] / Q[0], "p": pressure(Q, g)}

    def _check_field(self, name: str, values: np.ndarray) -> None:
        Q = self._be.asnumpy(self._U).astype(np.float64)
        Q[("rho", "rhou", "E").index(name)] = values
        P = pressure(Q, self.params["gamma"])
        if not (P > 0).all():
            i = int(np.argmin(P))
            raise ParameterError(
                f"{self.model}: field '{name}' gives pressure {P[i]:g} in cell {i}; allowed: "
                "values with P = (γ−1)(E − (ρu)²/(2ρ)) > 0 in every cell")

    def _set_field(self, name: str, arr: np.ndarray) -> None:
        super()._set_field(name, arr)
        self._dt = self._fixed_dt(self._be.asnumpy(self._U))

    def _param_changed(self, name: str) -> None:
        self._dt = self._fixed_dt(self._be.asnumpy(self._U))  # cfl: Δt from the current state

    def _ghosts(self):
        return self._left, self._right

    def _tier_fn(self, dt):
        return euler_tier(dt / self.dx, self.params["gamma"], self.xp)

    def _kernel_args(self, dt):
        r = self.real
        return ((r(dt / self.dx), r(self.params["gamma"]))
                + tuple(r(v) for v in self._left) + tuple(r(v) for v in self._right))
