"""Model files on the NumPy reference (docs/EQUATIONS.md): the built-in models reproduced to
round-off, exact decay rates with second-order convergence, a Fisher–KPP front speed, and
Schnakenberg's growth rates against the linear dispersion relation."""
import copy

import numpy as np
import pytest

from pdestudio import solvers

from .conftest import CHEMOTAXIS, GRAY_SCOTT


def _same_state(a, b, steps):
    for k in b.state:
        a.set_field(k, b.fields()[k])
    a.step(steps)
    b.step(steps)
    return max(float(np.abs(a.fields()[k] - b.fields()[k]).max() / np.abs(b.fields()[k]).max())
               for k in b.state)


def test_gray_scott_file_reproduces_the_builtin_on_the_same_mesh():
    mid = solvers.define(GRAY_SCOTT)
    ref = solvers.create("gray-scott", backend="numpy", vertices=800, renumber="none", dt=0.5)
    sim = solvers.create(mid, backend="numpy", dt=0.5)
    assert sim.mesh.n_vertices == ref.mesh.n_vertices
    np.testing.assert_array_equal(sim.mesh.points, ref.mesh.points)
    assert _same_state(sim, ref, 200) < 1e-12
    assert sim.t == pytest.approx(ref.t)


def test_chemotaxis_file_reproduces_the_positive_scheme():
    mid = solvers.define(CHEMOTAXIS)
    ref = solvers.create("chemotaxis", backend="numpy", vertices=800, renumber="none",
                         scheme="positive", dt=0.02)
    sim = solvers.create(mid, backend="numpy", dt=0.02)
    assert sim.transports, "the cell flux must be the positive (SG) edge flux"
    rng = np.random.default_rng(3)
    n = 1 + 0.3 * rng.uniform(-1, 1, ref.mesh.n_vertices)  # large gradients: upwinding matters
    c = 0.5 + 0.3 * rng.uniform(-1, 1, ref.mesh.n_vertices)
    ref.set_field("cells", n)
    ref.set_field("chemo", c)
    assert _same_state(sim, ref, 100) < 1e-11
    assert sim.t == pytest.approx(ref.t, rel=1e-12)


@pytest.mark.parametrize("model", ["chemotaxis", "gray-scott"])
def test_imex_file_reproduces_the_builtin_imex(model):
    """The built-in integrator=imex (semi-implicit Euler) and the file's imex1: the same implicit
    diffusion (A + δt·c·K, by CG there, by a factorisation here), and for chemotaxis the same
    explicit upwind cell flux with its adaptive step."""
    src = CHEMOTAXIS if model == "chemotaxis" else GRAY_SCOTT
    dt = 0.3 if model == "chemotaxis" else 0.5
    mid = solvers.define(src)
    ref = solvers.create(model, backend="numpy", vertices=800, renumber="none", dt=dt,
                         integrator="imex")
    sim = solvers.create(mid, backend="numpy", dt=dt, integrator="imex1")
    assert not sim.transports or sim.transports["cells"].D == ("num", 0.0)
    rng = np.random.default_rng(3)
    for k in ref.state:
        ref.set_field(k, ref.fields()[k] * (1 + 0.3 * rng.uniform(-1, 1, ref.mesh.n_vertices)))
    assert _same_state(sim, ref, 40) < 1e-8  # both CGs converged far below this
    assert sim.t == pytest.approx(ref.t, rel=1e-9)  # adaptive steps of states equal to 1e-10
    assert sim.steps == ref.steps and sim.t > 40 * 0.1 * dt


def _mode_decay_error(kind: dict, exact_rate: float, mode, t_end: float) -> float:
    src = {"model": {"name": "heat-file"}, "equations": {"u": "D*lap(u)"},
           "parameters": {"D": 1.0}, "initial": {"u": mode}, "domain": kind,
           "numerics": {"integrator": "rk4", "cfl": 0.2}}
    sim = solvers.create(solvers.define(src), backend="numpy")
    u0 = sim.fields()["u"].copy()
    sim.advance(t_end)
    return float(np.abs(sim.fields()["u"] - u0 * np.exp(-exact_rate * t_end)).max()
                 / np.abs(u0).max())


def test_diffusion_mode_decays_at_the_exact_rate_on_a_periodic_grid_eoc2():
    L = 2 * np.pi
    errs = [_mode_decay_error({"kind": "rectangle", "nx": n, "ny": n, "Lx": L, "Ly": L,
                               "boundary": "periodic"}, 5.0, "sin(x)*cos(2*y)", 0.2)
            for n in (16, 32)]
    eoc = np.log2(errs[0] / errs[1])
    assert errs[1] < 5e-3 and 1.8 < eoc < 2.2, (errs, eoc)


