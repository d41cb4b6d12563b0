"""Importing pdestudio without the notebook (issue 30): `pdestudio.show` is there, but nothing of
Jupyter, ipywidgets or VisPy is imported until it is called; the notebook code imports no Qt."""
import subprocess
import sys

import pytest


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120).stdout.strip()


def test_import_pdestudio_and_solvers_loads_no_notebook_modules():
    out = _run("import sys, pdestudio, pdestudio.solvers; "
               "print(callable(pdestudio.show), sorted(m for m in ('jupyter_rfb', 'ipywidgets', "
               "'anywidget', 'IPython', 'vispy', 'PySide6') if m in sys.modules))")
    assert out == "True []"


def test_the_notebook_imports_no_qt():
    pytest.importorskip("jupyter_rfb")
    out = _run("import sys; from pdestudio import solvers; import pdestudio; "
               "from pdestudio.app.notebook.canvas import render; "
               "v = pdestudio.show(solvers.create('heat-1d', backend='numpy', nx=64)); "
               "render(v.canvas, 320, 240); v.close(); print('PySide6' in sys.modules)")
    assert out.splitlines()[-1] == "False"
