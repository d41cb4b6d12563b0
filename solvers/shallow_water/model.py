"""shallow-water and two-layer: the shallow-water systems with bathymetry ([P2] and [P4]; docs/MODELS.md
§3.1–3.5). Parameters, scenarios and fields only; the discretisation lives per geometry:

    shallow-water   h_t + ∇·q = 0,   q_t + ∇·(q⊗q/h + ½ g h² I) = g h ∇H,   η = h − H,
                    on a structured grid of the rectangle [−Lx/2, Lx/2] × [−Ly/2, Ly/2] (default
                    the papers' [−5, 5]²; geometry=grid: grid/reference.py, the `xp` scheme, and
                    grid/fused.py + grid/kernels, the CUDA one) or on triangles (geometry=triangles:
                    triangles/reference.py and triangles/fused.py; the generated square mesh is
                    scaled to Lx × Ly, a mesh file brings its own domain)
    two-layer       two superposed layers, U = (h1, q1x, q1y, h2, q2x, q2y), index 1 the upper
                    layer, r = ρ1/ρ2 < 1, coupling −g h1 ∇h2 and −r g h2 ∇h1, on triangles

H is the depth below a fixed reference level (positive downward; it may be negative), walls on the
boundary. Both geometries share the edge fluxes of riemann.py (kernels/riemann.cuh on the GPU).
Dry cells are out of scope: every layer keeps h > 0. The finiteness check between chunks of steps
checks that too (one more reduction per depth field per check interval): a step that leaves a
depth ≤ 0 is reported as a `DryCell` (a SimulationDiverged) with the state from before it, and
every divergence comes with advice for these schemes (`divergence_advice`, guards.py).

Domain size (issue 16): the scenarios are written on the papers' [−5, 5]² and evaluated at
(x/ℓ, y/ℓ) with ℓ = min(Lx, Ly)/10, so a 2 km basin still holds the same dam break, ℓ times wider;
depths and velocities stay, so times scale by ℓ as well (the solution at ℓ·t is the image of the
default one at t). The CWENO3 weights' ε = (min(Δx, Δy)/ℓ)² keeps the third-order scheme
invariant under that scaling too. With the default Lx = Ly = 10, ℓ = 1 and nothing changes.

On triangles the state W (nv, M) is kept in the internal cell numbering (`renumber`) with the
state dict holding views of its rows; fields come back and are set in the original numbering.
Precision (two-layer): `eigen_precision = float64` with dtype float32 is docs/MODELS.md [P2]'s mixed mode
("CUSDP"): every per-edge computation runs in float64 on float32 state, accumulators and update.
"""
from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np

from ..core import memory
from ..core.errors import ParameterError
from ..core.decomp import WHOLE, GridSplit
from ..core.params import CFL, SEED, Param, Scenario
from ..core.registry import register
from ..core.scheme import SchemeEntry, SchemeTable
from ..core.simulation import FieldInfo, QuantityInfo, Simulation
from ..mesh import Grid2D
from ..mesh.square import MAX_CELLS
from .grid.fused import GridFused
from .grid.reference import GridReference
from .guards import DryCell, advice, bad_checks, first_bad
from .riemann import SCHEMES
from .scenarios import INITIAL, TWO_LAYER
from .triangles.fused import TriFused
from .triangles.reference import TriReference
from .triangles.tables import ORDERINGS, FVTables, generated_mesh, generated_tables, load_mesh

L = 10.0          # side of the papers' square domain [−5, 5]² (docs/MODELS.md §3.5): Lx, Ly's default
NMAX = 2**16      # cells along a side of the grid (65536² float32 runs on 4 GPUs, decomposed;
#                   one process is held to what fits by core/memory.py; the kernels index cells
#                   with 64-bit integers)
BYTES_PER_CELL = 7  # grid, compulsory arrays per step: read h, qx, qy, H; write h, qx, qy
ASSEMBLIES = ("auto", "edge", "atomic", "cell")

