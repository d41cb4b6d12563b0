"""integrator=imex of the built-in surface models (solvers/surface_rd/imex.py): it converges to the
explicit run (an explicit run with half the explicit step is the reference, compared in the
area-weighted L2 norm once the pattern shows), with far fewer steps where the mesh resolves the
pattern finely; its step is refused above the IMEX bound; on the GPU (array path) it equals NumPy."""
import numpy as np
import pytest

from pdestudio import solvers


def _rel_l2(sim, a, b):
    A = np.asarray(sim.mesh.mixed_areas)
    return max(float(np.sqrt((A * (a.fields()[k] - b.fields()[k]) ** 2).sum()
                             / (A * b.fields()[k] ** 2).sum())) for k in b.state)


@pytest.mark.slow
def test_chemotaxis_imex_matches_explicit_with_twenty_times_fewer_steps():
    # s = 0.05: the pattern's wavelength 3.8/√s ≈ 17 is ≈ 30 edges of the 2000-vertex rectangle,
    # so the implicit diffusion can take 21 explicit steps at once and still resolve it
    kw = dict(backend="numpy", vertices=2000, s=0.05)
    explicit = solvers.create("chemotaxis", **kw)
    half = solvers.create("chemotaxis", dt=explicit.dt / 2, **kw)
    imex = solvers.create("chemotaxis", integrator="imex", dt=21 * explicit.dt, **kw)
    assert type(imex.scheme).__name__ == "ChemotaxisImex"
    for sim in (half, imex):
        sim.advance(600.0)
    cells = half.fields()["cells"]
    assert cells.max() - cells.min() > 0.05  # the pattern has grown from the 1 % noise
    assert _rel_l2(half, imex, half) < 0.01
    assert half.steps / 2 >= 20 * imex.steps
    assert imex.fields()["cells"].min() >= 0


def test_gray_scott_imex_converges_to_first_order():
    kw = dict(backend="numpy", vertices=3000)
    ref = solvers.create("gray-scott", **kw)
    ref = solvers.create("gray-scott", dt=ref.dt / 2, **kw)
    default = solvers.create("gray-scott", integrator="imex", **kw)
    assert default.dt == pytest.approx(0.5 * 2 / (3 + 0.037 + 0.06))  # half the IMEX bound
    errors = []
    for dt in (0.25, 0.125):
        sim = solvers.create("gray-scott", integrator="imex", dt=dt, **kw)
        sim.advance(50.0)
        errors.append(sim)
    ref.advance(50.0)
    e = [_rel_l2(ref, s, ref) for s in errors]
    assert e[0] < 0.01 and e[0] / e[1] > 1.7, e  # first order (the reference's own error aside)


@pytest.mark.parametrize("model, extra", [("chemotaxis", {"scheme": "paper"}),
                                          ("gray-scott", {"Du": 1.0, "Dv": 0.5})])
def test_imex_step_is_refused_above_its_bound(model, extra):
    sim = solvers.create(model, backend="numpy", vertices=500, integrator="imex", **extra)
    explicit = solvers.create(model, backend="numpy", vertices=500, **extra)
    assert sim.dt_max > 3 * explicit.dt_max  # the diffusion no longer limits the step
    with pytest.raises(solvers.ParameterError, match="above the IMEX stability bound.*allowed"):
        solvers.create(model, backend="numpy", vertices=500, integrator="imex",
                       dt=1.01 * sim.dt_max, **extra)
    sim.step(20)
    assert all(np.isfinite(v).all() for v in sim.fields().values())


def test_chemotaxis_imex_linear_bound_is_sharp():
    """Just above the IMEX bound a decaying mode of the linearisation grows, just below none."""
    from pdestudio.solvers.surface_rd.imex import linear_imex_bound
    p = {"D": 0.25, "alpha": 13.0, "s": 1.0, "r": 1.522, "N": 1.0}
    lam_max = 400.0
    dt = linear_imex_bound(p, lam_max)
    lam = np.linspace(0, lam_max, 4001)
    from pdestudio.solvers.surface_rd.reference import chemotaxis_jacobian
    J = chemotaxis_jacobian(p, lam)
    decays = np.linalg.eigvals(J).real.max(axis=1) < 0

    def radius(h):
        Je = J.copy()
        Je[:, 0, 0] += p["D"] * lam
        Je[:, 1, 1] += lam
        G = np.eye(2) + h * Je
        G[:, 0] /= (1 + h * p["D"] * lam)[:, None]
        G[:, 1] /= (1 + h * lam)[:, None]
        return np.abs(np.linalg.eigvals(G)).max(axis=1)[decays].max()

    assert 0.5 < dt < 10
    assert radius(0.99 * dt) <= 1 + 1e-9 < radius(1.05 * dt)


@pytest.mark.gpu
@pytest.mark.parametrize("model, extra", [("chemotaxis", {}), ("chemotaxis", {"scheme": "paper"}),
                                          ("gray-scott", {})])
