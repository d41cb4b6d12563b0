"""`pdestudio run` for scripts: one JSON object on stdout, every output checked before the first
step (exit 2, one line), and after a divergence the last finite state still written (exit 1)."""
import json
import subprocess
import sys
import time

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.app.cli import main

from .vtkread import no_temporary_files, read


def cli(*args, timeout=120):
    r = subprocess.run([sys.executable, "-m", "pdestudio", *map(str, args)], capture_output=True,
                       text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def test_json_summary_is_one_object_on_stdout(tmp_path):
    rc, out, err = cli("run", "heat-1d", "--set", "nx=256", "--backend", "numpy", "--until",
                       "0.001", "--save", tmp_path / "s.npz", "--json")
    assert rc == 0, err
    assert out.count("\n") == 1  # one line: one object
    s = json.loads(out)
    assert (s["model"], s["scenario"], s["backend"], s["kernel"], s["dtype"]) == \
        ("heat-1d", "insulated-rod", "numpy", "numpy", "float64")
    sim = solvers.load(tmp_path / "s.npz", backend="numpy")
    assert s["t"] == sim.t == 0.001 and s["steps"] == s["total_steps"] == sim.steps > 0
    assert s["cells"] == 256 and s["wall_s"] >= s["solver_s"] > 0
    assert s["steps_per_s"] == pytest.approx(s["steps"] / s["solver_s"])
    assert s["cell_updates_per_s"] == pytest.approx(s["steps_per_s"] * 256)
    assert s["outputs"] == [{"kind": "checkpoint", "path": str(tmp_path / "s.npz"),
                             "format": ".npz"}]
    assert s["diverged"] is False and s["reason"] is None and s["exit_code"] == 0
    assert "done:" in err  # the human summary is on stderr


SLOW_RUN = ("run", "heat-1d", "--backend", "numpy", "--steps", "1000000000", "-q")


@pytest.mark.parametrize("extra,needle", [
    (("--export-data", "{d}/x.xdmf"), "has type '.xdmf'; allowed: .npz, .vti, .vtu, .pvd"),
    (("--export-image", "{d}/x.gif"), "has type '.gif'; allowed: .png, .jpg, .jpeg"),
    (("--export-video", "{d}/x.avi"), "has type '.avi'; allowed: .mp4, .gif"),
    (("--export-image", "{d}/missing/x.png"), "folder '{d}/missing' does not exist"),
    (("--save", "/proc/x.npz"), "cannot be written in folder '/proc': it does not accept new files"),
    (("--save", "{d}"), "is a folder; give a file name"),
    (("--save", "{d}/a.npz", "--export-data", "{d}/a.npz"), "is also the checkpoint"),
    (("--export-data", "{d}/a.vti", "--export-every", "5"), "give --export-data OUT.pvd"),
    (("--export-data", "{d}/a.pvd"), "needs --export-every K (steps) or --export-dt DT"),
    (("--frame-dt", "0.1"), "--frame-dt applies to a video"),
    (("--export-video", "{d}/v.gif", "--frame-every", "0"), "--frame-every must be an integer"),
    (("--export-video", "{d}/v.gif", "--frame-dt", "-1"), "--frame-dt must be a finite time > 0"),
    (("--export-video", "{d}/v.gif", "--fps", "0"), "--fps must be an integer in [1, 240]"),
    (("--export-image", "{d}/i.png", "--field", "nosuch"), "unknown field 'nosuch'"),
    (("--export-image", "{d}/i.png", "--range", "2,1"), "LO,HI must be finite with LO < HI"),
    (("--range", "auto"), "--range applies to pictures"),
])
def test_outputs_are_checked_before_the_first_step(tmp_path, extra, needle, capsys):
    t0 = time.perf_counter()
    args = [*SLOW_RUN, *(e.format(d=tmp_path) for e in extra)]
    if ".xdmf" in args[-1]:  # as the user meets it
        rc, out, err = cli(*args, timeout=60)
    else:  # the other cases in this process (cheaper)
        try:
            rc = main(args)
        except SystemExit as e:
            rc = e.code
        out, err = capsys.readouterr()
    assert rc == 2 and out == "", err
    assert err.count("\n") == 1 and needle.format(d=tmp_path) in err, err
    assert err.startswith("pdestudio: error: ")
    assert time.perf_counter() - t0 < 30  # refused at once, not after 10^9 steps
    assert [p.name for p in tmp_path.iterdir()] == []


def test_until_not_after_the_current_time_is_refused(tmp_path, capsys):
    rc, _, err = cli("run", "heat-1d", "--until", "-1", "-q")
    assert rc == 2 and err.count("\n") == 1 and "--until -1 is not after" in err
    assert main(["run", "heat-1d", "--steps", "10", "--save", str(tmp_path / "s.npz"), "-q"]) == 0
    t = solvers.load(tmp_path / "s.npz", backend="numpy").t
    assert main(["run", "heat-1d", "--load", str(tmp_path / "s.npz"), "--until", repr(t),
                 "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"not after the simulation's time t = {t:g}" in err


def test_divergence_still_writes_the_last_finite_state_and_exits_1(tmp_path):
    d = tmp_path
    rc, out, err = cli("run", "ks-1d", "--backend", "numpy", "--init", "u=formula:1e3*sin(x/8)",
                       "--steps", "2000", "--save", d / "s.npz", "--export-data", d / "d.vti",
                       "--export-image", d / "i.png", "--export-video", d / "v.gif",
                       "--frame-every", "10", "--json")
    assert rc == 1, err
    s = json.loads(out)
    assert s["diverged"] is True and s["exit_code"] == 1
    assert "became non-finite in step" in s["reason"]
    assert {w["kind"] for w in s["outputs"]} == {"checkpoint", "data", "image", "video"}
    sim = solvers.load(d / "s.npz", backend="numpy")
    assert 0 < sim.steps == s["steps"] < 2000 and sim.t == s["t"]
    u = sim.fields()["u"]
    assert np.isfinite(u).all()
    np.testing.assert_array_equal(read(d / "d.vti")["point"]["u"], u)
    import imageio.v3 as iio
    frames = iio.imread(d / "v.gif", index=None)
    video = next(w for w in s["outputs"] if w["kind"] == "video")
    assert len(frames) == video["frames"] == sim.steps // 10 + 1 + (sim.steps % 10 != 0)
    assert (d / "i.png").stat().st_size > 1000
    assert no_temporary_files(d) == []
    # stderr: the backend line, the divergence (one line), the summary and the files written
    assert sum("became non-finite" in ln for ln in err.splitlines()) == 1


SLOW_STEPS = """
import sys, time
from pdestudio import solvers
step = solvers.Simulation.step
def slow(self, n=1):  # every call takes 0.2 s: the run lasts long enough for a bar, anywhere
    time.sleep(0.2)
    return step(self, n)
solvers.Simulation.step = slow
from pdestudio.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_progress_bar_on_a_terminal_only(tmp_path):
    import os
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-c", SLOW_STEPS, "run", "heat-1d", "--backend",
                          "numpy", "--steps", "8"], stdout=subprocess.PIPE, stderr=slave,
                         text=True)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        seen += chunk
    p.wait(timeout=120)
    os.close(master)
    assert p.returncode == 0
    text = seen.decode(errors="replace")
    assert "done: 8 steps" in text
    assert "\x1b[" in text and "run" in text  # rich drew (and cleared) a bar
    # (into a pipe: no bar, and progress lines only with -v: test_cli.py)