DOMAIN_LO, DOMAIN_HI = 1e-3, 1e7  # m: a 1 mm tank to a 10,000 km ocean (Δx Δy stays normal)
DOMAIN = tuple(  # the domain's size: both geometries, both models
    Param(f"L{a}", "float", L, f"Length of the domain along {a}: [−L{a}/2, L{a}/2], centred at 0 "
          "(the papers' [−5, 5]² is 10 × 10). The scenarios scale with ℓ = min(Lx, Ly)/10 (their "
          "features ℓ times wider, depths unchanged, so times ℓ times longer). With a mesh file: "
          "the file's own domain (leave 10).", unit="m", lo=DOMAIN_LO, hi=DOMAIN_HI)
    for a in ("x", "y"))

SCALED = ("Lengths as on [−5, 5]²; on an Lx × Ly domain x, y stand for x/ℓ, y/ℓ with "
          "ℓ = min(Lx, Ly)/10 (the features ℓ times wider, centred at 0; depths unchanged, so "
          "waves keep their speed and t ∈ [0, ℓ] shows the same flow).")

TRI_PARAMS = (  # the triangle finite volumes' parameters
    Param("cells", "int", 16000, "Target number of triangles of the generated mesh of the "
          "Lx × Ly rectangle (the square [−5, 5]² scaled; exact; the papers' sizes are 4,000·4^k "
          "and 1,001,898). Ignored with a mesh file.", lo=16, hi=MAX_CELLS),
    Param("mesh", "str", None, "Path of a 2D triangle mesh file (meshio formats); None = the "
          "generated square.", nullable=True),
    Param("g", "float", 9.81, "Gravity g.", unit="m/s²", lo=0, lo_open=True),
    Param("renumber", "str", "rcm", "Order of the cells in memory: none (as generated, "
          "MATLAB-like: bandwidth 0.75–1 N), rcm (reverse Cuthill–McKee) or gps "
          "(Gibbs–Poole–Stockmeyer). Fields always come back in the original numbering.",
          choices=ORDERINGS),
    CFL,
    Param("assembly", "str", "auto", "Fused GPU path: edge (edge kernel writing per-edge "
          "slots, then cell kernels), atomic (edge kernel with atomicAdd into the cells), cell "
          "(one thread per cell computing its three edge fluxes: no scatter, fluxes twice); "
          "auto = cell for one layer, edge for two layers (measured fastest, tri_bench).",
          choices=ASSEMBLIES),
    SEED,
)


def grid_shape(p) -> tuple[int, int]:
    """(nx, ny) of the grid; ny defaults to round(nx·Ly/Lx) (nearly square cells)."""
    nx, ny = p["nx"], p["ny"]
    if ny is None:
        ny = max(2, round(nx * p["Ly"] / p["Lx"]))
        if ny > NMAX:
            raise ParameterError(f"shallow-water: the default ny = round(nx·Ly/Lx) = {ny} for "
                                 f"nx = {nx}, Lx = {p['Lx']:g}, Ly = {p['Ly']:g}; allowed: "
                                 f"ny <= {NMAX} (give ny, or a smaller nx or Ly/Lx)")
    return nx, ny


def scheme_param(default: str) -> Param:
    return Param("scheme", "str", default, "Finite-volume scheme: roe (path-conservative Roe, "
                 "classical), ir-roe (Roe in the edge-normal frame), pvm-ifcp (polynomial "
                 "viscosity, eigenvalues only).", choices=SCHEMES)


def _only(p: Param, geometry: str) -> Param:
    return replace(p, help=f"{p.help} [geometry={geometry} only]")


TRI_SCHEMES = tuple({"scheme": s} for s in ("roe", "ir-roe", "pvm-ifcp"))


