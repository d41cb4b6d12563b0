"""Small stand-in models of the mesh kinds no registered model may have yet (2D grid cell fields
with two surfaces, triangle meshes with vertex and cell fields, a mesh file parameter). They are
registered only for the duration of a test (monkeypatched registry), so the app's views, exports
and mesh loading are tested on every kind even before the real models land. Each advances its
state with a small reference scheme (solvers/core/scheme.py) and has no fused one (so no `kernel`
parameter)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pdestudio.solvers.core.params import Param, Scenario
from pdestudio.solvers.core.scheme import SchemeBase
from pdestudio.solvers.core.simulation import FieldInfo, Simulation
from pdestudio.solvers.mesh import Grid2D


def _unit_step(dt_limit) -> float:
    return 1.0 if dt_limit is None else min(1.0, dt_limit)


class WaveScheme(SchemeBase):
    """Explicit diffusion of the free surface over the bottom."""

    def step(self, t, dt_limit):
        sim = self.sim
        h, c = sim.state["h"], sim.params["c"]
        eta = h + sim.xp.asarray(sim.bottom)
        p = sim.xp.pad(eta, 1, mode="edge")
        lap = p[2:, 1:-1] + p[:-2, 1:-1] + p[1:-1, 2:] + p[1:-1, :-2] - 4 * eta
        sim.state["h"] = h + c * lap
        return _unit_step(dt_limit)


class FakeWave2D(Simulation):
    contract_params = {"nx": 24}
    model = "fake-wave-2d"
    title = "Fake 2D wave (test)"
    parameters = (
        Param("nx", "int", 48, "cells per side", lo=4, hi=4096),
        Param("c", "float", 0.2, "diffusion number", lo=0, hi=0.25, lo_open=True, live=True),
        Param("scheme", "str", "a", "a choice", choices=("a", "b")),
    )
    scenarios = (Scenario("bump", "a bump of water over a bumpy bottom"),
                 Scenario("flat", "flat water", {"nx": 32}))
    field_infos = {"h": FieldInfo("cell", "m", "depth", lo=0.0),
                   "eta": FieldInfo("cell", "m", "free surface", settable=False),
                   "bottom": FieldInfo("cell", "m", "bottom height", settable=False)}
    default_field = "h"
    surfaces = ("eta", "bottom")
    reference_scheme = WaveScheme

    def _setup(self):
        n = self.params["nx"]
        x = (np.arange(n) + 0.5) / n * 10 - 5
        self.mesh = Grid2D(x, x.copy())
        X, Y = np.meshgrid(x, x)
        self.bottom = -1 + 0.4 * np.exp(-X**2 - Y**2)
        eta = 0.5 * (np.hypot(X, Y) < 1.5) if self.scenario_name == "bump" else 0 * X
        self.state["h"] = self.xp.asarray(eta - self.bottom, dtype=self.dtype)

    def _fields(self):
        h = self.state["h"]
        b = self.xp.asarray(self.bottom, dtype=self.dtype)
        return {"h": h, "eta": h + b, "bottom": b}

    def work(self):
        return self.params["nx"] ** 2, 16 * self.params["nx"] ** 2


@dataclass(frozen=True)
class TriMesh:
    points: np.ndarray
    cells: np.ndarray
    kind: str = "triangles"


def rectangle(n: int):
    x, y = np.meshgrid(np.linspace(0, 2, n), np.linspace(0, 1, n))
    pts = np.column_stack([x.ravel(), y.ravel(), np.zeros(n * n)])
    j, i = np.meshgrid(np.arange(n - 1), np.arange(n - 1), indexing="ij")
    a = (j * n + i).ravel()
    cells = np.concatenate([np.column_stack([a, a + 1, a + n + 1]),
                            np.column_stack([a, a + n + 1, a + n])])
    return pts, cells


def tube(n: int):
    pts, cells = rectangle(n)
    th = pts[:, 1] * 2 * np.pi * (n - 1) / n
    return np.column_stack([pts[:, 0] * 3, np.cos(th), np.sin(th)]), cells


class EdgeDiffusionScheme(SchemeBase):
    """Graph-Laplacian diffusion of the vertex values along the mesh edges."""

    def step(self, t, dt_limit):
        sim = self.sim
        u = sim.state["u"]
        d = u[sim.j] - u[sim.i]
        lap = np.zeros_like(u)
        np.add.at(lap, sim.i, d)
        np.add.at(lap, sim.j, -d)
        sim.state["u"] = u + sim.params["D"] * lap / 6
        return _unit_step(dt_limit)


class DecayScheme(SchemeBase):
    """The free surface decays by 1 % a step."""

    def step(self, t, dt_limit):
        self.sim.state["eta"] = self.sim.state["eta"] * 0.99
        return _unit_step(dt_limit)


class FakeSurfaceRD(Simulation):
    contract_params = {"vertices": 100}
    model = "fake-surface-rd"
    title = "Fake surface diffusion (test)"
    parameters = (
        Param("vertices", "int", 400, "target vertices", lo=16, hi=10**6),
        Param("D", "float", 0.1, "diffusion", lo=0, hi=0.2, lo_open=True, live=True),
        Param("mesh", "str", None, "mesh file", nullable=True),
    )
    scenarios = (Scenario("rectangle", "a flat rectangle"), Scenario("tube", "a tube"),
                 Scenario("file", "a mesh file"))
    field_infos = {"u": FieldInfo("vertex", "", "concentration"),
                   "w": FieldInfo("cell", "", "cell mean", settable=False)}
    reference_scheme = EdgeDiffusionScheme

    @classmethod
    def _check_params(cls, p):
        from pdestudio.solvers import ParameterError
        if p.get("mesh") is not None and not str(p["mesh"]).strip():
            raise ParameterError("parameter 'mesh' is empty")

    def _setup(self):
        n = max(4, int(np.sqrt(self.params["vertices"])))
        if self.params["mesh"]:
            from pdestudio.solvers.mesh.io import read_mesh
            m = read_mesh(self.params["mesh"])
            pts, cells = np.asarray(m.points, dtype=np.float64), np.asarray(m.cells)
        elif self.scenario_name == "tube":
            pts, cells = tube(n)
        else:
            pts, cells = rectangle(n)
        self.mesh = TriMesh(pts, cells)
        edges = np.concatenate([cells[:, [0, 1]], cells[:, [1, 2]], cells[:, [2, 0]]])
        self.i, self.j = edges[:, 0], edges[:, 1]
        u0 = np.sin(3 * pts[:, 0]) * np.cos(2 * np.pi * pts[:, 1]) + pts[:, 2]
        self.state["u"] = self.xp.asarray(u0, dtype=self.dtype)

    def _fields(self):
        u = self.state["u"]
        return {"u": u, "w": u[self.mesh.cells].mean(axis=1)}

    def work(self):
        return len(self.mesh.points), 0


class FakeFlatWater(FakeSurfaceRD):
    """Planar triangles with cell fields drawn as two height surfaces."""

    model = "fake-flat-water"
    scenarios = (Scenario("rectangle", "a flat rectangle"),)
    field_infos = {"eta": FieldInfo("cell", "m", "free surface"),
                   "bottom": FieldInfo("cell", "m", "bottom", settable=False)}
    default_field = "eta"
    surfaces = ("eta", "bottom")
    reference_scheme = DecayScheme

    def _setup(self):
        super()._setup()
        c = self.mesh.points[self.mesh.cells].mean(axis=1)
        self.bottom = -1 + 0.3 * np.exp(-((c[:, 0] - 1) ** 2 + (c[:, 1] - 0.5) ** 2) * 8)
        self.state = {"eta": self.xp.asarray(0.2 * (c[:, 0] < 0.6), dtype=self.dtype)}

    def _fields(self):
        return {"eta": self.state["eta"], "bottom": self.xp.asarray(self.bottom)}

    def work(self):
        return len(self.mesh.cells), 0


FAKES = (FakeWave2D, FakeSurfaceRD, FakeFlatWater)
