"""One-layer shallow water on triangle meshes (seed 002, SPEC §3.1, §3.5 b): U = (h, hu, hv),
bottom source g h ∇H (H the depth below the reference level, may be negative), free surface
η = h − H. First-order path-conservative finite volumes (tri_flux: Roe in closed form, IR-Roe,
PVM-IFCP), wall boundaries, Δt from the CFL condition each step.

`ShallowWaterTriangles` is complete but not registered: it becomes the `geometry=triangles` path
of the `shallow-water` model (same field names h, hu, hv, eta, H; parameter names of SPEC §0).
"""
from __future__ import annotations

import numpy as np

from ..core.params import Scenario
from ..core.simulation import FieldInfo
from .tri_base import COMMON_PARAMS, TriShallowWater, scheme_param


def lake_bathymetry(x, y):
    """A bumpy bottom: a Gaussian hill that rises above the reference level (H < 0) and ripples."""
    return 2.0 - 2.5 * np.exp(-((x - 1.0) ** 2 + y * y)) + 0.3 * np.sin(1.7 * x) * np.cos(1.3 * y)


class ShallowWaterTriangles(TriShallowWater):
    model = "shallow-water"
    title = "Shallow water (triangles)"
    description = ("One-layer shallow water on an unstructured triangle mesh: path-conservative "
                   "Roe, IR-Roe and PVM-IFCP schemes (seed 002).")
    layers = 1
    state_names = ("h", "hu", "hv")
    mass_fields = ("h",)
    parameters = COMMON_PARAMS + (scheme_param("roe"),)
    scenarios = (
        Scenario("bump-dambreak", "H = 4 − 1.5 exp(−x² − y²); h = 5 inside r < 1, 2.5 outside "
                 "(seed 002, Table 3: 1,001,898 triangles, t ∈ [0, 1])."),
        Scenario("lake-at-rest", "η = 1 over a bumpy bottom (partly above the reference level, "
                 "H < 0), q = 0: must stay at rest to round-off."),
    )
    field_infos = {
        "h": FieldInfo("cell", "m", "water depth", lo=0.0, lo_open=True),
        "hu": FieldInfo("cell", "m²/s", "discharge, x"),
        "hv": FieldInfo("cell", "m²/s", "discharge, y"),
        "eta": FieldInfo("cell", "m", "free surface η = h − H", settable=False),
        "H": FieldInfo("cell", "m", "depth of the bottom below the reference level (may be "
                       "negative)"),
    }
    surfaces = ("eta",)
    bench_scenario = "bump-dambreak"
    bench_sizes = (16000, 64000, 256000, 1001898)
    bench_variants = ({"scheme": "roe"}, {"scheme": "ir-roe"}, {"scheme": "pvm-ifcp"})
    bench_t_end = 1.0

    def _initial(self, x, y):
        z = np.zeros_like(x)
        if self.scenario_name == "bump-dambreak":
            H = 4.0 - 1.5 * np.exp(-x * x - y * y)
            h = np.where(np.hypot(x, y) < 1.0, 5.0, 2.5)
        else:
            H = lake_bathymetry(x, y)
            h = 1.0 + H
        return {"h": h, "hu": z, "hv": z}, H

    def _derived(self):
        return {"eta": self.state["h"] - self.state["H"]}