class _ShallowWaterBase(Simulation):
    """What both models share: the triangle set-up (mesh, cell order, state W), the fields in the
    original numbering and the benchmark work counts."""

    layers: ClassVar[int] = 1
    state_names: ClassVar[tuple[str, ...]] = ("h", "hu", "hv")
    schemes = SchemeTable(None, {"triangles": SchemeEntry(TriReference, TriFused, TRI_SCHEMES)})
    check_params = {"cells": 3000}

    @property
    def geometry(self) -> str:
        return self.params.get("geometry", "triangles")

    @property
    def length_scale(self) -> float:
        """ℓ = min(Lx, Ly)/10: the scenarios' features are ℓ times those on [−5, 5]² (1 with a
        mesh file, whose coordinates the scenarios use as they are)."""
        p = self.params
        return 1.0 if p.get("mesh") else min(p["Lx"], p["Ly"]) / L

    @staticmethod
    def _check_domain(model: str, p: dict) -> None:
        if p.get("mesh") is None:
            return
        for a in ("Lx", "Ly"):
            if p[a] != L:
                raise ParameterError(f"{model}: parameter '{a}' = {p[a]:g} sizes the generated "
                                     "mesh; a mesh file brings its own domain; allowed with a "
                                     f"mesh file: {a} = {L:g} (the default)")

    def _initial(self, x, y) -> tuple[dict, np.ndarray]:
        """Scenario initial state at the cell centres: ({name: values}, H)."""
        raise NotImplementedError

    def _setup(self) -> None:
        p, xp = self.params, self.xp
        if p["mesh"]:
            self.mesh = load_mesh(p["mesh"])
            self.tables = FVTables.build(self.mesh, p["renumber"])
        else:
            size = (p["cells"], p["seed"])
            self.mesh = generated_mesh(*size, p["Lx"], p["Ly"])
            self.tables = generated_tables(*size, p["renumber"], p["Lx"], p["Ly"])
        ell = self.length_scale
        x, y = self.tables.centroids[:, 0] / ell, self.tables.centroids[:, 1] / ell
        init, H = self._initial(x, y)
        for k in self.state_names[::3]:
            if not np.all(init[k] > 0):
                raise ParameterError(f"{self.model}: the initial '{k}' has minimum "
                                     f"{init[k].min():g}; allowed: values > 0 (dry cells are "
                                     "out of scope)")
        self.W = xp.asarray(np.stack([init[k] for k in self.state_names]), dtype=self.dtype)
        self.state = {k: self.W[i] for i, k in enumerate(self.state_names)}
        self.state["H"] = xp.asarray(H, dtype=self.dtype)
        self._rank = xp.asarray(self.tables.rank)
        self._order = self.tables.order

    def _derived(self) -> dict:
        raise NotImplementedError

    # ---- divergence: dry cells and advice (guards.py) ----------------------------------------
    _why = None  # the last check's finding: (field, None | (minimum, flat cell index)) or None

    def _check_arrays(self) -> list:
        """The base class's finiteness checks, plus every depth > 0 (one sync for all)."""
        return bad_checks(self, self.state_names[::3])

    def _judge_checks(self, vals) -> str | None:
        self._why = first_bad(self, self.state_names[::3], vals)
        return None if self._why is None else self._why[0]

    def divergence_advice(self) -> str:
        return advice(self, self._why)

    def _diverged(self, field: str):
        why = self._why
        if why is None or why[0] != field or why[1] is None:
            return super()._diverged(field)
        low, i = why[1]
        return DryCell(self.model, self.t, self.steps, field, low, self._cell_xy(i),
                       self.divergence_advice())

    def _cell_xy(self, i: int) -> tuple[float, float]:
        """Centre of the cell at flat index i of a state array."""
        if self.geometry == "grid":
            row, col = divmod(i, len(self.mesh.x))
            return float(self.mesh.x[col]), float(self.mesh.y[row])
        x, y = self.tables.centroids[i]  # the state's (internal) numbering
        return float(x), float(y)

    def _fields(self) -> dict:
        out = dict(self.state)
        out.update(self._derived())  # callables: computed when asked for (Simulation)
        if self.geometry == "grid":
            return out
        r = self._rank  # (each field renumbered only when asked for: a frame takes two or three)
        return {k: (lambda v=v: v()[r]) if callable(v) else (lambda v=v: v[r])
                for k, v in out.items()}

    def _internal_index(self, field, ext):
        return ext if self.geometry == "grid" else np.asarray(self.tables.rank)[ext]

    def _set_field(self, name: str, arr: np.ndarray) -> None:
        if self.geometry != "grid":
            arr = arr[self._order]
        self._assign_state(name, self.xp.asarray(arr, dtype=self.dtype))

    def work(self):
        s = np.dtype(self.dtype).itemsize
        if self.geometry == "grid":
            n = self.mesh.shape[0] * self.mesh.shape[1]
            return n, BYTES_PER_CELL * n * s
        m, e = self.tables.n_cells, self.tables.n_edges
        per_cell = (2 * 3 * self.layers + 2) * s  # W read and written, H and |V| read
        per_edge = 8 + 3 * s  # two cell indices, normal and length
        return m, m * per_cell + e * per_edge


