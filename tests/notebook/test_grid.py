"""pdestudio.show(ensemble) and show(sweep folder) (issue 30): a grid of thumbnails that update as
the members advance, differ between members, and open a member's live view on a click."""
import json
import time

import numpy as np
import pytest

import pdestudio
from pdestudio import solvers


def test_an_ensemble_grid_updates_and_opens_a_member(views):
    ens = solvers.create_ensemble("gray-scott", [{"F": 0.03}, {"F": 0.045}, {"F": 0.06}],
                                  backend="numpy", vertices=1500)
    g = pdestudio.show(ens, every_s=0.2)
    views.append(g)
    assert "pdestudio-grid" in g._dom_classes
    assert all("pdestudio-thumb" in t._dom_classes for t in g.thumbs)
    first = [t.png for t in g.thumbs]
    assert all(p.startswith(b"\x89PNG") for p in first)
    g.run()
    deadline = time.perf_counter() + 20
    while time.perf_counter() < deadline and (ens.t.min() < 200 or g.refreshes < 3):
        time.sleep(0.1)
    g.pause()
    assert ens.t.min() >= 200
    now = [t.png for t in g.thumbs]
    assert all(a != b for a, b in zip(first, now))  # they follow the members
    assert len(set(now)) == 3  # and differ between members (F differs)
    assert [t.label for t in g.thumbs] == ["#0 F=0.03", "#1 F=0.045", "#2 F=0.06"]
    t_before = ens.t.copy()
    g.thumbs[1].click()  # what a click in the browser sends
    live = g.live
    assert live in g.below.children
    assert live.sim.params["F"] == pytest.approx(0.045)
    assert live.sim.t == pytest.approx(t_before[1])
    member = ens.member(1).fields()["v"]  # a cell's call on the ensemble: in the grid's thread
    assert np.array_equal(live.sim.fields()["v"], member)
    assert np.array_equal(ens.t, t_before)  # the ensemble paused


def test_a_sweep_folder_grid_opens_a_member_from_its_checkpoint(tmp_path, views):
    from PIL import Image
    out = tmp_path / "sweep"
    rows = []
    for m, nx in enumerate((32, 48)):
        sim = solvers.create("heat-1d", backend="numpy", nx=nx)
        sim.step(10 * (m + 1))
        d = out / "members" / f"{m:04d}"
        d.mkdir(parents=True)
        sim.save(d / "state.npz", include_fields=True)
        Image.new("RGB", (8, 8), (40 * m, 0, 0)).save(d / "thumb.png")
        rows.append({"member": m, "nx": nx, "checkpoint": f"members/{m:04d}/state.npz",
                     "thumbnail": f"members/{m:04d}/thumb.png", "diverged": False})
        (d / "row.json").write_text(json.dumps(rows[-1]))
    (out / "sweep.json").write_text(json.dumps({"model": "heat-1d", "scenario": None,
                                                "vary": [["nx", [32, 48]]]}))
    g = pdestudio.show(str(out))
    views.append(g)
    assert len(g.thumbs) == 2 and g.thumbs[0].png != g.thumbs[1].png
    assert g.thumbs[1].label == "#1 nx=48"
    g.thumbs[1].click()
    assert g.live.sim.steps == 20 and g.live.sim.params["nx"] == 48


def test_show_refuses_what_it_cannot_show():
    with pytest.raises(solvers.ParameterError, match="allowed: a Simulation"):
        pdestudio.show(42)
    with pytest.raises(solvers.ParameterError, match="sweep.json"):
        pdestudio.show("/nonexistent/folder")
