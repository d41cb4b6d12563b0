"""Data exports read back: VTI (ImageData) for grids with the values at the right coordinates,
VTU for meshes, both with the simulated time (FieldData TimeValue); PVD time series at the asked
times; the .npz export is a checkpoint with the fields that solvers.load reads back."""
import json
import subprocess
import sys

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.app import export

from .vtkread import image_axes, no_temporary_files, read, read_pvd


def cli(*args, cwd=None):
    r = subprocess.run([sys.executable, "-m", "pdestudio", *map(str, args)],
                       capture_output=True, text=True, timeout=120, cwd=cwd)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("model,params,axis_kind", [
    ("heat-1d", {"nx": 50}, "node"),
    ("mean-curvature", {"nx": 12, "ny": 9}, "node"),
    ("shallow-water", {"nx": 10, "ny": 7}, "cell"),
])
def test_vti_holds_each_grid_field_at_its_coordinates(tmp_path, model, params, axis_kind):
    sim = solvers.create(model, backend="numpy", **params)
    sim.step(3)
    export.write_data(sim, tmp_path / "f.vti")
    d = read(tmp_path / "f.vti")
    assert d["type"] == "ImageData"
    assert d["field"]["TimeValue"][0] == sim.t and d["field"]["Step"][0] == 3
    xs, ys, _ = image_axes(d)
    fields = sim.fields()
    data = d["cell"] if axis_kind == "cell" else d["point"]
    assert set(data) == set(fields)
    x = np.asarray(sim.mesh.x)
    if axis_kind == "cell":  # points are the cell corners: the centres are their midpoints
        np.testing.assert_allclose(0.5 * (xs[1:] + xs[:-1]), x, atol=1e-12)
    else:
        np.testing.assert_allclose(xs, x, atol=1e-12)
    if hasattr(sim.mesh, "y"):
        y = np.asarray(sim.mesh.y)
        got_y = 0.5 * (ys[1:] + ys[:-1]) if axis_kind == "cell" else ys
        np.testing.assert_allclose(got_y, y, atol=1e-12)
    for name, values in fields.items():
        assert data[name].dtype == values.dtype
        # VTK's order is x fastest: the (ny, nx) fields, raveled
        np.testing.assert_array_equal(data[name], values.ravel())


def test_vti_is_smaller_than_the_quads_of_a_vtu(tmp_path):
    sim = solvers.create("shallow-water", backend="numpy", nx=100)
    export.write_data(sim, tmp_path / "f.vti")
    export.write_data(sim, tmp_path / "f.vtu")
    fields_bytes = sum(v.nbytes for v in sim.fields().values())
    vti = (tmp_path / "f.vti").stat().st_size
    assert vti < 1.01 * fields_bytes + 4096  # the fields and a header, no coordinates
    assert vti < 0.7 * (tmp_path / "f.vtu").stat().st_size


def test_vtu_of_a_mesh_has_the_time_and_meshio_reads_it(tmp_path):
    meshio = pytest.importorskip("meshio")
    sim = solvers.create("gray-scott", backend="numpy", vertices=300)
    sim.step(2)
    export.write_data(sim, tmp_path / "m.vtu")
    d = read(tmp_path / "m.vtu")
    assert d["type"] == "UnstructuredGrid" and d["field"]["TimeValue"][0] == sim.t
    assert (d["types"] == 5).all()  # VTK_TRIANGLE
    np.testing.assert_array_equal(d["connectivity"].reshape(-1, 3), sim.mesh.cells)
    m = meshio.read(tmp_path / "m.vtu")
    np.testing.assert_allclose(m.points, np.asarray(sim.mesh.points))
    for name, values in sim.fields().items():
        np.testing.assert_array_equal(m.point_data[name], values)


def test_vti_is_refused_for_a_mesh_before_the_run(tmp_path):
    rc, out, err = cli("run", "gray-scott", "--set", "vertices=300", "--steps", "1000000000",
                       "--backend", "numpy", "--export-data", tmp_path / "m.vti")
    assert rc == 2 and len(err.strip().splitlines()) == 1  # the error only (issue 27)
    assert "ImageData (.vti) holds grids" in err and "use .vtu" in err
    assert list(tmp_path.iterdir()) == []


def test_time_series_every_dt_lands_on_the_times(tmp_path):
    rc, out, err = cli("run", "heat-1d", "--set", "nx=64", "--backend", "numpy", "--until",
                       "0.01", "--export-data", tmp_path / "s.pvd", "--export-dt", "0.0025",
                       "--json")
    assert rc == 0, err
    entries = read_pvd(tmp_path / "s.pvd")
    assert [t for t, _ in entries] == pytest.approx([0, 0.0025, 0.005, 0.0075, 0.01], abs=1e-15)
    for t, f in entries:
        d = read(f)
        assert d["field"]["TimeValue"][0] == t
    # the last frame is the final state, which the summary names with the file
    summary = json.loads(out)
    assert summary["t"] == 0.01
    assert summary["outputs"] == [{"kind": "series", "path": str(tmp_path / "s.pvd"),
                                   "format": ".pvd", "frames": 5}]
    final = solvers.create("heat-1d", backend="numpy", nx=64)
    for t in (0.0025, 0.005, 0.0075, 0.01):
        final.advance(t)
    np.testing.assert_array_equal(read(entries[-1][1])["point"]["T"], final.fields()["T"])
    assert no_temporary_files(tmp_path) == []


def test_time_series_every_k_steps_on_a_mesh_and_a_rerun_replaces_it(tmp_path):
    args = ("run", "gray-scott", "--set", "vertices=300", "--backend", "numpy", "--steps", "10",
            "--export-data", tmp_path / "g.pvd", "--export-every", "4")
    assert cli(*args)[0] == 0
    entries = read_pvd(tmp_path / "g.pvd")
    steps = [int(read(f)["field"]["Step"][0]) for _, f in entries]
    assert steps == [0, 4, 8, 10] and all(f.suffix == ".vtu" for _, f in entries)
    assert cli(*args[:-1], "5")[0] == 0  # a second run replaces the series folder
    entries = read_pvd(tmp_path / "g.pvd")
    assert [int(read(f)["field"]["Step"][0]) for _, f in entries] == [0, 5, 10]
    assert sorted(p.name for p in (tmp_path / "g_series").iterdir()) == \
        [f"g_{k:06d}.vtu" for k in range(3)]
    assert no_temporary_files(tmp_path) == []


def test_series_folder_with_other_files_is_not_replaced(tmp_path):
    (tmp_path / "g_series").mkdir()
    (tmp_path / "g_series" / "notes.txt").write_text("mine")
    rc, _, err = cli("run", "heat-1d", "--steps", "10", "--export-data", tmp_path / "g.pvd",
                     "--export-every", "5")
    assert rc == 2 and "holds other files" in err
    assert (tmp_path / "g_series" / "notes.txt").read_text() == "mine"


def test_npz_data_export_is_a_checkpoint_that_continues(tmp_path):
    rc, out, err = cli("run", "heat-1d", "--set", "nx=64", "--backend", "numpy", "--steps", "30",
                       "--export-data", tmp_path / "d.npz")
    assert rc == 0, err
    with np.load(tmp_path / "d.npz") as z:
        assert {"field/T", "mesh/x"} <= set(z.files)
    sim = solvers.load(tmp_path / "d.npz", backend="numpy")
    sim.step(20)
    direct = solvers.create("heat-1d", backend="numpy", nx=64)
    direct.step(50)
    np.testing.assert_array_equal(sim.fields()["T"], direct.fields()["T"])
