"""chemotaxis and gray-scott on surfaces: pattern formation, the stability guard, renumbering,
mesh files (docs/MODELS.md §2, §6)."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import MeshError, ParameterError, SimulationDiverged
from pdestudio.solvers.surface_rd.reference import turing_threshold

ROOT = Path(__file__).resolve().parents[3]
SNAKE = ROOT / "resources" / "meshes" / "snake.ply"


def growth_rate(alpha, D=0.25, r=1.522, s=1.0, N=1.0):
    """Largest growth rate of the linearisation about the uniform state (continuous λ)."""
    lam = np.linspace(1e-4, 10 * s, 40_000)
    a, d = -D * lam - s * r * N, -lam - s
    tr, det = a + d, a * d - alpha * N * lam * s / (1 + N) ** 2
    return ((tr + np.sqrt(tr * tr - 4 * det + 0j)).real / 2).max()


def test_turing_threshold_of_the_paper_parameters():
    a_c = turing_threshold(0.25, 1.522, 1.0)
    assert 12.02 < a_c < 12.03  # the paper's α = 12.02 sits just below it
    assert growth_rate(12.02) < 0 < growth_rate(12.2)


def _pattern_run(scheme="positive", seed=0, times=(200.0, 500.0, 800.0, 1000.0, 1200.0)):
    """s = 1/16 stretches the pattern (wavelength ∝ 1/√s) so 600 vertices resolve it."""
    kw = dict(backend="numpy", vertices=600, s=1 / 16, alpha=13.0, seed=seed, scheme=scheme)
    dt = 0.9 * solvers.create("chemotaxis", **kw).dt_max
    sim = solvers.create("chemotaxis", dt=dt, **kw)
    var = {0.0: sim.fields()["cells"].var()}
    for t in times:
        sim.advance(t)
        var[t] = sim.fields()["cells"].var()
    return sim, var


@pytest.mark.parametrize("scheme", ["positive", "paper"])
def test_pattern_forms_from_the_perturbed_uniform_state(scheme):
    sim, var = _pattern_run(scheme)
    f = sim.fields()
    assert var[800.0] > 1e3 * var[0.0]  # orders of magnitude
    assert abs(var[1200.0] / var[1000.0] - 1) < 0.15  # and saturates
    assert np.isfinite(f["cells"]).all() and f["cells"].max() > 2.3  # aggregated spots
    assert f["cells"].min() >= 0
    # the linear phase grows at the rate the dispersion relation predicts (variance ~ e^{2σt})
    rate = np.log(var[500.0] / var[200.0]) / (2 * 300.0)
    sigma = growth_rate(13.0, s=1 / 16)
    assert 0.8 * sigma < rate < 1.2 * sigma, (rate, sigma)


def test_pattern_runs_are_seeded_and_reproducible():
    times = (150.0,)
    a, _ = _pattern_run(times=times)
    b, _ = _pattern_run(times=times)
    np.testing.assert_array_equal(a.fields()["cells"], b.fields()["cells"])
    other = solvers.create("chemotaxis", backend="numpy", vertices=600, seed=1)
    assert not np.array_equal(other.fields()["cells"],
                              solvers.create("chemotaxis", backend="numpy",
                                             vertices=600).fields()["cells"])


@pytest.mark.parametrize("scheme", ["positive", "paper"])
def test_below_threshold_perturbations_decay(scheme):
    sim = solvers.create("chemotaxis", backend="numpy", vertices=600, alpha=10.0, s=1 / 16,
                         scheme=scheme)
    v0 = sim.fields()["cells"].var()
    sim.advance(300.0)
    assert sim.fields()["cells"].var() < 0.1 * v0


def test_stability_guard_refuses_a_step_above_the_bound():
    sim = solvers.create("chemotaxis", backend="numpy", vertices=400)
    lam = sim.ops.lambda_max
    bound = sim.dt_max
    # below the fine-mesh limit 2/max(λ + s, Dλ + srN), and close to it
    assert 0.5 < bound / (2 / max(lam + 1.0, 0.25 * lam + 1.522)) <= 1.0
    assert sim.dt == pytest.approx(bound / 2)
    c_max = bound / sim.dx**2
    with pytest.raises(ParameterError, match=r"'C' = .*stability bound.*allowed: C <= "):
        solvers.create("chemotaxis", backend="numpy", vertices=400, C=1.01 * c_max)
    with pytest.raises(ParameterError, match=r"'dt' = .*stability bound.*allowed: dt <= "):
        solvers.create("chemotaxis", backend="numpy", vertices=400, dt=1.01 * bound)
    with pytest.raises(ParameterError, match="'C'.*'dt'.*at most one"):
        solvers.create("chemotaxis", backend="numpy", vertices=400, C=0.01, dt=1e-4)
    ok = solvers.create("chemotaxis", backend="numpy", vertices=400, C=0.99 * c_max)
    assert ok.dt == pytest.approx(0.99 * bound)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("scheme", ["positive", "paper"])
def test_the_bound_is_where_explicit_euler_turns_unstable(scheme):
    """Bypassing the guard: 0.95× the bound stays within 5% of the uniform state over 400 steps;
    1.3× excites the checkerboard mode of c: the paper's scheme blows up, the positive one
    shortens its steps as the gradients of c grow (its positivity bound) and stays finite and
    ≥ 0, but leaves the uniform state (the guard refuses such a δt either way)."""
    def run(factor):
        sim = solvers.create("chemotaxis", backend="numpy", vertices=400, alpha=5.0,
                             scheme=scheme)
        sim.dt = factor * sim.dt_max
        sim.step(400)
        return sim

    if scheme == "paper":
        with pytest.raises(SimulationDiverged):
            run(1.3)
    else:
        f = run(1.3).fields()["cells"]
        assert np.isfinite(f).all() and f.min() >= 0 and abs(f - 1).max() > 0.3
    f = run(0.95).fields()["cells"]
    assert abs(f - 1).max() < 0.05


@pytest.mark.parametrize("model", ["chemotaxis", "gray-scott"])
def test_renumbering_changes_nothing_but_the_memory_order(model):
    out = {}
    for how in ("none", "rcm", "morton"):
        sim = solvers.create(model, backend="numpy", scenario="tube", vertices=800, renumber=how)
        sim.step(30)
        out[how] = sim.fields()
    for how in ("rcm", "morton"):
        for k, v in out["none"].items():
            np.testing.assert_allclose(out[how][k], v, rtol=1e-12, atol=1e-13)


def test_file_scenario_and_mesh_errors(tmp_path):
    sim = solvers.create("chemotaxis", backend="numpy", scenario="file", mesh=str(SNAKE))
    assert sim.mesh.kind == "triangles" and sim.fields()["cells"].shape == (sim.mesh.n_vertices,)
    sim.step(5)
    with pytest.raises(ParameterError, match="scenario 'file' needs parameter 'mesh'"):
        solvers.create("chemotaxis", backend="numpy", scenario="file")
    with pytest.raises(ParameterError, match="'mesh' is used only by scenario 'file'"):
        solvers.create("chemotaxis", backend="numpy", mesh=str(SNAKE))
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n")
    with pytest.raises(MeshError, match="out of range"):
        solvers.create("chemotaxis", backend="numpy", scenario="file", mesh=str(bad))


def test_cli_runs_on_a_mesh_file():
    r = subprocess.run([sys.executable, "-m", "pdestudio", "run", "chemotaxis", "--mesh",
                        str(SNAKE), "--steps", "10", "--backend", "numpy"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "chemotaxis/file" in r.stdout + r.stderr


def test_gray_scott_pure_diffusion_conserves_mass():
    """F = k = 0 and v = 0: u_t = Du Δu, and Σ A_i u_i is conserved to round-off (the
    area-weighted Laplacian sums to zero, also with the zero-flux boundary)."""
    sim = solvers.create("gray-scott", backend="numpy", scenario="tube", vertices=1000, F=0.0,
                         k=0.0)
    rng = np.random.default_rng(2)
    sim.set_field("v", np.zeros(sim.mesh.n_vertices))
    sim.set_field("u", rng.uniform(0, 1, sim.mesh.n_vertices))
    a = sim.mesh.mixed_areas
    m0 = (a * sim.fields()["u"]).sum()
    v0 = sim.fields()["u"].var()
    sim.step(200)
    u = sim.fields()["u"]
    assert abs((a * u).sum() - m0) < 1e-12 * m0
    assert u.var() < 0.05 * v0  # and it diffuses


def test_gray_scott_spots_replicate():
    sim = solvers.create("gray-scott", backend="numpy", vertices=3000)
    covered0 = (sim.fields()["v"] > 0.1).mean()
    sim.advance(400.0)
    v = sim.fields()["v"]
    assert np.isfinite(v).all() and (v > 0.1).mean() > 3 * covered0


def test_batched_run_lands_like_single_steps():
    """The fused scheme's batched clock (FusedEuler.run), here driving reference steps on the
    host: the same steps, times and fields, bit for bit, as the base class's step-by-step loop,
    also where a chunk crosses the landing on t_end."""
    from pdestudio.solvers.surface_rd.fused import FusedEuler
    from pdestudio.solvers.surface_rd.reference import ChemotaxisEuler

    class HostBatched(FusedEuler):
        def __init__(self, sim):  # no device: each step is a reference step
            self.sim, self.ref, self.runs = sim, ChemotaxisEuler(sim), 0

        def advance(self, dt):
            self.ref.step(0.0, dt)

        def run(self, count, t, t_end):
            self.runs += 1
            return super().run(count, t, t_end)

    kw = dict(backend="numpy", vertices=400, scheme="paper")  # FusedEuler's clock: the paper's
    batched, single = solvers.create("chemotaxis", **kw), solvers.create("chemotaxis", **kw)
    batched.scheme = HostBatched(batched)
    dt = single.dt
    for sim in (batched, single):
        sim.step(5)
        sim.advance(37.3 * dt)
        sim.advance(37.3 * dt + 100.5 * dt)
        sim.advance(200 * dt, max_steps=7)
    assert batched.scheme.runs > 0
    assert (batched.t, batched.steps) == (single.t, single.steps)
    assert batched.steps == 5 + 33 + 101 + 7  # each advance ends on a shortened step
    for k, v in single.fields().items():
        np.testing.assert_array_equal(batched.fields()[k], v)
