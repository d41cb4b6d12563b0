"""What the one- and two-layer shallow-water models on triangles share: the mesh (a generated
square [−5, 5]² of `cells` triangles, or a mesh file), the cell ordering, the state W (nv, M) in
the internal numbering with the state dict holding views of its rows, fields in the original
numbering, the `array`/NumPy and `fused` steps, and the benchmark work counts.
"""
from __future__ import annotations

import math

from functools import lru_cache
from typing import ClassVar

import numpy as np

from ..core.errors import MeshError, ParameterError, SimulationDiverged
from ..core.params import CFL, SEED, Param
from ..core.simulation import Simulation
from ..mesh.io import read_mesh
from ..mesh.square import MAX_CELLS, square_mesh
from .tri_flux import SCHEMES
from .tri_fv import FVSolver, FVTables
from .tri_renumber import ORDERINGS

ASSEMBLIES = ("auto", "edge", "atomic", "cell")

COMMON_PARAMS = (
    Param("cells", "int", 16000, "Target number of triangles of the generated mesh of "
          "[−5, 5]² (exact; the papers' sizes are 4,000·4^k and 1,001,898). Ignored with a mesh "
          "file.", lo=16, hi=MAX_CELLS),
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


@lru_cache(maxsize=4)
def generated_mesh(cells: int, seed: int):
    """The generated square mesh (cached: read-only, shared by simulations of the same size)."""
    return square_mesh(cells, seed=seed)


@lru_cache(maxsize=8)
def generated_tables(cells: int, seed: int, renumber: str) -> FVTables:
    return FVTables.build(generated_mesh(cells, seed), renumber)


def scheme_param(default: str) -> Param:
    return Param("scheme", "str", default, "Finite-volume scheme: roe (path-conservative Roe, "
                 "classical), ir-roe (Roe in the edge-normal frame), pvm-ifcp (polynomial "
                 "viscosity, eigenvalues only).", choices=SCHEMES)


class TriShallowWater(Simulation):
    """Base of the finite-volume models on triangles (not registered)."""

    layers: ClassVar[int] = 1
    state_names: ClassVar[tuple[str, ...]] = ("h", "hu", "hv")
    size_param = "cells"
    contract_params = {"cells": 256}
    default_field = "eta"

    # ---- set-up -------------------------------------------------------------------------
    def _mesh(self):
        p = self.params
        if p["mesh"]:
            mesh = read_mesh(p["mesh"])
            z = mesh.points[:, 2]
            if np.ptp(z) > 1e-12 * max(1.0, np.abs(mesh.points[:, :2]).max()):
                raise MeshError(f"mesh '{p['mesh']}' is not planar (z varies by {np.ptp(z):.3g});"
                                " allowed: a 2D triangle mesh in a plane z = const")
            if mesh.n_cells < 2:
                raise MeshError(f"mesh '{p['mesh']}' has {mesh.n_cells} triangle; allowed: >= 2")
            return mesh
        return generated_mesh(p["cells"], p["seed"])

    def _initial(self, x, y) -> tuple[dict, np.ndarray]:
        """Scenario initial state at the cell centroids: ({name: values}, H)."""
        raise NotImplementedError

    def _setup(self) -> None:
        p = self.params
        xp = self.xp
        self.mesh = self._mesh()
        self.tables = (FVTables.build(self.mesh, p["renumber"]) if p["mesh"] else
                       generated_tables(p["cells"], p["seed"], p["renumber"]))
        x, y = self.tables.centroids[:, 0], self.tables.centroids[:, 1]
        init, H = self._initial(x, y)
        for k in self.mass_fields:
            if not np.all(init[k] > 0):
                raise ParameterError(f"{self.model}: the initial '{k}' has minimum "
                                     f"{init[k].min():g}; allowed: values > 0 (dry cells are "
                                     "out of scope)")
        self.W = xp.asarray(np.stack([init[k] for k in self.state_names]), dtype=self.dtype)
        self.state = {k: self.W[i] for i, k in enumerate(self.state_names)}
        self.state["H"] = xp.asarray(H, dtype=self.dtype)
        self._rank = xp.asarray(self.tables.rank)
        self._order = self.tables.order
        eig = "float64" if p.get("eigen_precision") == "float64" else self.dtype
        self.solver = None
        if self.kernel != "fused":
            self.solver = FVSolver(self.tables, xp, self.dtype, self.layers, p["scheme"],
                                   p["g"], p.get("r", 0.0), eig_dtype=eig)
        self.gpu = None
        if self.kernel == "fused":
            from .tri_gpu import FusedFV
            self.gpu = FusedFV(self.tables, self.dtype, self.layers, p["scheme"], p["g"],
                               p.get("r", 0.0), eig_mixed=(eig == "float64"
                                                            and self.dtype == "float32"),
                               assembly=p["assembly"])

    @property
    def assembly(self) -> str:
        """The assembly the fused path uses ('auto' resolved)."""
        return self.gpu.assembly if self.gpu is not None else "array"

    # ---- stepping -----------------------------------------------------------------------
    def _step(self, dt_limit):
        cfl = self.params["cfl"]
        if self.gpu is not None:
            return self.gpu.step(self.W, self.state["H"], cfl, dt_limit)
        return self.solver.step(self.W, self.state["H"], cfl, dt_limit)

    def _steps_unchecked(self, count, t_end):
        """On the fused path, batches of steps run with no host round trip (FusedFV.run keeps
        the clock on the device exactly as the base class does); the host then books the Δt's.
        A `_step` replaced on the instance (the contract tests) is honoured one step at a time."""
        if self.gpu is None or count < 2 or "_step" in self.__dict__:
            return super()._steps_unchecked(count, t_end)
        if t_end is not None and self._landed(t_end):
            return 0
        dts = self.gpu.run(self.W, self.state["H"], self.params["cfl"], count, self.t, t_end)
        k = 0
        for d in dts:
            if t_end is not None and self._landed(t_end):
                break  # the device applied Δt = 0 from here on
            d = float(d)
            if not math.isfinite(d) or d <= 0:
                raise SimulationDiverged(self.model, self.t, self.steps, self._worst_field())
            limit = None if t_end is None else t_end - self.t
            if limit is not None and d >= limit * (1 - 1e-12):
                self.t = t_end
            else:
                self.t += d
            self.steps += 1
            k += 1
        return k

    # ---- fields -------------------------------------------------------------------------
    def _derived(self) -> dict:
        return {}

    def _fields(self) -> dict:
        out = {k: v for k, v in self.state.items()}
        out.update(self._derived())
        return {k: v[self._rank] for k, v in out.items()}

    def _set_field(self, name: str, arr: np.ndarray) -> None:
        self._assign_state(name, self.xp.asarray(arr[self._order], dtype=self.dtype))

    def _assign_state(self, name: str, values) -> None:
        cur = self.state[name]
        cur[...] = values  # rows of W are views: always in place

    # ---- benchmarks ---------------------------------------------------------------------
    def work(self):
        m, e = self.tables.n_cells, self.tables.n_edges
        s = np.dtype(self.dtype).itemsize
        nv = 3 * self.layers
        per_cell = (2 * nv + 2) * s  # W read and written, H and |V| read
        per_edge = 8 + 3 * s  # two cell indices, normal and length
        return m, m * per_cell + e * per_edge

    def bandwidth(self) -> int:
        return self.tables.bandwidth

    def mass(self) -> np.ndarray:
        """Σ |V_i| h_l,i of each layer (float64 sums on the host)."""
        f = self.fields()
        area = np.asarray(self.mesh.cell_areas)
        return np.array([np.dot(area, f[k].astype(np.float64)) for k in self.mass_fields])
