"""`shallow-water` on both geometries through the public API: one model id, one schema."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError
from pdestudio.solvers.shallow_water.model import ShallowWater


def test_scenarios_pick_their_geometry():
    assert solvers.create("shallow-water", nx=16, backend="numpy").params["geometry"] == "grid"
    sim = solvers.create("shallow-water", scenario="bump-dambreak", cells=400, backend="numpy")
    assert type(sim) is ShallowWater and sim.params["geometry"] == "triangles"
    assert sim.mesh.kind == "triangles" and len(sim.fields()["h"]) == len(sim.mesh.cells)
    names = {p["name"] for p in solvers.describe("shallow-water")["parameters"]}
    assert set(sim.params) == names
    assert set(sim.fields()) == {f["name"] for f in solvers.describe("shallow-water")["fields"]}


@pytest.mark.parametrize("geometry,size", [("grid", {"nx": 24}), ("triangles", {"cells": 600})])
def test_lake_at_rest_on_both_geometries(geometry, size):
    sim = solvers.create("shallow-water", scenario="lake-at-rest", geometry=geometry,
                         backend="numpy", **size)
    sim.step(30)
    f = sim.fields()
    assert np.abs(f["eta"] - 1).max() < 1e-13
    assert np.abs(f["hu"]).max() < 1e-13 and np.abs(f["hv"]).max() < 1e-13
    assert f["H"].min() < 0  # the bottom rises above the reference level somewhere


def test_bump_dambreak_is_the_same_problem_on_both_geometries():
    """Mass is conserved on triangles, and the free surface at the centre agrees with the grid
    solution to within the discretisation error at t = 0.05."""
    tri = solvers.create("shallow-water", scenario="bump-dambreak", cells=4000, backend="numpy")
    area = tri.mesh.cell_areas
    m0 = area @ tri.fields()["h"]
    tri.advance(0.05)
    assert abs(area @ tri.fields()["h"] - m0) < 1e-12 * m0
    grid = solvers.create("shallow-water", scenario="bump-dambreak", geometry="grid", nx=80,
                          backend="numpy")
    grid.advance(0.05)
    c = tri.mesh.points[tri.mesh.cells].mean(axis=1)
    near = np.hypot(c[:, 0], c[:, 1]) < 0.5
    g = grid.fields()["eta"]
    X, Y = np.meshgrid(grid.mesh.x, grid.mesh.y)
    assert abs(tri.fields()["eta"][near].mean() - g[np.hypot(X, Y) < 0.5].mean()) < 0.05


def test_checkpoint_of_a_triangle_run_continues_identically(tmp_path):
    a = solvers.create("shallow-water", scenario="bump-dambreak", cells=500, backend="numpy",
                       renumber="gps")
    a.step(3)
    a.save(tmp_path / "c.npz")
    b = solvers.load(tmp_path / "c.npz", backend="numpy")
    assert type(b) is ShallowWater and b.params["geometry"] == "triangles"
    a.step(5)
    b.step(5)
    for k, v in a.fields().items():
        np.testing.assert_array_equal(v, b.fields()[k], err_msg=k)


def test_a_mesh_file_selects_triangles(tmp_path):
    from pdestudio.solvers.mesh.io import write_mesh
    from pdestudio.solvers.mesh.square import square_mesh
    mesh = square_mesh(300, seed=1)
    path = tmp_path / "square.vtu"
    write_mesh(path, mesh)
    sim = solvers.create("shallow-water", mesh=str(path), backend="numpy")
    assert sim.params["geometry"] == "triangles" and len(sim.fields()["h"]) == len(mesh.cells)


@pytest.mark.parametrize("kw,needle", [
    ({"geometry": "triangles", "order": 3}, "'order' = 3 needs geometry=grid"),
    ({"scheme": "ir-roe"}, "'scheme' = 'ir-roe' needs geometry=triangles"),
    ({"geometry": "grid", "mesh": "x.vtu"}, "'mesh' needs geometry=triangles"),
    ({"geometry": "hexagons"}, "'geometry'.*one of 'grid', 'triangles'"),
])
def test_contradictory_geometry_parameters_are_refused(kw, needle):
    with pytest.raises(ParameterError, match=needle):
        solvers.create("shallow-water", backend="numpy", **kw)
