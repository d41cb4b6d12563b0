"""TriangleMesh topology and geometry, the generators and renumbering."""
import numpy as np
import pytest

from pdestudio.solvers import MeshError
from pdestudio.solvers.mesh import (TriangleMesh, disc, icosphere, inverse, morton_vertices, padded,
                          rcm_cells, rcm_vertices, rectangle, shuffled, tube)


def test_single_triangle_geometry():
    m = TriangleMesh([[0, 0, 0], [2, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    assert m.cell_areas[0] == pytest.approx(1.0)
    np.testing.assert_allclose(m.cell_normals[0], [0, 0, 1])
    np.testing.assert_allclose(m.corner_angles[0], [np.pi / 2, np.arctan(0.5), np.arctan(2)])
    # right angle at vertex 0: Meyer gives A/2 there and A/4 at the others (obtuse rule applies
    # only to > 90°, so this triangle uses Voronoi areas, which coincide with those values)
    np.testing.assert_allclose(m.mixed_areas, [0.5, 0.25, 0.25])
    assert m.boundary_vertices.all() and m.boundary_edges.all() and not m.is_closed


def test_obtuse_triangle_mixed_areas():
    m = TriangleMesh([[0, 0, 0], [1, 0, 0], [-1, 1, 0]], [[0, 1, 2]])  # obtuse at vertex 0
    a = m.cell_areas[0]
    np.testing.assert_allclose(m.mixed_areas, [a / 2, a / 4, a / 4])


@pytest.mark.parametrize("mesh", [rectangle(500), tube(900), icosphere(2), disc(400)],
                         ids=["rectangle", "tube", "sphere", "disc"])
def test_topology_and_areas_are_consistent(mesh):
    # mixed areas tile the surface exactly; Euler characteristic V - E + F
    assert mesh.mixed_areas.sum() == pytest.approx(mesh.cell_areas.sum(), rel=1e-12)
    chi = mesh.n_vertices - mesh.n_edges + mesh.n_cells
    expected = {"rect": 1, "tube": 0, "icos": 2, "disc": 1}[mesh.name[:4]]
    assert chi == expected
    # every interior edge has two cells, boundary edges one; cell_neighbours is symmetric
    ec = mesh.edge_cells
    assert ((ec[:, 1] >= 0) == ~mesh.boundary_edges).all()
    nb = mesh.cell_neighbours
    for c in range(0, mesh.n_cells, 7):
        for d in nb[c][nb[c] >= 0]:
            assert c in nb[d]
    # consistent orientation: each directed edge occurs once
    c = mesh.cells
    d = np.concatenate([c[:, [0, 1]], c[:, [1, 2]], c[:, [2, 0]]])
    assert len(np.unique(d, axis=0)) == len(d)
    # the 1-ring CSR is the edge list, both ways
    indptr, idx = mesh.vertex_vertex
    assert indptr[-1] == 2 * mesh.n_edges
    assert mesh.valence.sum() == 2 * mesh.n_edges
    # vertex-face CSR: each vertex appears at its corner
    vp, vc, corner = mesh.vertex_face
    rows = np.repeat(np.arange(mesh.n_vertices), np.diff(vp))
    assert (mesh.cells[vc, corner] == rows).all()


def test_generators_hit_the_requested_size_and_irregularity():
    r = rectangle(20_000)
    assert abs(r.n_vertices - 20_000) / 20_000 < 0.02
    assert r.valence[~r.boundary_vertices].max() == 6 == r.valence[~r.boundary_vertices].min()
    t = tube(20_000)
    assert abs(t.n_vertices - 20_000) / 20_000 < 0.05
    val = t.valence[~t.boundary_vertices]
    assert val.min() <= 5 and val.max() >= 7 and val.var() > 0.3  # irregular connectivity
    assert np.degrees(t.corner_angles.min()) > 10  # no slivers
    assert t.summary()["boundary_edges"] > 0
    s = icosphere(3)
    assert s.n_vertices == 642 and s.is_closed
    np.testing.assert_allclose(np.linalg.norm(s.points, axis=1), 1.0)
    # outward normals
    assert (np.einsum("md,md->m", s.cell_normals, s.cell_centroids) > 0).all()


def test_edge_normals_point_from_left_to_right_cell():
    m = rectangle(200)
    en = m.edge_normals_2d
    ec = m.edge_cells
    inner = ec[:, 1] >= 0
    d = m.cell_centroids[ec[inner, 1], :2] - m.cell_centroids[ec[inner, 0], :2]
    assert (np.einsum("ed,ed->e", en[inner], d) > 0).all()
    np.testing.assert_allclose(np.linalg.norm(en, axis=1), 1.0)
    # closed cells: Σ over a cell's edges of ±|e| n = 0
    acc = np.zeros((m.n_cells, 2))
    w = en * m.edge_lengths[:, None]
    np.add.at(acc, ec[:, 0], w)
    np.add.at(acc, ec[inner, 1], -w[inner])
    assert abs(acc).max() < 1e-12


def test_padded_tables_are_column_major_and_aligned():
    m = tube(500)
    indptr, idx = m.vertex_vertex
    t = padded(indptr, idx, fill=-1)
    assert t.shape == (m.valence.max(), -(-m.n_vertices // 32) * 32)
    for i in (0, 17, m.n_vertices - 1):
        row = t[:, i]
        np.testing.assert_array_equal(row[row >= 0], idx[indptr[i]:indptr[i + 1]])
        assert (row[m.valence[i]:] == -1).all()


def test_renumbering_reduces_bandwidth_and_keeps_the_mesh():
    m = rectangle(3000)
    s = m.permuted(vertex_order=shuffled(m.n_vertices, 3))
    assert s.bandwidth() > 0.5 * m.n_vertices

    def mean_distance(mesh):
        return np.abs(np.diff(mesh.edges, axis=1)).mean()

    assert mean_distance(s) > 0.2 * m.n_vertices
    for order in (rcm_vertices(s), morton_vertices(s)):
        r = s.permuted(vertex_order=order)
        assert mean_distance(r) < 0.02 * m.n_vertices  # neighbours stored close together
        np.testing.assert_allclose(r.mixed_areas[inverse(order)], s.mixed_areas)
    assert s.permuted(vertex_order=rcm_vertices(s)).bandwidth() < 0.05 * m.n_vertices
    rc = s.permuted(cell_order=rcm_cells(s))
    np.testing.assert_allclose(np.sort(rc.cell_areas), np.sort(s.cell_areas))


def test_bad_construction_raises_mesh_error():
    with pytest.raises(MeshError, match="points"):
        TriangleMesh(np.zeros((3, 4)), [[0, 1, 2]])
    with pytest.raises(MeshError, match="cells"):
        TriangleMesh(np.zeros((3, 3)), [[0, 1]])
    with pytest.raises(MeshError, match="rectangle.*at least"):
        rectangle(2)


@pytest.mark.parametrize("mesh", [rectangle(300), tube(500), icosphere(2), disc(200)],
                         ids=["rectangle", "tube", "sphere", "disc"])
def test_vertex_fans_walk_around_each_vertex(mesh):
    ptr, ring = mesh.vertex_fans
    faces = {tuple(sorted(c)) for c in mesh.cells.tolist()}
    seen = 0
    for i in range(mesh.n_vertices):
        r = ring[ptr[i]:ptr[i + 1]]
        assert len(r) == mesh.valence[i] + (not mesh.boundary_vertices[i])
        for a, b in zip(r[:-1], r[1:]):
            assert tuple(sorted((i, a, b))) in faces
            seen += 1
        if not mesh.boundary_vertices[i]:
            assert r[0] == r[-1]  # closed fan
    assert seen == 3 * mesh.n_cells


def test_vertex_fans_refuse_bowties_and_flipped_faces():
    bow = TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0]],
                       [[0, 1, 2], [0, 3, 4]])
    assert bow.vertex_fans is None
    t = tube(300)
    flipped = t.cells.copy()
    flipped[5] = flipped[5, [0, 2, 1]]
    assert TriangleMesh(t.points, flipped).vertex_fans is None