def test_diffusion_mode_decays_at_the_exact_rate_on_a_sphere_eoc2():
    errs = [_mode_decay_error({"kind": "mesh", "surface": "sphere", "vertices": v,
                               "boundary": "natural"}, 2.0, "z", 0.2) for v in (642, 2562)]
    eoc = np.log2(errs[0] / errs[1])
    assert errs[1] < 5e-3 and eoc > 1.7, (errs, eoc)


def test_fisher_kpp_front_moves_at_two_sqrt_dr():
    D, r = 1.0, 1.0
    src = {"model": {"name": "fkpp"}, "equations": {"u": "D*lap(u) + r*u*(1 - u)"},
           "parameters": {"D": D, "r": r}, "initial": {"u": "heaviside(10 - x)"},
           "domain": {"kind": "interval", "nx": 2400, "L": 480.0, "boundary": "neumann"},
           "numerics": {"integrator": "ssprk3", "cfl": 0.9}}
    sim = solvers.create(solvers.define(src), backend="numpy")
    x = sim.mesh.x

    def front():
        u = sim.fields()["u"]
        i = int(np.argmax(u < 0.5))
        return x[i - 1] + (u[i - 1] - 0.5) / (u[i - 1] - u[i]) * (x[i] - x[i - 1])

    sim.advance(100.0)
    x1 = front()
    sim.advance(200.0)
    speed = (front() - x1) / 100.0
    assert abs(speed / (2 * np.sqrt(D * r)) - 1) < 0.01, speed


SCHNAKENBERG = {
    "model": {"name": "schnakenberg-test"},
    "equations": {"u": "lap(u) + a - u + u^2*v", "v": "d*lap(v) + b - u^2*v"},
    "parameters": {"a": 0.1, "b": 0.9, "d": 10.0},
    "initial": {"u": "a + b + 1e-6*cos(kc*x)", "v": "b/(a + b)^2"},
    "domain": {"kind": "interval", "nx": 200, "boundary": "periodic"},
    "numerics": {"integrator": "rk4", "cfl": 0.5},
}


def _dispersion(a, b, d, k2):
    u, v = a + b, b / (a + b) ** 2
    J = np.array([[-1 + 2 * u * v, u * u], [-2 * u * v, -u * u]])
    return max(np.linalg.eigvals(J - np.diag([k2, d * k2])).real)


@pytest.mark.parametrize("factor", [0.95, 1.05])
def test_schnakenberg_growth_matches_the_dispersion_relation_at_the_turing_threshold(factor):
    a, b = 0.1, 0.9
    # the Turing threshold: (d fu + gv)² = 4 d det J with fu = 0.8, gv = −1, det J = 1
    dc = (5.6 + np.sqrt(5.6**2 - 4 * 0.64)) / 1.28
    kc = np.sqrt((0.8 * dc - 1) / (2 * dc))
    L = 2 * np.pi * 8 / kc
    src = copy.deepcopy(SCHNAKENBERG)
    src["parameters"].update(d=factor * dc, kc=kc)
    src["domain"]["L"] = L
    sim = solvers.create(solvers.define(src), backend="numpy")
    dx = L / 200
    k2 = (2 - 2 * np.cos(kc * dx)) / dx**2  # the discrete Laplacian's eigenvalue
    sigma = _dispersion(a, b, factor * dc, k2)

    def amp():
        return abs(np.fft.rfft(sim.fields()["u"])[8])

    sim.advance(40.0)  # the slower eigenvalue's part has died out
    a1 = amp()
    sim.advance(80.0)
    measured = np.log(amp() / a1) / 40.0
    assert np.sign(measured) == np.sign(factor - 1) == np.sign(sigma)
    assert abs(measured - sigma) < 0.01 * abs(sigma) + 1e-5, (measured, sigma)


def test_imex_matches_explicit_with_far_fewer_steps():
    src = copy.deepcopy(SCHNAKENBERG)
    src["parameters"].update(kc=0.5)
    src["domain"].update(L=60.0, nx=120, boundary="neumann")
    mid = solvers.define(src)
    ex = solvers.create(mid, backend="numpy", integrator="euler")
    im = solvers.create(mid, backend="numpy", integrator="imex", dt=10 * ex.dt)
    ex.advance(5.0)
    im.advance(5.0)
    assert im.steps * 8 <= ex.steps
    err = np.abs(im.fields()["u"] - ex.fields()["u"]).max()
    assert err < 0.05 * np.abs(ex.fields()["u"] - 1.0).max() + 1e-6


@pytest.mark.parametrize("boundary", ["periodic", "neumann", "dirichlet: 0",
                                      "left=dirichlet: 0; right=neumann",
                                      "left=neumann; right=dirichlet: 0"])
