"""The notebook view in a real browser (issue 30): JupyterLab on 127.0.0.1 with a token, the
notebook opened in headless Chromium, Run All from the page, then the checks of checks.py read
from the page. The scratch test proves the harness on a stand-in widget (scratch_view.py)."""
import shutil
from pathlib import Path

import pytest

from . import checks

HERE = Path(__file__).parent
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_scratch_view_in_the_browser(lab_folder, page):
    shutil.copy(HERE / "scratch_view.py", lab_folder / "scratch_view.py")
    checks.write_notebook(lab_folder / "scratch.ipynb", [
        ("import scratch_view\nfrom pdestudio import solvers", ()),
        ('sim = solvers.create("gray-scott", vertices=20000)', ()),
        ("view = scratch_view.ScratchView(sim)\nview", ("live-view",)),
        ("view.run()", ()),
    ])
    page.open("scratch.ipynb")
    page.run_all()
    page.run_cell(checks.KERNEL_HELPERS)
    checks.check_picture_changes(page)
    before, after = checks.check_slider(page, "F")
    print(f"slider F: {before} -> {after}")
    checks.check_brush(page)
    print("measure:", checks.measure(page))
