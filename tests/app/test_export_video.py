"""Recordings from the command line: streamed to the encoder (the memory of a long GIF export does
not grow with its length), frames every K steps or every Δt of simulated time, one colour scale
for the whole video unless asked otherwise."""
import json
import subprocess
import sys

import numpy as np
import pytest

from .vtkread import no_temporary_files

PEAK = """
import resource, subprocess, sys
r = subprocess.run([sys.executable, "-m", "pdestudio", *sys.argv[1:]], capture_output=True,
                   text=True)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stdout.write(r.stdout); sys.stderr.write(r.stderr)
"""


def peak_run(*args):
    """Run the CLI in a fresh parent whose only child it is: (exit code, peak RSS in MB, JSON)."""
    r = subprocess.run([sys.executable, "-c", PEAK, *map(str, args)], capture_output=True,
                       text=True, timeout=600)
    first, _, rest = r.stdout.partition("\n")
    rc, kb = first.split()
    return int(rc), int(kb) / 1024, rest, r.stderr


def gif_frames(path) -> int:
    from PIL import Image
    with Image.open(path) as im:
        return im.n_frames


def gif_frame(path, k) -> np.ndarray:
    from PIL import Image
    with Image.open(path) as im:
        im.seek(k)
        return np.asarray(im.convert("RGB"))


@pytest.mark.slow
def test_a_long_gif_export_streams_in_bounded_memory(tmp_path):
    # ks-1d to t = 15: 11 frames, then 151 frames of 960x720 (2 MB each as RGB; an encoder that
    # kept them, as imageio's GIF writer does, would grow by > 300 MB)
    runs = {}
    for name, dt in (("short", 1.5), ("long", 0.1)):
        rc, peak, out, err = peak_run("run", "ks-1d", "--backend", "numpy", "--until", "15",
                                      "--frame-dt", dt, "--export-video", tmp_path / f"{name}.gif",
                                      "--json", "-q")
        assert rc == 0, err
        frames = json.loads(out)["outputs"][0]["frames"]
        assert gif_frames(tmp_path / f"{name}.gif") == frames
        runs[name] = (frames, peak)
    print("frames and peak RSS (MB):", runs)
    assert runs["short"][0] == 11 and runs["long"][0] == 151
    assert runs["long"][1] < 600
    assert runs["long"][1] - runs["short"][1] < 60  # memory independent of the length
    assert no_temporary_files(tmp_path) == []


def cli(*args):
    r = subprocess.run([sys.executable, "-m", "pdestudio", *map(str, args)], capture_output=True,
                       text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def test_frames_every_dt_of_simulated_time_and_every_k_steps(tmp_path):
    rc, out, err = cli("run", "heat-1d", "--set", "nx=64", "--backend", "numpy", "--until",
                       "0.01", "--frame-dt", "0.002", "--export-video", tmp_path / "t.gif",
                       "--json", "-q")
    assert rc == 0, err
    s = json.loads(out)
    assert s["t"] == 0.01 and s["outputs"][0]["frames"] == 6  # t = 0, 0.002, ..., 0.01
    assert gif_frames(tmp_path / "t.gif") == 6
    rc, out, err = cli("run", "heat-1d", "--set", "nx=64", "--backend", "numpy", "--steps", "25",
                       "--frame-every", "10", "--export-video", tmp_path / "k.mp4", "--json",
                       "-q")
    assert rc == 0, err
    assert json.loads(out)["outputs"][0]["frames"] == 4  # steps 0, 10, 20 and the last, 25
    import imageio.v3 as iio
    assert len(iio.imread(tmp_path / "k.mp4", index=None)) == 4


RANGES = """
import json, sys
from pdestudio import solvers
from pdestudio.app import export
out = {}
for mode in ("first", "auto", (0.2, 0.3)):
    sim = solvers.create("shallow-water", backend="numpy", nx=32)
    r = export.Renderer(sim, color_range=mode)
    limits = []
    for t in (0.0, 0.5, 1.0):
        sim.advance(t) if t > 0 else None
        r.render(sim)
        h = sim.fields()[r.field]
        limits.append([list(map(float, r.limits)), [float(h.min()), float(h.max())]])
    r.close()
    out[str(mode)] = limits
print(json.dumps(out))
"""


def test_colour_range_of_a_recording_is_the_first_frames_unless_asked(tmp_path):
    r = subprocess.run([sys.executable, "-c", RANGES], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.splitlines()[-1])
    first = got["first"]
    assert first[0][0] == pytest.approx(first[0][1], rel=0.02)  # the data's range at t = 0
    assert first[1][0] == first[2][0] == first[0][0]             # kept for every frame
    for (used, data) in got["auto"]:                              # each frame its own
        assert used == pytest.approx(data, rel=0.02)
    assert got["auto"][2][1] != pytest.approx(got["auto"][0][1], rel=0.02)  # the data moved
    assert all(used == [0.2, 0.3] for used, _ in got["(0.2, 0.3)"])


def test_the_cli_records_with_a_range_that_follows_the_data_by_default(tmp_path):
    # (the modes themselves: the test above; --range's parsing: test_cli_run.py)
    rc, out, err = cli("run", "heat-1d", "--set", "nx=64", "--backend", "numpy", "--steps", "1",
                       "--export-video", tmp_path / "v.gif", "-v")
    assert rc == 0 and "a colour range that follows the data" in err
