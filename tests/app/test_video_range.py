"""Recordings show the dynamics: the default colour range of a video follows the data (it takes
in every frame at once and closes in on data that occupy less of it), a line view never clips
its curve whatever the range, and the dam-break video does not go dark once the column has
collapsed (with the first frame's range, kept for the whole video, it did)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pdestudio.app.export import FollowRange, describe_range

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json
import numpy as np
from pdestudio import solvers
from pdestudio.app import export
out = {}
for mode in ("follow", "first", (0.2, 0.3)):
    sim = solvers.create("ks-1d", backend="numpy", nx=128)
    r = export.Renderer(sim, color_range=mode, size=(320, 240))
    rows = []
    for _ in range(10):
        r.render(sim)
        rect = r.view.plot.camera.rect
        u = sim.fields()["u"]
        rows.append([float(u.min()), float(u.max()), rect.bottom, rect.top])
        sim.advance(sim.t + 4.0)
    r.close()
    out["ks " + str(mode)] = rows
for mode in ("follow", "first"):
    sim = solvers.create("shallow-water", backend="numpy", nx=48)
    r = export.Renderer(sim, color_range=mode, size=(320, 240))
    for k in range(21):
        img = r.render(sim)
        if k < 20:
            sim.advance(0.05 * (k + 1))
    r.close()
    fg = img[np.any(img != img[2, 2], axis=-1)].astype(float)   # not the background
    surface = fg[fg[:, 2] >= fg[:, 0]]                           # not the brown bottom
    eta = sim.fields()["eta"]
    lo, hi = r.scale.limits()
    out["db " + mode] = {"green": float(np.median(surface[:, 1])), "pixels": len(surface),
                         "occupancy": float(eta.max() - eta.min()) / (hi - lo)}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def rendered():
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.splitlines()[-1])


@pytest.mark.parametrize("mode", ["follow", "first", "(0.2, 0.3)"])
def test_a_line_view_never_clips_its_curve(rendered, mode):
    rows = rendered["ks " + mode]
    assert max(r[1] for r in rows) > 1.5 * rows[0][1]  # the chaos grew past the first range
    for umin, umax, y0, y1 in rows:
        assert y0 <= umin and umax <= y1, (umin, umax, y0, y1)


def test_the_dam_break_video_stays_bright_after_the_collapse(rendered):
    follow, first = rendered["db follow"], rendered["db first"]
    assert follow["pixels"] > 2000 and first["pixels"] > 2000
    # viridis: green is low at its dark end; the collapsed water fills most of the range
    assert follow["green"] > 60 and follow["occupancy"] > 0.4, follow
    # the old default went dark: the collapsed water used a fifth of the first frame's range
    # (green 49 with the software renderer, 58 with OpenGL, against 107)
    assert first["occupancy"] < 0.25 and first["green"] < 0.65 * follow["green"], (first, follow)


def test_follow_range_takes_in_every_frame_and_closes_in():
    f = FollowRange(rate=0.15)
    assert f.update(1.0, 3.0) == (1.0, 3.0)
    assert f.update(0.5, 3.5) == (0.5, 3.5)               # grows at once: nothing saturates
    for _ in range(40):
        lo, hi = f.update(1.0, 1.2)
        assert lo <= 1.0 and hi >= 1.2                       # always holds the data
    assert hi - lo < 0.21                                    # and closed in on them
    assert "follows the data" in describe_range(None)
    assert describe_range((0.0, 2.0)) == "colour range 0 .. 2"
