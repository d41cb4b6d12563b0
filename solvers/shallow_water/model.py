"""shallow-water: the one-layer shallow-water system with bathymetry (seed 002; SPEC §3.1, §3.3, §3.5).

    h_t + ∇·q = 0,   q_t + ∇·(q⊗q/h + ½ g h² I) = g h ∇H,   η = h − H,

with H the depth below a fixed reference level (positive downward; it may be negative) and walls
on the boundary of [−5, 5]². The model class only holds parameters, scenarios and fields; the
discretisation lives per geometry (`geometry=grid`: grid_scheme.py, the `xp` reference, and
grid_fused.py + grid_kernels.cu, the fused CUDA path). Dry cells are out of scope: h > 0
everywhere.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..core.errors import ParameterError
from ..core.params import CFL, Param, Scenario
from ..core.registry import register
from ..core.simulation import FieldInfo, Simulation
from ..mesh import Grid2D
from .scenarios import INITIAL
from .tri_base import COMMON_PARAMS as TRI_PARAMS
from .tri_base import scheme_param
from .tri_one_layer import ShallowWaterTriangles

L = 10.0          # side of the square domain [−5, 5]² (SPEC §3.5)
BYTES_PER_CELL = 7  # compulsory arrays per step: read h, qx, qy, H; write h, qx, qy


def _only(p: Param, geometry: str) -> Param:
    return replace(p, help=f"{p.help} [geometry={geometry} only]")


def _geometry(cls, scenario, params) -> str:
    """The geometry a set of arguments asks for: explicit, else triangles when a mesh file is
    given, else the scenario's default."""
    if params.get("geometry") is not None:
        return params["geometry"]
    if params.get("mesh") is not None:
        return "triangles"
    return cls.scenario(scenario).defaults.get("geometry", "grid")


class _Front:
    """`shallow-water` runs on a structured grid or on triangles; one model id, one parameter
    schema (the union), and the geometry picks the implementation class at construction."""

    def __new__(cls, *, backend="auto", dtype="float64", scenario=None, **params):
        if cls is ShallowWater and _geometry(cls, scenario, params) == "triangles":
            # not an instance of cls, so Python will not call __init__ itself
            obj = object.__new__(ShallowWaterOnTriangles)
            obj.__init__(backend=backend, dtype=dtype, scenario=scenario, **params)
            return obj
        return object.__new__(cls)

    def __init__(self, *, backend="auto", dtype="float64", scenario=None, **params):
        if params.get("geometry") is None and params.get("mesh") is not None:
            params["geometry"] = "triangles"
        super().__init__(backend=backend, dtype=dtype, scenario=scenario, **params)

    @classmethod
    def _check_params(cls, p: dict) -> None:
        if p["geometry"] == "grid":
            if p["mesh"] is not None:
                raise ParameterError("shallow-water: parameter 'mesh' needs geometry=triangles; "
                                     "allowed with geometry=grid: no mesh file")
            if p["scheme"] != "roe":
                raise ParameterError(f"shallow-water: parameter 'scheme' = '{p['scheme']}' "
                                     "needs geometry=triangles; allowed with geometry=grid: roe")
        elif p["order"] != 1:
            raise ParameterError(f"shallow-water: parameter 'order' = {p['order']} needs "
                                 "geometry=grid; allowed with geometry=triangles: 1")

    def _check_field(self, name: str, values: np.ndarray) -> None:
        if name == "h" and values.min() <= 0:
            raise ParameterError(f"shallow-water: field 'h' has minimum {values.min():g}; "
                                 "allowed: h > 0 everywhere (dry cells are out of scope)")


