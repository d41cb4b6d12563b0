"""The gallery's model files (resources/models/, docs/EQUATIONS.md): each one defines, runs on
NumPy with finite values, carries its citation and what to look for; the pattern-forming ones
leave their homogeneous (or seeded) state by the measure their look_for names, at a reduced size
where the pattern still fits; on the device every file's fused GPU path equals the NumPy float64
reference."""
import tomllib
from pathlib import Path

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.app.gallery import MODELS

FILES = sorted(MODELS.glob("*.toml"))
SURFACES = ("sphere", "torus")


def _source(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _define(path: Path) -> str:
    return solvers.define(path)


def test_the_gallery_has_twelve_systems_five_on_surfaces():
    assert len(FILES) >= 12
    on = [f.stem for f in FILES if _source(f)["domain"].get("kind") == "mesh"]
    srcs = [_source(f)["domain"] for f in FILES]
    assert len(on) >= 5
    assert {s.get("surface") for s in srcs} >= set(SURFACES)
    assert any(str(s.get("mesh", "")).endswith("snake.ply") for s in srcs)
    for f in FILES:
        m = _source(f)["model"]
        assert m["citation"] and m["look_for"] and m["description"], f.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_file_runs_on_numpy(path):
    sim = solvers.create(_define(path), backend="numpy")
    sim.step(5)
    assert sim.steps == 5 and sim.t > 0
    for name, v in sim.fields().items():
        assert np.all(np.isfinite(v)), (path.stem, name)


def _std(sim, f):
    return float(np.std(sim.fields()[f]))


# file: (overrides for a smaller run, time, field, measure of the pattern, how much it must grow)
PATTERNS = {
    "schnakenberg": ({"nx": 50, "ny": 50, "Lx": 50.0, "Ly": 50.0}, 30.0, "u", _std, 20),
    "brusselator": ({"nx": 48, "ny": 48, "Lx": 24.0, "Ly": 24.0}, 15.0, "u", _std, 10),
    "gierer-meinhardt-sphere": ({"vertices": 2562}, 30.0, "u", _std, 20),
    "lengyel-epstein-torus": ({}, 15.0, "u", _std, 5),
    "keller-segel": ({"vertices": 2000}, 20.0, "u", _std, 5),
    "cross-diffusion": ({"nx": 32, "ny": 32, "Lx": 7.5, "Ly": 7.5}, 8.0, "u", _std, 5),
    "chemotaxis-snake": ({}, 20.0, "n", _std, 3),
    "allen-cahn-torus": ({"vertices": 2000}, 10.0, "u",
                         lambda s, f: float(np.abs(s.fields()[f]).mean()), 5),
    "fisher-kpp-snake": ({}, 6.0, "u", lambda s, f: float((s.fields()[f] > 0.5).mean()), 3),
    "gray-scott-pearson": ({"nx": 64, "ny": 64, "Lx": 0.625, "Ly": 0.625}, 1500.0, "v",
                           lambda s, f: float((s.fields()[f] > 0.1).mean()), 3),
}


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(PATTERNS))
def test_the_pattern_forms(stem):
    """The measure of the pattern (spread of the field, area invaded, phases separated) grows
    by the factor from the initial noise or seed: these systems do not stay homogeneous."""
    over, until, field, measure, factor = PATTERNS[stem]
    sim = solvers.create(_define(MODELS / f"{stem}.toml"), backend="numpy", **over)
    before = measure(sim, field)
    sim.advance(until)
    after = measure(sim, field)
    assert np.all(np.isfinite(sim.fields()[field]))
    assert after > factor * before, (stem, before, after)


@pytest.mark.slow
@pytest.mark.parametrize("stem", ["barkley", "fitzhugh-nagumo"])
def test_the_spiral_keeps_turning(stem):
    """The broken wave of the excitable media curls into a spiral that keeps the medium excited
    (a plane wave would leave the box, and a wave that dies leaves it at rest): after many wave
    transits, excited and resting medium still coexist and the state still changes."""
    until = {"barkley": 20.0, "fitzhugh-nagumo": 250.0}[stem]
    over = {"barkley": {"nx": 100, "ny": 100, "Lx": 40.0, "Ly": 40.0}}.get(stem, {})
    sim = solvers.create(_define(MODELS / f"{stem}.toml"), backend="numpy", **over)
    sim.advance(until)
    u = sim.fields()["u"].copy()
    hi = 0.5 if stem == "barkley" else 0.0
    assert 0.1 < float((u > hi).mean()) < 0.7, stem
    sim.advance(until + until / 10)
    assert float(np.abs(sim.fields()["u"] - u).mean()) > 0.05


@pytest.mark.gpu
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_file_gpu_equals_numpy(path, gpu_backend):
    mid = _define(path)
    ref = solvers.create(mid, backend="numpy", kernel="array")  # the reference
    gpu = solvers.create(mid, backend=gpu_backend, dtype="float64")
    for s in ref.state:  # the same (seeded) start on both
        gpu.set_field(s, ref.fields()[s])
    ref.step(20)
    gpu.step(20)
    assert gpu.t == pytest.approx(ref.t, rel=1e-13)
    for s in ref.state:
        a, b = gpu.fields()[s], ref.fields()[s]
        assert np.abs(a - b).max() <= 1e-10 * (np.abs(b).max() + 1e-300), (path.stem, s)
