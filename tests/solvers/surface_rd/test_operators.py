"""The discrete operators of docs/MODELS.md §2.2 ([P1] eqs. (2)–(4))."""
import numpy as np
import pytest

from pdestudio.solvers.mesh import icosphere, rectangle, tube
from pdestudio.solvers.surface_rd.reference import ArrayOperators, SurfaceOperators


def test_sphere_laplacian_of_x_is_minus_2x_with_error_falling():
    """Δ_S x = −2x on the unit sphere; the max and area-weighted L2 errors fall ~ h."""
    errs = []
    for level in (2, 3, 4, 5):
        m = icosphere(level)
        x = m.points[:, 0]
        e = SurfaceOperators(m).L @ x + 2 * x
        a = m.mixed_areas
        errs.append((m.mean_edge_length, abs(e).max(), np.sqrt((a * e * e).sum() / a.sum())))
    h, emax, el2 = map(np.array, zip(*errs))
    order_max = np.log(emax[:-1] / emax[1:]) / np.log(h[:-1] / h[1:])
    order_l2 = np.log(el2[:-1] / el2[1:]) / np.log(h[:-1] / h[1:])
    assert (order_max > 0.9).all(), order_max
    assert (order_l2 > 1.1).all(), order_l2
    assert emax[-1] < 5e-3


@pytest.mark.parametrize("mesh", [icosphere(3), tube(2000).permuted()], ids=["sphere", "tube"])
def test_area_weighted_laplacian_sums_to_zero(mesh):
    """Σ A_i Δf_i = 0 for any f on a closed mesh (discrete divergence theorem); with the
    zero-flux boundary of the cotangent operator it holds on open meshes too."""
    f = np.random.default_rng(0).standard_normal(mesh.n_vertices)
    lap = SurfaceOperators(mesh).L @ f
    a = mesh.mixed_areas
    assert abs((a * lap).sum()) < 1e-12 * (a * abs(lap)).sum()


def test_laplacian_of_constants_and_of_linear_functions_on_a_plane():
    m = rectangle(600)
    L = SurfaceOperators(m).L
    assert abs(L @ np.ones(m.n_vertices)).max() < 1e-12
    x, y = m.points[:, 0], m.points[:, 1]
    inner = ~m.boundary_vertices
    assert abs((L @ (3 * x - 2 * y + 1))[inner]).max() < 1e-10
    # x² + y² has Laplacian 4 exactly on the regular grid
    assert np.allclose((L @ (x**2 + y**2))[inner], 4.0, atol=1e-9)


@pytest.mark.parametrize("mesh", [tube(3000), icosphere(3)], ids=["tube", "sphere"])
def test_face_and_vertex_gradients_of_linear_functions(mesh):
    """Face gradients are exact for f = a·x (the projection of a onto each face's plane); the
    vertex gradient of a linear function on a plane is exact too."""
    a = np.array([0.7, -1.3, 2.1])
    f = mesh.points @ a + 0.4
    ops = SurfaceOperators(mesh)
    g = (ops.F @ f).reshape(3, -1).T
    nrm = mesh.cell_normals
    exact = a - (nrm @ a)[:, None] * nrm
    assert abs(g - exact).max() < 1e-11
    # counter-clockwise rotation: the x-derivative of f = x on a +z-facing triangle is +1
    r = rectangle(100)
    gx = (SurfaceOperators(r).F @ r.points[:, 0]).reshape(3, -1)
    np.testing.assert_allclose(gx[0], 1.0)
    np.testing.assert_allclose(gx[1:], 0.0, atol=1e-13)
    v = ArrayOperators(SurfaceOperators(r), np, np.float64).vertex_gradient(r.points @ a)
    np.testing.assert_allclose(v, np.broadcast_to([a[0], a[1], 0.0], v.shape), atol=1e-12)


def test_one_ring_stencil_equals_the_operators():
    """The fused kernels' one-ring coefficients reproduce L f and W F f exactly."""
    m = tube(1500)
    ops = SurfaceOperators(m)
    st = ops.stencil
    f = np.random.default_rng(1).standard_normal(m.n_vertices)
    rows = np.repeat(np.arange(m.n_vertices), np.diff(st.indptr))
    df = f[st.nbr] - f[rows]
    lap = np.bincount(rows, st.lap * df, minlength=m.n_vertices)
    grad = np.stack([np.bincount(rows, st.grad[:, d] * df, minlength=m.n_vertices)
                     for d in range(3)], axis=1)
    ref = ArrayOperators(ops, np, np.float64)
    np.testing.assert_allclose(lap, ops.L @ f, rtol=0, atol=1e-12 * abs(ops.L @ f).max())
    g = ref.vertex_gradient(f)
    np.testing.assert_allclose(grad, g, rtol=0, atol=1e-12 * abs(g).max())


def test_gershgorin_bound_covers_and_nearly_matches_the_spectrum():
    m = rectangle(300)
    ops = SurfaceOperators(m)
    lam = np.abs(np.linalg.eigvals(ops.L.toarray())).max()
    assert lam <= ops.lambda_max * (1 + 1e-12)
    assert lam > 0.8 * ops.lambda_max  # tight on the regular mesh: the guard is not vacuous
