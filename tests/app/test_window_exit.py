"""A script that builds the window, runs a model, closes the window and exits returns 0.

It used to abort ("Fatal Python error: none_dealloc / bool_dealloc", rc 134): PySide6 6.12 on
CPython < 3.12 loses a reference to None on every void call and to True on every signal
emission, so a few seconds of a running window drove their counts to zero (app/window.py).
The script stands in for a long session by calling into Qt 300 000 times after the run."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("vispy")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys, time
from PySide6.QtWidgets import QApplication
from pdestudio.app.window import MainWindow
app = QApplication(sys.argv[:1])
w = MainWindow(backend="numpy")
w.show()
w.open_model("heat-1d", params={"nx": 256})
w.worker.submit("run", True)
t = time.time()
while time.time() - t < 3 or (w.frames_shown < 30 and time.time() - t < 60):
    app.processEvents()  # 3 s and 30 frames: a loaded 2-core machine showed 10 in 3 s
print("frames", w.frames_shown)
w.close()
for _ in range(300000):  # an hour of a window's calls into Qt, each losing a reference on 6.12
    app.processEvents()
print("closed")
"""


def test_build_run_close_exit_returns_0(qapp):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Fatal Python error" not in p.stderr and "closed" in p.stdout
    frames = int(p.stdout.split("frames ")[1].split()[0])
    assert frames >= 30, p.stdout  # it ran (and called into Qt) long enough to have crashed
