"""The positive chemotaxis scheme (scheme=positive, the default; issue 16): the cell transport is
conservative to round-off on closed and open meshes, n stays ≥ 0 under the stated step bound (and
not above it), the adaptive step keeps it so over runs from rough data, and the scheme runs the
sample snake, generated and untuned meshes to t = 200 where the paper's scheme diverges."""
import numpy as np
import pytest

from benchmarks.surface_rd.robustness import (MESHES, PARAMS, ROUGH_MESHES, SNAKE, Watch, create,
                                              rough)
from pdestudio import solvers
from pdestudio.solvers import ParameterError, SimulationDiverged
from pdestudio.solvers.surface_rd.reference import THETA, EdgeOperators, positive_rates

P = PARAMS
MESH_CASES = ROUGH_MESHES


@pytest.fixture(scope="module", params=list(MESH_CASES))
def mesh(request):
    return MESH_CASES[request.param]()


def test_transport_conserves_cells_to_round_off(mesh):
    """Σ_i A_i (∂n/∂t − s r n (N − n))_i = 0: every edge flux leaves one vertex and enters the
    other; the same for the Laplacian of c."""
    n, c = rough(mesh.n_vertices)
    dn, dc, _ = positive_rates(n, c, EdgeOperators(mesh, np, np.float64), P, np)
    a = mesh.mixed_areas
    transport = a * (dn - P["s"] * P["r"] * n * (P["N"] - n))
    assert abs(transport.sum()) < 1e-14 * abs(transport).sum()
    diffusion = a * (dc - P["s"] * (n / (1 + n) - c))
    assert abs(diffusion.sum()) < 1e-14 * abs(diffusion).sum()


def test_positive_below_the_bound_and_not_above(mesh):
    """n + δt ∂n/∂t ≥ n (1 − δt λ) vertex by vertex, so n stays ≥ 0 for δt ≤ 1/max λ (zeros
    included); at 1.5/max λ some vertex goes negative: the bound is not vacuous."""
    n, c = rough(mesh.n_vertices, seed=1)
    dn, _, lam = positive_rates(n, c, EdgeOperators(mesh, np, np.float64), P, np)
    bound = 1 / lam.max()
    for f in (0.1, 0.5, THETA, 1.0):
        new = n + f * bound * dn
        assert (new >= n * (1 - f * bound * lam) - 1e-15).all()
        assert new.min() >= 0
    assert (n + 2.0 * bound * dn).min() < 0


def test_one_step_changes_the_mass_by_the_logistic_term_alone(tmp_path):
    """Through the model, adaptive steps on rough data on an open mesh with obtuse triangles:
    Σ A n⁺ − Σ A n = δt Σ A s r n (N − n) to round-off, step after step; the steps are the
    positivity bound THETA/max λ (shorter than the model's δt) and n stays ≥ 0."""
    sim = solvers.create("chemotaxis", backend="numpy", scenario="tube", vertices=1500)
    n, c = rough(sim.mesh.n_vertices, seed=2)
    sim.set_field("cells", n)
    sim.set_field("chemo", c)
    a = sim.mesh.mixed_areas
    _, _, lam = positive_rates(sim.state["cells"], sim.state["chemo"],
                               EdgeOperators(sim.imesh, np, np.float64), P, np)
    first = THETA / lam.max()
    assert first < 0.5 * sim.dt
    short = 0
    for k in range(20):
        n = sim.fields()["cells"]
        t0 = sim.t
        sim.step(1)
        dt = sim.t - t0
        if k == 0:
            assert dt == pytest.approx(first, rel=1e-12)
        short += dt < 0.999 * sim.dt
        new = sim.fields()["cells"]
        logistic = dt * (a * P["s"] * P["r"] * n * (P["N"] - n)).sum()
        change = (a * new).sum() - (a * n).sum()
        assert abs(change - logistic) < 1e-13 * (a * n).sum()
        assert new.min() >= 0
    assert short >= 3


def test_adaptive_step_keeps_n_nonnegative_far_above_the_threshold():
    """α = 40 (three times the Turing threshold: strong aggregation) from rough data on the
    tube: every step n ≥ 0, the bound shortens steps, nothing diverges."""
    sim = solvers.create("chemotaxis", backend="numpy", scenario="tube", vertices=1500,
                         alpha=40.0)
    n, c = rough(sim.mesh.n_vertices, seed=3)
    sim.set_field("cells", n)
    sim.set_field("chemo", c)
    watch = Watch(sim.scheme, sim)
    sim.scheme = watch
    sim.advance(20.0)
    assert sim.t == 20.0 and watch.min_n >= 0 and watch.shortened > 0
    assert np.isfinite(sim.fields()["cells"]).all()