@register
class ShallowWater(_Front, Simulation):
    model = "shallow-water"
    title = "Shallow water (one layer)"
    description = ("One-layer shallow water over a bathymetry: path-conservative Roe finite "
                   "volumes, well-balanced, first or third order (seed 002, Castro et al.).")
    parameters = (
        Param("geometry", "str", "grid", "Mesh kind: a structured grid of square cells, or "
              "unstructured triangles (generated on [−5, 5]² or read from a mesh file).",
              choices=("grid", "triangles")),
        _only(Param("nx", "int", 400, "Cells along x on [−5, 5].", lo=2, hi=2**15), "grid"),
        _only(Param("ny", "int", None, "Cells along y on [−5, 5] (empty: same as nx).", lo=2,
                    hi=2**15, nullable=True), "grid"),
        _only(Param("order", "int", 1, "Order of accuracy: 1 (Roe, forward Euler) or 3 (CWENO3 "
                    "reconstruction, Gauss edges and volume term, SSP-RK3).", choices=(1, 3)),
              "grid"),
        Param("g", "float", 9.81, "Gravity.", unit="m/s²", lo=0, lo_open=True),
        CFL,
        _only(scheme_param("roe"), "triangles"),
    ) + tuple(_only(p, "triangles") for p in TRI_PARAMS if p.name not in ("g", "cfl"))
    scenarios = (
        Scenario("circular-dambreak", "SPEC §3.5 a: H = 1 − 0.4 exp(−x² − y²); η = 3 inside "
                 "r < 0.6, 1 outside; q = 0; walls; the paper runs t ∈ [0, 1] on a grid.",
                 {"geometry": "grid"}),
        Scenario("bump-dambreak", "SPEC §3.5 b: H = 4 − 1.5 exp(−x² − y²); h = 5 inside r < 1, "
                 "2.5 outside; the paper runs t ∈ [0, 1] on 1,001,898 triangles.",
                 {"geometry": "triangles"}),
        Scenario("lake-at-rest", "η = 1, q = 0 over a bumpy bottom that rises above the reference "
                 "level: stays at rest to round-off (well-balanced); grid or triangles."),
    )
    field_infos = {
        "h": FieldInfo("cell", "m", "water depth h = η + H (> 0: dry cells are out of scope)"),
        "hu": FieldInfo("cell", "m²/s", "momentum q_x = h u"),
        "hv": FieldInfo("cell", "m²/s", "momentum q_y = h v"),
        "H": FieldInfo("cell", "m", "bathymetry: depth below the reference level (positive "
                       "downward, may be negative); setting it keeps h"),
        "eta": FieldInfo("cell", "m", "free surface η = h − H", settable=False),
        "bottom": FieldInfo("cell", "m", "bottom elevation −H", settable=False),
    }
    default_field = "eta"
    surfaces = ("eta", "bottom")
    bench_scenario = "circular-dambreak"
    bench_sizes = (1000, 1200, 2000, 4096, 8192)
    bench_variants = ({"order": 1}, {"order": 3})
    bench_t_end = 1.0

    # ---- set-up -------------------------------------------------------------------------
    def _setup(self) -> None:
        p = self.params
        nx = p["nx"]
        ny = p["ny"] if p["ny"] is not None else nx
        self.dx, self.dy = L / nx, L / ny
        x = -L / 2 + (np.arange(nx) + 0.5) * self.dx
        y = -L / 2 + (np.arange(ny) + 0.5) * self.dy
        self.mesh = Grid2D(x, y)
        eta, H = INITIAL[self.scenario_name](x[None, :], y[:, None])
        h = eta + H
        if h.min() <= 0:
            raise ParameterError("shallow-water: the initial depth h = η + H has minimum "
                                 f"{h.min():g}; allowed: h > 0 (dry cells are out of scope)")
        xp, dt = self.xp, self.dtype
        self.state = {"h": xp.asarray(h, dtype=dt), "hu": xp.zeros(h.shape, dtype=dt),
                      "hv": xp.zeros(h.shape, dtype=dt), "H": xp.asarray(H, dtype=dt)}
        self._solver = self._make_solver()

    def _make_solver(self):
        p = self.params
        common = dict(g=p["g"], dx=self.dx, dy=self.dy, cfl=p["cfl"], order=p["order"])
        if self.kernel == "fused":
            from .grid_fused import GridFusedSolver
            return GridFusedSolver(dtype=self.dtype, shape=self.mesh.shape, **common)
        from .grid_scheme import GridArraySolver
        return GridArraySolver(xp=self.xp, **common)

    # ---- stepping -----------------------------------------------------------------------
    def _step(self, dt_limit):
        s = self.state
        (h, hu, hv), dt = self._solver.step(s["h"], s["hu"], s["hv"], s["H"], dt_limit)
        s["h"], s["hu"], s["hv"] = h, hu, hv
        return dt

    def _assign_state(self, name: str, values) -> None:
        super()._assign_state(name, values)
        self._solver.invalidate()  # a Δt computed from the old state no longer applies

    def _param_changed(self, name: str) -> None:
        self._solver = self._make_solver()  # the solvers hold cfl (kernels stay compiled)

    def _fields(self) -> dict:
        s = self.state
        return {"h": s["h"], "hu": s["hu"], "hv": s["hv"], "H": s["H"],
                "eta": s["h"] - s["H"], "bottom": -s["H"]}

    def work(self):
        n = self.mesh.shape[0] * self.mesh.shape[1]
        return n, BYTES_PER_CELL * n * np.dtype(self.dtype).itemsize


class ShallowWaterOnTriangles(_Front, ShallowWaterTriangles):
    """`shallow-water` with geometry=triangles: the unstructured finite volumes of
    tri_one_layer.py with this model's schema, scenarios (built from scenarios.INITIAL at the cell
    centroids, as on the grid) and fields."""

    model = ShallowWater.model
    title = ShallowWater.title
    description = ShallowWater.description
    parameters = ShallowWater.parameters
    scenarios = ShallowWater.scenarios
    field_infos = ShallowWater.field_infos
    default_field = ShallowWater.default_field
    surfaces = ShallowWater.surfaces

    def _initial(self, x, y):
        eta, H = INITIAL[self.scenario_name](x, y)
        z = np.zeros_like(x)
        return {"h": eta + H, "hu": z, "hv": z}, H

    def _derived(self):
        return {"eta": self.state["h"] - self.state["H"], "bottom": -self.state["H"]}
