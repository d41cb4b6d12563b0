"""Faults during a run: signals, a full disk, a file size limit, no memory. Each ends with one
line on stderr and the exit code that says what happened, and leaves no partial or temporary file
(the previous checkpoint is untouched)."""
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from pdestudio import solvers

from .vtkread import no_temporary_files

LONG = ("run", "heat-1d", "--backend", "numpy", "--set", "nx=256", "--steps", "1000000000", "-q")


def previous_checkpoint(folder):
    """A checkpoint from an earlier run, which a failed or interrupted save must not touch."""
    path = folder / "s.npz"
    r = subprocess.run([sys.executable, "-m", "pdestudio", "run", "heat-1d", "--backend", "numpy",
                        "--set", "nx=256", "--steps", "7", "--save", str(path), "-q"], timeout=120)
    assert r.returncode == 0
    return path, path.read_bytes()


def assert_only(folder, names):
    assert sorted(p.name for p in folder.iterdir()) == sorted(names)
    assert no_temporary_files(folder) == []


def one_line(err, needle):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert needle in lines[0], err
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("sig,code,needle", [
    (signal.SIGINT, 130, "pdestudio: interrupted; nothing half-written was left"),
    (signal.SIGTERM, 143, "pdestudio: terminated (SIGTERM); nothing half-written was left"),
])
def test_a_signal_during_a_run_leaves_nothing_half_written(tmp_path, sig, code, needle):
    ckpt, before = previous_checkpoint(tmp_path)
    p = subprocess.Popen([sys.executable, "-m", "pdestudio", *LONG, "--save", str(ckpt),
                          "--export-video", str(tmp_path / "v.gif"), "--frame-every", "20000",
                          "--export-data", str(tmp_path / "d.pvd"), "--export-every", "20000",
                          "--export-image", str(tmp_path / "i.png")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         # as from a terminal: a test run started in the background has SIGINT
                         # ignored, and its children would inherit that
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        # the run has started once its temporary video file exists (recording under way)
        while not any(f.name.startswith(".v.gif") for f in tmp_path.iterdir()):
            assert p.poll() is None and time.monotonic() < deadline, p.stderr.read()
            time.sleep(0.05)
        time.sleep(1.5)
        assert p.poll() is None
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == code, err
    one_line(err, needle)
    assert out == ""
    assert_only(tmp_path, ["s.npz"])
    assert ckpt.read_bytes() == before


ENOSPC = """
import errno, os, sys
def full(fd):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
os.fsync = full  # the disk fills up as the file is flushed
from pdestudio.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("option,name", [("--save", "s.npz"), ("--export-data", "d.vti"),
                                         ("--export-video", "v.gif"),
                                         ("--export-image", "i.png")])
def test_a_full_disk_names_the_file_and_keeps_the_previous_one(tmp_path, option, name):
    path = tmp_path / name
    path.write_bytes(b"previous")
    r = subprocess.run([sys.executable, "-c", ENOSPC, "run", "heat-1d", "--backend", "numpy",
                        "--steps", "10", "-q", option, str(path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    one_line(r.stderr, "pdestudio: error: cannot write ")
    assert f"'{path}'" in r.stderr and "No space left on device" in r.stderr
    assert path.read_bytes() == b"previous"
    assert_only(tmp_path, [name])


def _file_size_limit(nbytes):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return limit


@pytest.mark.parametrize("name,needle", [("v.gif", "File too large"),
                                         ("v.mp4", "the encoder (ffmpeg) failed")])
def test_an_export_that_fails_mid_run_is_one_line_and_no_partial_file(tmp_path, name, needle):
    r = subprocess.run([sys.executable, "-m", "pdestudio", "run", "heat-1d", "--backend",
                        "numpy", "--steps", "400", "--frame-every", "10", "-q",
                        "--export-video", str(tmp_path / name)],
                       capture_output=True, text=True, timeout=300,
                       preexec_fn=_file_size_limit(10_000))
    assert r.returncode == 2
    one_line(r.stderr, f"pdestudio: error: cannot write '{tmp_path / name}': ")
    assert needle in r.stderr
    assert_only(tmp_path, [])


def test_out_of_memory_while_setting_up_is_one_line():
    # 20000² cells of shallow water need tens of GB; the address space is limited to 3 GB
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    r = subprocess.run([sys.executable, "-m", "pdestudio", "run", "shallow-water", "--backend",
                        "numpy", "--set", "nx=20000", "--steps", "1", "-q"],
                       capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert r.returncode == 2
    one_line(r.stderr, "pdestudio: error: ")
    assert "memory" in r.stderr


OOM_IN_STEP = """
import sys
from pdestudio import solvers
calls = []
step = solvers.Simulation.step
def failing(self, n=1):
    calls.append(n)
    if len(calls) == 3:
        raise MemoryError()
    return step(self, n)
solvers.Simulation.step = failing
from pdestudio.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_out_of_memory_in_a_step_is_one_line_exit_1_and_writes_nothing(tmp_path):
    r = subprocess.run([sys.executable, "-c", OOM_IN_STEP, "run", "heat-1d", "--backend", "numpy",
                        "--steps", "1000", "-q", "--save", str(tmp_path / "s.npz"),
                        "--export-video", str(tmp_path / "v.gif")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    one_line(r.stderr, "pdestudio: error: heat-1d: out of memory in step")
    assert_only(tmp_path, [])


def test_a_bug_is_one_line_with_the_traceback_only_on_request(tmp_path):
    code = OOM_IN_STEP.replace("raise MemoryError()", "raise TypeError('a bug')")
    args = [sys.executable, "-c", code, "run", "heat-1d", "--backend", "numpy", "--steps",
            "1000", "--save", str(tmp_path / "s.npz")]
    r = subprocess.run(args + ["-q"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    one_line(r.stderr, "pdestudio: error: internal error: TypeError: a bug")
    r = subprocess.run(args + ["-v"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" in r.stderr
    assert_only(tmp_path, [])


@pytest.mark.skipif(os.geteuid() != 0 and not os.path.isdir("/proc"), reason="needs /proc")
def test_checkpoint_of_the_run_loads(tmp_path):
    # (a sanity check for the fixtures above: the previous checkpoint is a real one)
    ckpt, _ = previous_checkpoint(tmp_path)
    assert solvers.load(ckpt, backend="numpy").steps == 7
