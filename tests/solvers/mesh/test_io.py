"""Reading meshes with meshio: good files round-trip, bad ones raise MeshError naming the
problem (docs/MODELS.md §0: a malformed or degenerate mesh file is bad input, never a crash)."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from pdestudio.solvers import MeshError
from pdestudio.solvers.mesh import icosphere, read_mesh, tube, validate, write_mesh

RES = Path(__file__).resolve().parents[3] / "resources" / "meshes"


@pytest.mark.parametrize("name,closed", [("icosphere.obj", True), ("snake.ply", False)])
def test_sample_meshes_read(name, closed):
    m = read_mesh(RES / name)
    assert m.kind == "triangles" and m.points.shape[1] == 3 and m.cells.shape[1] == 3
    assert m.is_closed == closed
    assert m.n_vertices > 100 and (m.cell_areas > 0).all()


@pytest.mark.parametrize("ext", ["obj", "ply", "stl", "off", "vtu", "vtk", "msh"])
def test_round_trip_through_meshio_formats(ext, tmp_path):
    m = tube(300, length=10.0)
    path = tmp_path / f"m.{ext}"
    if ext == "stl":
        import meshio
        meshio.write(path, meshio.Mesh(m.points, [("triangle", m.cells)]), binary=False)
    else:
        write_mesh(path, m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # meshio's ASCII-STL overflow warning must be filtered
        r = read_mesh(path)
    assert r.n_cells == m.n_cells
    assert r.cell_areas.sum() == pytest.approx(m.cell_areas.sum(), rel=1e-5)


def _obj(tmp_path, text, name="bad.obj"):
    p = tmp_path / name
    p.write_text(text)
    return p


TRI = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"


@pytest.mark.parametrize("text,match", [
    (TRI + "f 1 2 7\n", r"face 0 has vertex index 6 out of range; allowed: 0 \.\. 3"),
    ("v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", "vertex 1 has non-finite coordinates"),
    (TRI + "l 1 2\n", "has no triangles"),
    (TRI + "f 1 2 3\nf 2 4 3\nf 3 2 1\n", r"face 0 \(\[0, 1, 2\]\) appears more than once"),
    ("v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\n", "face 0 is degenerate.*area"),
    (TRI + "v 1 0 1\nv 1 0 -1\nf 1 2 3\nf 2 1 5\nf 1 2 6\n",
     r"edge \[0, 1\] is non-manifold \(shared by 3 faces"),
])
def test_bad_obj_files_name_the_problem(tmp_path, text, match):
    with pytest.raises(MeshError, match=match):
        read_mesh(_obj(tmp_path, text))


def test_unreadable_and_missing_files(tmp_path):
    with pytest.raises(MeshError, match="does not exist"):
        read_mesh(tmp_path / "nosuch.obj")
    p = tmp_path / "x.unknownformat"
    p.write_bytes(b"\x00\x01garbage")
    with pytest.raises(MeshError, match=r"type '.unknownformat'; allowed: OBJ, PLY, STL, OFF"):
        read_mesh(p)
    p = tmp_path / "broken.ply"
    p.write_bytes(b"ply\nformat nonsense\n\x00\x01")
    with pytest.raises(MeshError, match="cannot be read"):
        read_mesh(p)


def test_validate_arrays_repeated_vertex_and_quads(tmp_path):
    with pytest.raises(MeshError, match=r"face 1 is degenerate \(repeats a vertex"):
        validate(np.eye(3), [[0, 1, 2], [0, 0, 1]])
    with pytest.raises(MeshError, match="no triangles"):
        validate(np.eye(3), np.zeros((0, 3), int))
    # quads are split; unused vertices dropped
    p = _obj(tmp_path, TRI + "v 5 5 5\nf 1 2 4 3\n", "quad.obj")
    m = read_mesh(p)
    assert m.n_cells == 2 and m.n_vertices == 4
    assert m.cell_areas.sum() == pytest.approx(1.0)


def test_closed_sphere_from_file_keeps_geometry(tmp_path):
    s = icosphere(2)
    write_mesh(tmp_path / "s.obj", s)
    r = read_mesh(tmp_path / "s.obj")
    np.testing.assert_allclose(r.mixed_areas, s.mixed_areas, rtol=1e-12)