def test_scheme_parameter():
    assert solvers.create("chemotaxis", backend="numpy", vertices=300).params["scheme"] == \
        "positive"
    with pytest.raises(ParameterError, match="'scheme'.*'positive', 'paper'"):
        solvers.create("chemotaxis", backend="numpy", vertices=300, scheme="upwind")


def test_snake_runs_to_200_where_the_paper_scheme_diverges(tmp_path):
    """The sample snake (open, 42 edges of negative weight): the positive scheme reaches t = 200
    with n ≥ 0 at every step and a pattern; the paper's scheme diverges near t = 37 and its
    message says what helps."""
    r = run_to_200("snake", tmp_path)
    paper = solvers.create("chemotaxis", backend="numpy", scenario="file", mesh=str(SNAKE),
                           scheme="paper")
    with pytest.raises(SimulationDiverged, match="use scheme=positive|Use scheme=positive"):
        with np.errstate(all="ignore"):
            paper.advance(200.0)
    assert 20 < paper.t < 60
    assert r["t"] == 200.0


def run_to_200(name, tmp_path):
    sim = create(name, tmp_path)
    v0 = sim.fields()["cells"].var()
    watch = Watch(sim.scheme, sim)
    sim.scheme = watch
    sim.advance(200.0)
    n = sim.fields()["cells"]
    assert sim.t == 200.0 and watch.min_n >= 0, (name, watch.min_n)
    assert np.isfinite(n).all() and n.var() > 100 * v0  # a pattern, not noise
    return {"t": sim.t, "min_n": watch.min_n}


FAST = ("snake", "rectangle-1k", "torus", "delaunay", "icosphere")  # 1-5 s each here
SLOW = ("rectangle-5k", "tube-2k")


@pytest.mark.parametrize("name", [pytest.param(m, marks=[pytest.mark.slow] if m in SLOW else [])
                                  for m in FAST[1:] + SLOW])
def test_runs_to_200_on_generated_and_untuned_meshes(name, tmp_path):
    """Rectangles and tubes of several sizes, a jittered torus (closed, a third of its edges of
    negative weight), a random Delaunay patch on a curved sheet and an icosphere (radius 10):
    t = 200 with n ≥ 0 at every step and a pattern (benchmarks/surface_rd/robustness.py gives
    the table in docs/VALIDATION.md)."""
    assert name in MESHES
    run_to_200(name, tmp_path)


def test_a_turing_mode_grows_at_the_dispersion_relation_rate_with_both_schemes():
    """On the regular rectangle the cotangent Laplacian is the 5-point one and cos(kx),
    k = mπ/32, is its Neumann eigenmode with λ_h = (4/dx²) sin²(k dx/2). Seeded with it
    (amplitude 1e-6, m = 17 next to the fastest wavenumber), n's amplitude grows between t = 5
    and 15 at the largest eigenvalue of the linearisation J(λ_h) to 0.5 %, and the two schemes'
    rates agree to 1e-7: their linearisations about the uniform state are the same."""
    from pdestudio.solvers.surface_rd.reference import chemotaxis_jacobian
    rates = {}
    for scheme in ("positive", "paper"):
        sim = solvers.create("chemotaxis", backend="numpy", vertices=1200, scheme=scheme,
                             perturbation=0.0)
        x = sim.mesh.points[:, 0]
        xs = np.unique(x)
        dx, k = xs[1] - xs[0], 17 * np.pi / xs[-1]
        phi, a = np.cos(k * x), sim.mesh.mixed_areas
        sim.set_field("cells", 1 + 1e-6 * phi)

        def amplitude():
            return (a * (sim.fields()["cells"] - 1) * phi).sum() / (a * phi * phi).sum()
        sim.advance(5.0)
        a5 = amplitude()
        sim.advance(15.0)
        rates[scheme] = np.log(amplitude() / a5) / 10.0
    lam_h = 4 / dx**2 * np.sin(k * dx / 2) ** 2
    sigma = np.linalg.eigvals(chemotaxis_jacobian(P, np.array([lam_h]))).real.max()
    assert abs(rates["positive"] / sigma - 1) < 5e-3, (rates, sigma)
    assert abs(rates["positive"] / rates["paper"] - 1) < 1e-7, rates
