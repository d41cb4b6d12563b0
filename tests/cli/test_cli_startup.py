"""The command line's start: `pdestudio --version` answers without importing NumPy or the
models (it took 2.9 s when it imported every model, SciPy and the mesh code); the headless
`pdestudio run` never imports Qt, even when it draws pictures and videos; an error found after
the simulation is set up is one line; sweep ranges give decimal-looking values."""
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def python(code: str, *args, timeout=120):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=timeout)


def test_version_imports_nothing_heavy_and_is_quick():
    p = python("import sys, time; t = time.perf_counter()\n"
               "from pdestudio.app.cli import main\n"
               "rc = main(['--version'])\n"
               "print(rc, time.perf_counter() - t, sorted(m for m in ('numpy', 'scipy', "
               "'pdestudio.solvers', 'PySide6', 'argparse') if m in sys.modules))")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("\n")
    import pdestudio
    assert lines[0] == f"pdestudio {pdestudio.__version__}"
    rc, seconds, loaded = lines[1].split(" ", 2)
    assert rc == "0" and loaded == "[]", lines[1]
    assert float(seconds) < 0.2, f"--version took {seconds} s after the interpreter started"
    # the real command, as a user types it (the interpreter's own start included)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pdestudio", "-q", "--version"],
                       capture_output=True, text=True, env=ENV, cwd=ROOT)
    took = time.perf_counter() - t0
    assert p.stdout.strip() == f"pdestudio {pdestudio.__version__}" and p.returncode == 0
    assert took < 1.0, took  # about 0.1 s on an idle machine; generous for a loaded CI


def test_other_commands_still_parse_after_the_fast_path():
    p = python("from pdestudio.app.cli import main, parser\n"
               "print(parser().prog)\n"
               "raise SystemExit(main(['models']))")
    assert p.returncode == 0 and p.stdout.startswith("pdestudio\n") and "heat-1d" in p.stdout


def test_headless_run_with_pictures_imports_no_qt(tmp_path):
    code = ("import sys\nfrom pdestudio.app.cli import main\n"
            "rc = main(sys.argv[1:])\n"
            "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6'))\n"
            "print('QT', qt)\nraise SystemExit(rc)")
    p = python(code, "run", "heat-1d", "--set", "nx=64", "--steps", "20", "-q",
               "--export-image", str(tmp_path / "a.png"),
               "--export-video", str(tmp_path / "a.gif"), "--frame-every", "5")
    assert p.returncode == 0, p.stderr
    assert "QT []" in p.stdout, p.stdout
    assert (tmp_path / "a.png").stat().st_size > 1000 and (tmp_path / "a.gif").is_file()


def test_error_after_setup_is_one_line():
    p = python("import sys\nfrom pdestudio.app.cli import main\nraise SystemExit(main("
               "['run', 'ks-1d', '--steps', '3', '--field', 'nope']))")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert lines == ["pdestudio: error: ks-1d: unknown field 'nope'; fields: u"], p.stderr


def test_a_folder_that_refuses_files_is_said_so():
    from pdestudio.app.cli_outputs import OutputError, check_writable
    if not Path("/proc").is_dir():
        return
    try:
        check_writable("/proc/x.npz", "checkpoint")
    except OutputError as e:
        assert "cannot be written in folder '/proc': it does not accept new files" in str(e)
        assert "No such file or directory" not in str(e)
    else:
        raise AssertionError("/proc accepted a file")


def test_sweep_ranges_are_decimal():
    from pdestudio.app.sweep.spec import parse_vary
    assert parse_vary("gray-scott", "F=0.02:0.06:3") == ("F", [0.02, 0.04, 0.06])
    _, values = parse_vary("gray-scott", "F=0.01:0.07:7")
    assert [repr(v) for v in values] == ["0.01", "0.02", "0.03", "0.04", "0.05", "0.06", "0.07"]
    _, values = parse_vary("gray-scott", "k=0.05:0.07:3")
    assert values == [0.05, 0.06, 0.07]
