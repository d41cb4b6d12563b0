"""two-layer: the two-layer shallow-water system on triangle meshes (seeds 002 and 004, SPEC §3.2).

U = (h1, q1x, q1y, h2, q2x, q2y), index 1 the upper layer, r = ρ1/ρ2 < 1, coupling −g h1 ∇h2 and
−r g h2 ∇h1, bottom sources g h_l ∇H (H the depth below the reference level, may be negative).
First-order path-conservative finite volumes (tri_flux: Roe, IR-Roe, PVM-IFCP), wall boundaries,
Δt from the CFL condition of eq. (3) each step. Fields: the layers' thicknesses and discharges,
the free surface η = h1 + h2 − H and the interface h2 − H.

Precision: `eigen_precision = float64` with dtype float32 is seed 002's mixed mode ("CUSDP"):
every per-edge computation (Roe averages, quartic eigenvalues, eigenvectors, the 6×6 inverse of
the classical Roe scheme, the projections) runs in float64 on float32 state, accumulators and cell
update. With dtype float64 both settings are the same.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import ParameterError
from ..core.params import Param, Scenario
from ..core.registry import register
from ..core.simulation import FieldInfo
from .tri_base import COMMON_PARAMS, TriShallowWater, scheme_param


def _disc(x, y, radius, inside, outside):
    return np.where(np.hypot(x, y) < radius, inside, outside).astype(np.float64)


@register
class TwoLayer(TriShallowWater):
    model = "two-layer"
    title = "Two-layer shallow water (triangles)"
    description = ("Two superposed layers of shallow fluid on an unstructured triangle mesh: "
                   "path-conservative Roe, IR-Roe and PVM-IFCP schemes, cell renumbering "
                   "(seeds 002 and 004).")
    layers = 2
    state_names = ("h1", "q1x", "q1y", "h2", "q2x", "q2y")
    mass_fields = ("h1", "h2")
    parameters = COMMON_PARAMS + (
        Param("r", "float", 0.998, "Density ratio r = ρ1/ρ2 of the upper to the lower layer.",
              lo=0, hi=1, lo_open=True, hi_open=True),
        scheme_param("ir-roe"),
        Param("eigen_precision", "str", "working", "Precision of the per-edge eigen-solve: "
              "working (the dtype) or float64 (with dtype float32: seed 002's mixed precision).",
              choices=("working", "float64")),
    )
    scenarios = (
        Scenario("internal-dambreak", "H = 5; h1 = 0.5 inside r < 1.5, 4 outside; h2 = 5 − h1; "
                 "r = 0.998 (seed 002, §3.5 c).", {"r": 0.998}),
        Scenario("renumbering-test-1", "Seed 004's test 1: H = 6; h1 = 0.5 inside r < 1.5, 4 "
                 "outside; h2 = H − h1; r = 0.5; t ∈ [0, 0.1].", {"r": 0.5}),
        Scenario("renumbering-test-2", "Seed 004's test 2: H = 1 − 1.5 exp(−x² − y²) (negative "
                 "near the origin); h1 = 4 for x ≥ 0 else 0.5, h2 = 0.5 for x ≥ 0 else 4; "
                 "r = 0.98; t ∈ [0, 0.1].", {"r": 0.98}),
    )
    field_infos = {
        "h1": FieldInfo("cell", "m", "upper layer thickness", lo=0.0, lo_open=True),
        "q1x": FieldInfo("cell", "m²/s", "upper layer discharge, x"),
        "q1y": FieldInfo("cell", "m²/s", "upper layer discharge, y"),
        "h2": FieldInfo("cell", "m", "lower layer thickness", lo=0.0, lo_open=True),
        "q2x": FieldInfo("cell", "m²/s", "lower layer discharge, x"),
        "q2y": FieldInfo("cell", "m²/s", "lower layer discharge, y"),
        "H": FieldInfo("cell", "m", "depth of the bottom below the reference level (may be "
                       "negative)"),
        "eta": FieldInfo("cell", "m", "free surface η = h1 + h2 − H", settable=False),
        "interface": FieldInfo("cell", "m", "interface h2 − H", settable=False),
    }
    default_field = "interface"
    surfaces = ("eta", "interface")
    bench_scenario = "renumbering-test-1"
    bench_sizes = (4000, 16000, 64000, 256000, 1024000)
    bench_variants = ({"scheme": "roe"}, {"scheme": "ir-roe"}, {"scheme": "pvm-ifcp"})
    bench_t_end = 0.1

    def _initial(self, x, y):
        sc = self.scenario_name
        if sc == "internal-dambreak":
            H = np.full_like(x, 5.0)
            h1 = _disc(x, y, 1.5, 0.5, 4.0)
            h2 = H - h1
        elif sc == "renumbering-test-1":
            H = np.full_like(x, 6.0)
            h1 = _disc(x, y, 1.5, 0.5, 4.0)
            h2 = H - h1
        else:
            H = 1.0 - 1.5 * np.exp(-x * x - y * y)
            h1 = np.where(x >= 0, 4.0, 0.5)
            h2 = np.where(x >= 0, 0.5, 4.0)
        z = np.zeros_like(x)
        return {"h1": h1, "q1x": z, "q1y": z, "h2": h2, "q2x": z, "q2y": z}, H

    @classmethod
    def _check_params(cls, p):
        if not 0 < p["r"] < 1:  # guarded by the Param too; kept explicit for the message
            raise ParameterError(f"two-layer: parameter 'r' = {p['r']}; allowed: 0 < r < 1")

    def _derived(self):
        s = self.state
        return {"eta": s["h1"] + s["h2"] - s["H"], "interface": s["h2"] - s["H"]}