@register
class ShallowWater(_ShallowWaterBase):
    quantity_infos = {
        "volume": QuantityInfo("m³", "∫ h dA: conserved (walls, no sources)"),
        "energy": QuantityInfo("m⁵/s²", "∫ ½|q|²/h + ½ g η² dA (× density: joules); the "
                               "schemes dissipate it at shocks"),
        "max eta": QuantityInfo("m", "highest free surface"),
        "min h": QuantityInfo("m", "smallest depth"),
    }

    def _quantities(self) -> dict:
        h, hu, hv, H = (self.state[k] for k in ("h", "hu", "hv", "H"))
        if self.geometry == "grid":
            area = self.mesh.dx * self.mesh.dy
        else:
            if getattr(self, "_area_dev", None) is None:
                self._area_dev = self.xp.asarray(
                    np.asarray(self.mesh.cell_areas)[self._order], dtype=self.dtype)
            area = self._area_dev
        eta = h - H
        e = 0.5 * (hu * hu + hv * hv) / h + (0.5 * self.params["g"]) * eta * eta
        return {"volume": (area * h).sum(), "energy": (area * e).sum(), "max eta": eta.max(),
                "min h": h.min()}

    model = "shallow-water"
    title = "Shallow water (one layer)"
    schemes = SchemeTable("geometry", {
        "grid": SchemeEntry(GridReference, GridFused, ({"nx": 37, "ny": 29},
                                                       {"nx": 37, "ny": 29, "order": 3})),
        "triangles": SchemeEntry(TriReference, TriFused,
                                 tuple({**o, "scenario": "bump-dambreak", "cells": 3000}
                                       for o in TRI_SCHEMES))})
    check_params = {}  # (the sizes are in the table's options: cells only with triangles)
    description = ("One-layer shallow water over a bathymetry: path-conservative Roe finite "
                   "volumes, well-balanced, first or third order ([P2], docs/MODELS.md, Castro et al.).")
    parameters = (
        Param("geometry", "str", "grid", "Mesh kind: a structured grid of (nearly) square "
              "cells, or unstructured triangles (generated on the Lx × Ly rectangle or read from "
              "a mesh file).", choices=("grid", "triangles")),
        *DOMAIN,
        _only(Param("nx", "int", 400, "Cells along x (Δx = Lx/nx).", lo=2, hi=NMAX), "grid"),
        _only(Param("ny", "int", None, "Cells along y (Δy = Ly/ny; empty: round(nx·Ly/Lx), "
                    "nearly square cells; nx on the default square).", lo=2, hi=NMAX,
                    nullable=True), "grid"),
        _only(Param("order", "int", 1, "Order of accuracy: 1 (Roe, forward Euler) or 3 (CWENO3 "
                    "reconstruction, Gauss edges and volume term, SSP-RK3).", choices=(1, 3)),
              "grid"),
        Param("g", "float", 9.81, "Gravity.", unit="m/s²", lo=0, lo_open=True),
        CFL,
        Param("shock_fix", "bool", True, "Carbuncle cure: shear-wave (Rusanov) dissipation at "
              "edges beside a strong compression (a shock), so that shock fronts stay straight; "
              "off = the plain schemes (transverse stripes can grow at strong shocks)."),
        _only(scheme_param("roe"), "triangles"),
    ) + tuple(_only(p, "triangles") for p in TRI_PARAMS if p.name not in ("g", "cfl"))
    scenarios = (
        Scenario("circular-dambreak", "docs/MODELS.md §3.5 a: H = 1 − 0.4 exp(−x² − y²); η = 3 inside "
                 "r < 0.6, 1 outside; q = 0; walls; the paper runs t ∈ [0, 1] on a grid. " + SCALED,
                 {"geometry": "grid"}),
        Scenario("bump-dambreak", "docs/MODELS.md §3.5 b: H = 4 − 1.5 exp(−x² − y²); h = 5 inside r < 1, "
                 "2.5 outside; the paper runs t ∈ [0, 1] on 1,001,898 triangles. " + SCALED,
                 {"geometry": "triangles"}),
        Scenario("lake-at-rest", "η = 1, q = 0 over a bumpy bottom that rises above the reference "
                 "level: stays at rest to round-off (well-balanced); grid or triangles. " + SCALED),
    )
    field_infos = {
        "h": FieldInfo("cell", "m", "water depth h = η + H (> 0: dry cells are out of scope)",
                       lo=0.0, lo_open=True),
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
    # decomposed runs (core/decomp.py, docs/DISTRIBUTED.md): strips of rows, halo = the stencil
    decomposition = GridSplit(
        shape=lambda p: grid_shape(p)[::-1],
        halo=lambda p: 1 if p["order"] == 1 and not p.get("shock_fix") else 2,  # (the cure's
        # sensor reads a second row)
        refuse=lambda p: None if p["geometry"] == "grid" else
        "geometry=triangles is not decomposed; allowed: geometry=grid", findings=("_why",),
        fused=lambda sim: _strip_scheme(sim), resize=lambda p, ny, nx: {"nx": nx, "ny": ny})

    def __init__(self, *, backend="auto", dtype="float64", scenario=None, **params):
        if params.get("geometry") is None and params.get("mesh") is not None:
            params["geometry"] = "triangles"  # a mesh file means triangles
        super().__init__(backend=backend, dtype=dtype, scenario=scenario, **params)

    @classmethod
    def _check_params(cls, p: dict) -> None:
        cls._check_domain(cls.model, p)
        if p["geometry"] == "grid":
            grid_shape(p)  # a default ny out of range is refused here
            if p["mesh"] is not None:
                raise ParameterError("shallow-water: parameter 'mesh' needs geometry=triangles; "
                                     "allowed with geometry=grid: no mesh file")
            if p["scheme"] != "roe":
                raise ParameterError(f"shallow-water: parameter 'scheme' = '{p['scheme']}' "
                                     "needs geometry=triangles; allowed with geometry=grid: roe")
        elif p["order"] != 1:
            raise ParameterError(f"shallow-water: parameter 'order' = {p['order']} needs "
                                 "geometry=grid; allowed with geometry=triangles: 1")

    @classmethod
    def memory_estimate(cls, params):
        """core/memory.py counts nx² cells where ny is empty; here ny = round(nx·Ly/Lx)."""
        if params.get("geometry") == "grid" and params.get("ny") is None:
            params = {**params, "ny": grid_shape(params)[1]}
        host, dev = super().memory_estimate(params)
        if params.get("geometry") == "grid" and params.get("_gpu") \
                and params.get("kernel") != "array":
            # the fused kernels: on the device the state, the output buffers, the sensors and
            # the set-up's copies (16 arrays, 18 for order 3's stages: 12 were 1 % short of the
            # pool at 256², H200); on the host only the
            # set-up's float64 initial state and its temporaries
            n = memory.cells(cls, params)
            size = np.dtype(params.get("_dtype", "float64")).itemsize
            host = memory.BASE + 64 * n
            dev = memory.BASE_DEVICE + (16 if params.get("order") == 1 else 18) * size * n
        return host, dev

    def _check_field(self, name: str, values: np.ndarray) -> None:
        if name == "h" and values.min() <= 0:
            raise ParameterError(f"shallow-water: field 'h' has minimum {values.min():g}; "
                                 "allowed: h > 0 everywhere (dry cells are out of scope)")

    def _setup(self) -> None:
        if self.geometry == "triangles":
            return super()._setup()
        p = self.params
        nx, ny = grid_shape(p)
        Lx, Ly = p["Lx"], p["Ly"]
        self.dx, self.dy = Lx / nx, Ly / ny
        x = -Lx / 2 + (np.arange(nx) + 0.5) * self.dx
        y = -Ly / 2 + (np.arange(ny) + 0.5) * self.dy
        self.mesh = Grid2D(x, y)
        ell = self.length_scale
        # CWENO3's ε in units of ℓ: the third-order scheme is invariant under the scaling too
        self.weno_eps = (min(self.dx, self.dy) / ell) ** 2
        # only this rank's rows when decomposed (core/decomp.py): pointwise, the same values
        rows = getattr(self, "domain", WHOLE).rows
        eta, H = INITIAL[self.scenario_name](x[None, :] / ell, y[rows, None] / ell)
        h = eta + H
        if h.min() <= 0:
            raise ParameterError("shallow-water: the initial depth h = η + H has minimum "
                                 f"{h.min():g}; allowed: h > 0 (dry cells are out of scope)")
        xp, dt = self.xp, self.dtype
        self.state = {"h": xp.asarray(h, dtype=dt), "hu": xp.zeros(h.shape, dtype=dt),
                      "hv": xp.zeros(h.shape, dtype=dt), "H": xp.asarray(H, dtype=dt)}

    def _initial(self, x, y):
        eta, H = INITIAL[self.scenario_name](x, y)
        z = np.zeros_like(x)
        return {"h": eta + H, "hu": z, "hv": z}, H

    def _derived(self):
        s = self.state
        return {"eta": lambda: s["h"] - s["H"], "bottom": lambda: -s["H"]}

    memory_per_cell = {"grid": 576, "triangles": 1600}  # peak bytes per cell (core/memory.py)
    # on the GPU the triangles' fused scheme holds its edge tables and batch buffers besides:
    # 1,832 bytes a cell measured (8,000-cell bump dam break, H100), with a margin
    device_memory_per_cell = {"grid": 576, "triangles": 2200}


def _strip_scheme(sim):
    """The fused first-order scheme of a decomposed run's strip, or why not (grid/fused_halo)."""
    from .grid.fused_halo import GridFusedHalo, usable
    why = usable(sim)
    return why if why is not None else GridFusedHalo(sim)


@register
class TwoLayer(_ShallowWaterBase):
    model = "two-layer"
    title = "Two-layer shallow water (triangles)"
    description = ("Two superposed layers of shallow fluid on an unstructured triangle mesh: "
                   "path-conservative Roe, IR-Roe and PVM-IFCP schemes, cell renumbering "
                   "(seeds 002 and 004).")
    layers = 2
    state_names = ("h1", "q1x", "q1y", "h2", "q2x", "q2y")
    parameters = DOMAIN + TRI_PARAMS + (
        Param("r", "float", 0.998, "Density ratio r = ρ1/ρ2 of the upper to the lower layer.",
              lo=0, hi=1, lo_open=True, hi_open=True),
        scheme_param("ir-roe"),
        Param("eigen_precision", "str", "working", "Precision of the per-edge eigen-solve: "
              "working (the dtype) or float64 (with dtype float32: [P2]'s mixed precision).",
              choices=("working", "float64")),
    )
    scenarios = (
        Scenario("internal-dambreak", "H = 5; h1 = 0.5 inside r < 1.5, 4 outside; h2 = 5 − h1; "
                 "r = 0.998 ([P2], docs/MODELS.md, §3.5 c). " + SCALED, {"r": 0.998}),
        Scenario("renumbering-test-1", "Seed 004's test 1: H = 6; h1 = 0.5 inside r < 1.5, 4 "
                 "outside; h2 = H − h1; r = 0.5; t ∈ [0, 0.1]. " + SCALED, {"r": 0.5}),
        Scenario("renumbering-test-2", "Seed 004's test 2: H = 1 − 1.5 exp(−x² − y²) (negative "
                 "near the origin); h1 = 4 for x ≥ 0 else 0.5, h2 = 0.5 for x ≥ 0 else 4; "
                 "r = 0.98; t ∈ [0, 0.1]. " + SCALED, {"r": 0.98}),
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
    size_param = "cells"
    contract_params = {"cells": 256}
    bench_scenario = "renumbering-test-1"
    bench_sizes = (4000, 16000, 64000, 256000, 1024000)
    bench_variants = ({"scheme": "roe"}, {"scheme": "ir-roe"}, {"scheme": "pvm-ifcp"})
    bench_t_end = 0.1

    @classmethod
    def _check_params(cls, p):
        cls._check_domain(cls.model, p)
        if not 0 < p["r"] < 1:  # guarded by the Param too; kept explicit for the message
            raise ParameterError(f"two-layer: parameter 'r' = {p['r']}; allowed: 0 < r < 1")

    def _initial(self, x, y):
        h1, h2, H = TWO_LAYER[self.scenario_name](x, y)
        z = np.zeros_like(x)
        return {"h1": h1, "q1x": z, "q1y": z, "h2": h2, "q2x": z, "q2y": z}, H

    def _derived(self):
        s = self.state
        return {"eta": lambda: s["h1"] + s["h2"] - s["H"], "interface": lambda: s["h2"] - s["H"]}

    memory_per_cell = 2304  # peak host bytes per cell, float64 (core/memory.py)