def test_imex_on_the_gpu_matches_numpy(model, extra):
    kw = dict(vertices=3000, integrator="imex", **extra)
    ref = solvers.create(model, backend="numpy", **kw)
    gpu = solvers.create(model, backend="cupy", **kw)
    rng = np.random.default_rng(4)
    # scheme=paper is not positivity-preserving: a 10 % perturbation drives the cells negative
    # in the first step (the bounds check stops the run), 1 % keeps them positive for 50 steps
    amp = 0.01 if extra.get("scheme") == "paper" else 0.1
    for k in ref.state:
        v = ref.fields()[k] * (1 + amp * rng.uniform(-1, 1, ref.field_shape(k)))
        ref.set_field(k, v)
        gpu.set_field(k, v)
    ref.step(50)
    gpu.step(50)
    assert gpu.t == pytest.approx(ref.t, rel=1e-12)
    assert _rel_l2(ref, gpu, ref) < 1e-8  # CG to rtol 1e-10 on both


def _perturbed(model, n, kw, backends):
    """Simulations of `model` on the backends (dicts of create's extra arguments), all holding
    the same state: the scenario's plus 10 % noise (the pattern's onset, far from uniform)."""
    sims = [solvers.create(model, vertices=n, **kw, **b) for b in backends]
    rng = np.random.default_rng(7)
    for k in sims[0].state:
        v = sims[0].fields()[k] * (1 + 0.1 * rng.uniform(-1, 1, sims[0].field_shape(k)))
        for s in sims:
            s.set_field(k, v)
    return sims


@pytest.mark.gpu
@pytest.mark.parametrize("axis", ["x", "y"])
@pytest.mark.parametrize("dtype, tol", [("float64", 1e-10), ("float32", 2e-4)])
def test_fused_chemotaxis_imex_equals_numpy(axis, dtype, tol, monkeypatch):
    """The whole step on the device (lattice_imex.py: the rates, λ's maximum and the adaptive
    step on the device clock, cuFFT and lat_rec_clk): 150 steps (two CUDA graphs of 64, then
    single launches), and a run landing on an end time, equal to the float64 NumPy reference
    (scipy's DCT-I solve) with the transform along either axis."""
    monkeypatch.setenv("PDESTUDIO_LATTICE_AXIS", axis)
    kw = dict(integrator="imex")
    ref, gpu = _perturbed("chemotaxis", 3000, kw, [{"backend": "numpy"},
                                                   {"backend": "cupy", "dtype": dtype}])
    assert gpu.scheme.lattice_why is None and gpu.scheme.tr.axis == axis
    ref.step(150)
    gpu.step(150)
    assert gpu.steps == ref.steps == 150
    assert gpu.t == pytest.approx(ref.t, rel=10 * tol)
    assert _rel_l2(ref, gpu, ref) < tol
    t_end = ref.t + 7.3  # a dozen more steps, the last one shortened to land
    ref.advance(t_end)
    gpu.advance(t_end)
    assert gpu.t == ref.t == t_end and gpu.steps == ref.steps > 150
    assert _rel_l2(ref, gpu, ref) < tol
    assert gpu.fields()["cells"].min() >= 0


@pytest.mark.gpu
def test_fused_chemotaxis_imex_graphs_equal_single_steps():
    """Batched runs (CUDA graphs of 64 steps, the clock on the device) give bit for bit the
    state and clock of the same kernels launched one step at a time from the host."""
    batched, single = _perturbed("chemotaxis", 3000, dict(integrator="imex"),
                                 [{"backend": "cupy"}, {"backend": "cupy"}])
    single.scheme.run = None  # (the simulation then calls scheme.step once a step)
    for sim in (batched, single):
        sim.advance(60.0)
    assert batched.steps == single.steps > 128
    assert batched.t == single.t == 60.0
    for k in batched.state:
        assert np.array_equal(batched.fields()[k], single.fields()[k]), k


@pytest.mark.gpu
def test_chemotaxis_imex_elsewhere_runs_the_array_path():
    """Off a lattice (the tube) the GPU runs ChemotaxisImex's array path (CG), equal to NumPy;
    scheme=paper too (test_imex_on_the_gpu_matches_numpy steps it)."""
    ref, gpu = _perturbed("chemotaxis", 3000, dict(integrator="imex", scenario="tube"),
                          [{"backend": "numpy"}, {"backend": "cupy"}])
    assert gpu.scheme.lattice_why == "the mesh is not a lattice"
    ref.step(20)
    gpu.step(20)
    assert _rel_l2(ref, gpu, ref) < 1e-8
    paper = solvers.create("chemotaxis", backend="cupy", vertices=3000, integrator="imex",
                           scheme="paper")
    assert paper.scheme.lattice_why == "scheme=paper"
