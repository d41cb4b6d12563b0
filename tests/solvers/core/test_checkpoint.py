"""Checkpoints: restart gives identical continuation; with include_fields the file is also a data
export (fields in the original numbering, mesh coordinates) that solvers.load reads back."""
import numpy as np

from pdestudio import solvers


def test_include_fields_stores_fields_and_mesh_and_loads_back(tmp_path):
    sim = solvers.create("chemotaxis", backend="numpy", vertices=200)
    sim.step(5)
    path = tmp_path / "data.npz"
    sim.save(path, include_fields=True)
    with np.load(path, allow_pickle=False) as z:
        for name, values in sim.fields().items():
            np.testing.assert_array_equal(z[f"field/{name}"], values)
        np.testing.assert_array_equal(z["mesh/points"], sim.mesh.points)
    back = solvers.load(path, backend="numpy")
    assert back.steps == 5 and back.t == sim.t
    sim.step(3)
    back.step(3)
    for name, values in sim.fields().items():
        np.testing.assert_array_equal(back.fields()[name], values)
