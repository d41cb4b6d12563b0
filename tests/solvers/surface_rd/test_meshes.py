"""The mesh set-up kept for the next simulation on the same mesh (solvers/surface_rd/meshes.py):
shared where the mesh is the same, built again where anything it depends on differs, and a
simulation on a kept set-up runs bit for bit as one that built its own."""
import os

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.mesh.generators import rectangle
from pdestudio.solvers.mesh.io import write_mesh
from pdestudio.solvers.surface_rd import meshes


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.delenv("PDESTUDIO_MESH_CACHE", raising=False)
    meshes.clear()
    yield
    meshes.clear()


def test_simulations_on_one_mesh_share_its_set_up_and_run_as_if_alone(monkeypatch):
    a = solvers.create("gray-scott", backend="numpy", vertices=900, F=0.03)
    b = solvers.create("chemotaxis", backend="numpy", vertices=900)  # the same rectangle
    assert b.mesh is a.mesh and b.imesh is a.imesh and b.ops is a.ops
    c = solvers.create("gray-scott", backend="numpy", vertices=900, F=0.05, seed=3)
    assert c.ops is a.ops
    c.step(50)
    monkeypatch.setenv("PDESTUDIO_MESH_CACHE", "0")
    alone = solvers.create("gray-scott", backend="numpy", vertices=900, F=0.05, seed=3)
    assert alone.ops is not a.ops and alone.mesh is not a.mesh
    alone.step(50)
    for k in alone.state:
        assert np.array_equal(alone.state[k], c.state[k]), k
    assert c.dt == alone.dt and c.dt_max == alone.dt_max


def test_anything_the_set_up_depends_on_gives_another():
    a = solvers.create("gray-scott", backend="numpy", vertices=900)
    other = [solvers.create("gray-scott", backend="numpy", vertices=1000),
             solvers.create("gray-scott", backend="numpy", vertices=900, renumber="none"),
             solvers.create("gray-scott", backend="numpy", scenario="tube", vertices=900)]
    assert all(o.ops is not a.ops for o in other)
    assert other[1].mesh.n_vertices == a.mesh.n_vertices and other[1]._order is None
    assert a._order is not None
    # at most MAX_KEPT are kept: the least recently used went first
    again = solvers.create("gray-scott", backend="numpy", vertices=900)
    assert again.ops is not a.ops
    last = solvers.create("gray-scott", backend="numpy", scenario="tube", vertices=900)
    assert last.ops is other[2].ops


def test_only_meshes_up_to_the_size_limit_are_kept(monkeypatch):
    monkeypatch.setattr(meshes, "MAX_VERTICES", 1000)
    a = solvers.create("gray-scott", backend="numpy", vertices=900)
    b = solvers.create("gray-scott", backend="numpy", vertices=2000)
    assert a.mesh.n_vertices <= 1000 < b.mesh.n_vertices
    assert solvers.create("gray-scott", backend="numpy", vertices=900).ops is a.ops
    assert solvers.create("gray-scott", backend="numpy", vertices=2000).ops is not b.ops
    assert len(meshes._kept) == 1


def test_a_mesh_file_written_again_is_read_again(tmp_path):
    path = tmp_path / "patch.obj"
    write_mesh(path, rectangle(400))
    a = solvers.create("gray-scott", backend="numpy", scenario="file", mesh=str(path))
    b = solvers.create("gray-scott", backend="numpy", scenario="file", mesh=str(path))
    assert b.mesh is a.mesh
    write_mesh(path, rectangle(600))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # (a coarse clock: later)
    c = solvers.create("gray-scott", backend="numpy", scenario="file", mesh=str(path))
    assert c.mesh is not a.mesh and c.mesh.n_vertices != a.mesh.n_vertices


def test_bad_input_is_not_kept_and_still_named(tmp_path):
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nf 1 2 3\n")
    for _ in range(2):
        with pytest.raises(solvers.MeshError):
            solvers.create("gray-scott", backend="numpy", scenario="file", mesh=str(bad))
    with pytest.raises(solvers.ParameterError, match="'mesh' is used only by scenario 'file'"):
        solvers.create("gray-scott", backend="numpy", mesh=str(bad))
    assert not meshes._kept