def test_imex_spectral_solves_invert_the_homogeneous_laplacian(boundary):
    src = {"model": {"name": "imex-op"}, "equations": {"u": "D*lap(u)"},
           "parameters": {"D": 1.0}, "initial": {"u": "sin(x) + 0.3*cos(3*y) + x*y/50"},
           "domain": {"kind": "rectangle", "nx": 12, "ny": 9, "Lx": 6.0, "Ly": 5.0,
                      "boundary": boundary}, "numerics": {"integrator": "imex", "dt": 0.1}}
    sim = solvers.create(solvers.define(src), backend="numpy", kernel="array")  # reference's
    s = sim.scheme
    u = sim.fields()["u"]
    x = s.solve(u, "u", 0.3, 0.0)
    np.testing.assert_allclose(x - 0.3 * s.hom_lap(x, "u"), u, atol=1e-12)


def test_dirichlet_time_dependent_values_on_a_vertex_grid():
    """u_t = u_xx with u = exp(−t) sin(x) + x: the exact solution on [0, π] with u(0) = 0... and
    time-dependent Dirichlet data u(π, t) = π: the pinned nodes follow the data."""
    src = {"model": {"name": "dir"}, "equations": {"u": "lap(u)"},
           "initial": {"u": "sin(x) + x"},
           "domain": {"kind": "interval", "nx": 41, "L": float(np.pi), "grid": "vertex",
                      "boundary": "left=dirichlet: 0; right=dirichlet: pi + 0*t"},
           "numerics": {"integrator": "rk4", "cfl": 0.5}}
    sim = solvers.create(solvers.define(src), backend="numpy")
    sim.advance(0.5)
    x = sim.mesh.x
    err = np.abs(sim.fields()["u"] - (np.exp(-0.5) * np.sin(x) + x)).max()
    assert err < 2e-3 and sim.fields()["u"][0] == 0.0


def test_dt_above_the_stable_step_is_refused_naming_the_bound():
    src = copy.deepcopy(SCHNAKENBERG)
    src["parameters"].update(kc=0.5)
    mid = solvers.define(src)
    sim = solvers.create(mid, backend="numpy")
    with pytest.raises(solvers.ParameterError, match=r"dt.*stable step .*allowed: dt <= "):
        solvers.create(mid, backend="numpy", dt=3 * sim.dt_max)


IMEX_EOC_DOMAINS = {
    "periodic": {"kind": "rectangle", "nx": 32, "ny": 32, "Lx": 2 * np.pi, "boundary": "periodic"},
    "neumann": {"kind": "rectangle", "nx": 24, "ny": 20, "Lx": 6.0, "boundary": "neumann: 0.2"},
    "vertex-dirichlet": {"kind": "rectangle", "nx": 24, "ny": 20, "Lx": 6.0, "grid": "vertex",
                         "boundary": "left=dirichlet: 1; right=neumann: 0.2"},
    "sphere": {"kind": "mesh", "surface": "sphere", "vertices": 642, "boundary": "natural"},
}


@pytest.mark.parametrize("domain", list(IMEX_EOC_DOMAINS))
def test_imex_is_second_order_and_imex1_first(domain):
    """Schnakenberg with stiff diffusion (Dv = 10: the explicit step is ~1e-4) to t = 1, against
    RK4 at the explicit step:
    ARS(2,2,2) converges at order 2, the semi-implicit Euler at order 1, ARS(3,4,3) and
    ARS(4,4,3) closer still (the FFT, DCT, sparse LU and mesh factorisation solves), at steps of
    0.05, 0.025 and 0.0125 (up to 400 explicit steps each)."""
    src = {"model": {"name": f"imex-eoc-{domain}"},
           "equations": {"u": "Du*lap(u) + a - u + u^2*v", "v": "Dv*lap(v) + b - u^2*v"},
           "parameters": {"a": 0.1, "b": 0.9, "Du": 1.0, "Dv": 10.0},
           "initial": {"u": "1 + 0.2*sin(x)*cos(y)", "v": "0.9 + 0.1*cos(x)"},
           "domain": IMEX_EOC_DOMAINS[domain]}
    mid = solvers.define(src)
    ref = solvers.create(mid, backend="numpy", integrator="rk4", cfl=0.2)
    ref.advance(1.0)
    errors = {}
    for integrator, order in (("imex", 2.0), ("imex1", 1.0), ("imex3", None), ("imex443", None)):
        errs = errors[integrator] = []
        for dt in (0.05, 0.025, 0.0125):
            sim = solvers.create(mid, backend="numpy", integrator=integrator, dt=dt)
            sim.advance(1.0)
            errs.append(max(np.abs(sim.fields()[k] - ref.fields()[k]).max() for k in sim.state))
        eoc = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
        if order is not None:
            assert np.all(np.abs(eoc - order) < 0.2), (integrator, errs, eoc)
        else:  # ARS(3,4,3), ARS(4,4,3): third order in theory, reduced towards 2 by the
            # stiffness here
            assert np.all(eoc > 1.8), (integrator, errs, eoc)
    # at every step the third-order schemes are at least 3x closer than the second-order one
    for third in ("imex3", "imex443"):
        assert np.all(np.array(errors[third]) < np.array(errors["imex"]) / 3), errors
