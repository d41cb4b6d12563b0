"""The notebook view in a real browser (issue 30): JupyterLab on 127.0.0.1 with a token, the
notebook opened in headless Chromium, Run All from the page, then the checks of checks.py read
from the page. The scratch test proves the harness on a stand-in widget (scratch_view.py)."""
import json
import os
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


EXAMPLE = HERE.parents[1] / "examples" / "live_notebook.ipynb"
DOC_IMAGES = HERE.parents[1] / "docs" / "img"


def _keep_for_docs(page, names):
    """The last screenshots of the example become the docs' pictures (docs/img/notebook_*)."""
    DOC_IMAGES.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(page.shots / f"{name}.png", DOC_IMAGES / f"{name}.png")


def test_example_notebook_in_the_browser(lab_folder, page):
    """examples/live_notebook.ipynb top to bottom with Run All, then from the page: Run, the
    picture, the slider F, Pause, a brush stroke."""
    if not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} is missing")
    nb = json.loads(EXAMPLE.read_text())
    tagged = [c for c in nb["cells"] if "live-view" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "the example tags the cell that shows the view 'live-view'"
    shutil.copy(EXAMPLE, lab_folder / EXAMPLE.name)
    page.open(EXAMPLE.name)
    page.run_all(timeout=300)
    page.shot("notebook_run_all")
    page.run_cell(checks.KERNEL_HELPERS)
    page.element(".pdestudio-run").click()
    page.wait("the view to run", lambda: page.run_json("print(_json.dumps(view.running))"),
              timeout=30)
    checks.check_picture_changes(page)
    before, after = checks.check_slider(page, "F")
    print(f"slider F: {before} -> {after}")
    checks.check_brush(page)
    _keep_for_docs(page, ["notebook_running", "notebook_brush"])
    page.run_cell("view.close()")
    page.shutdown_kernel()


GRID_MODEL = HERE.parents[1] / "resources" / "models" / "gray-scott-pearson.toml"
MESH_SIM = 'sim = solvers.create("gray-scott", vertices=1024 * 1024)'
# viewer: (imports, the simulation, the cell that shows it)
GRID_SIM = ('sim = solvers.create(solvers.define("gray-scott-pearson.toml"), nx=1024, '
            'ny=1024)')
CASES = {
    # a 1024 × 1024 grid: Gray–Scott as a model file (docs/EQUATIONS.md), the window's grid view
    # (its default: the surface), then its flat image, then the window's "fast solver" pace
    "live": ("import pdestudio", GRID_SIM, "view = pdestudio.show(sim)\nview"),
    "live-image": ("import pdestudio", GRID_SIM, 'view = pdestudio.show(sim, mode="image")\nview'),
    "live-fast": ("import pdestudio", GRID_SIM,
                  'view = pdestudio.show(sim, pace="fast solver")\nview'),
    # the built-in Gray–Scott on a triangulated rectangle of 1024² vertices (2M triangles)
    "live-mesh": ("import pdestudio", MESH_SIM, "view = pdestudio.show(sim)\nview"),
    "scratch": ("import scratch_view", MESH_SIM, "view = scratch_view.ScratchView(sim)\nview"),
}
ON_DEMAND = pytest.mark.skipif(not os.environ.get("PDESTUDIO_BROWSER_BENCH"),
                               reason="this measurement runs on demand: PDESTUDIO_BROWSER_BENCH=1")


@pytest.mark.parametrize("viewer", ["live"] + [pytest.param(v, marks=ON_DEMAND) for v in (
    "live-image", "live-fast", "live-mesh", "scratch")])
def test_frames_reaching_the_page_1024(lab_folder, page, viewer):
    """Issue 30's goals, measured in the page: frames/s of a 1024² field reaching the browser
    and the solver's steps/s with the view running against the solver alone (numbers in
    docs/BENCHMARKS.md, "Issue 30: the notebook view"). `live`: Gray–Scott on a 1024 × 1024
    grid in pdestudio.show's view (`-image`: its flat image; `-fast`: the "fast solver"
    pace, drawing at most a tenth of the time); `live-mesh`: Gray–Scott on 1024² mesh vertices in the same
    view (the mesh's draw is the limit on a CPU); `scratch`: the stand-in widget (NumPy
    binning, no VisPy), what jupyter_rfb's transport allows here."""
    if viewer != "scratch" and not EXAMPLE.exists():
        pytest.skip(f"{EXAMPLE} is missing: no notebook view to measure")
    shutil.copy(HERE / "scratch_view.py", lab_folder / "scratch_view.py")
    shutil.copy(GRID_MODEL, lab_folder / GRID_MODEL.name)
    imports, make, show = CASES[viewer]
    name = f"measure_{viewer}.ipynb"
    checks.write_notebook(lab_folder / name, [
        (imports + "\nfrom pdestudio import solvers", ()), (make, ()), (show, ("live-view",))])
    page.open(name)
    page.run_all(timeout=300)
    page.run_cell(checks.KERNEL_HELPERS)
    m = checks.measure(page, seconds=6.0)
    shutil.copy(page.shots / "notebook_measure.png", page.shots / f"measure_{viewer}.png")
    if viewer != "scratch":
        m["view_stats"] = page.run_json("print(_json.dumps(view.stats()))")
    (lab_folder / f"frame_rate_1024_{viewer}.json").write_text(json.dumps(m, indent=1))
    print(f"frames reaching the page, 1024² field, {viewer} view:", json.dumps(m))
    page.run_cell("view.close()")
    page.shutdown_kernel()
    # floors a loaded 2-core CI machine passes; the goals (≥ 5 frames/s here, ≥ 90 % of the
    # steps/s) are measured and reported, not asserted. The default view keeps 24-34 % of the
    # solver's steps/s where the browser, the server and the solver share 2 cores (BENCHMARKS,
    # "Issue 30"; CI measured 23.8 % once), so the floor only catches a view that starves the
    # solver: a tenth of its steps/s
    assert m["frames_per_s"] >= 1.0, m
    assert m["steps_per_s_view"] >= 0.10 * m["steps_per_s_alone"], m
