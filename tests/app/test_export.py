"""Exports without a window (what `pdestudio run --export-*` uses): field data that meshio reads
back with the right point/cell association, PNG of the field as the viewer draws it (headless
EGL, or the software fallback), deterministic MP4/GIF recordings."""
import json

import numpy as np
import pytest

from pdestudio import solvers
pytest.importorskip("vispy")
pytest.importorskip("imageio")
meshio = pytest.importorskip("meshio")

from pdestudio.app import export  # noqa: E402
from pdestudio.app.frames import Frame, SimInfo  # noqa: E402
from pdestudio.app.software import render_software  # noqa: E402
from pdestudio.app.views.colors import ColorScale  # noqa: E402


def small(model, **kw):
    from pdestudio.solvers.core.registry import model_class
    cls = model_class(model)
    p = dict(getattr(cls, "contract_params", {cls.size_param: 16}))
    p.update(kw)
    return solvers.create(model, backend="numpy", **p)


@pytest.mark.parametrize("model,kind", [("heat-1d", "line"), ("fake-wave-2d", "quad"),
                                        ("fake-surface-rd", "triangle")])
def test_vtu_and_npz_hold_every_field_at_its_location(tmp_path, fake_models, model, kind):
    sim = small(model)
    sim.step(3)
    fields = sim.fields()
    export.write_data(sim, tmp_path / "f.vtu")
    m = meshio.read(tmp_path / "f.vtu")
    assert m.cells[0].type == kind
    locs = {n: sim.field_info(n)["location"] for n in fields}
    for name, values in fields.items():
        if name in m.point_data:
            got = m.point_data[name]
            assert len(got) == len(m.points)
        else:
            got = m.cell_data[name][0]
            assert len(got) == len(m.cells[0].data)
            assert locs[name] == "cell"
        np.testing.assert_allclose(got, np.asarray(values).ravel(), rtol=0, atol=0)
    export.write_data(sim, tmp_path / "f.npz")
    with np.load(tmp_path / "f.npz") as z:
        meta = json.loads(str(z["__meta__"]))
        assert meta["model"] == model and meta["steps"] == 3
        for name, values in fields.items():
            np.testing.assert_array_equal(z[f"field/{name}"], values)
    back = solvers.load(tmp_path / "f.npz", backend="numpy")  # the data export is a checkpoint
    assert back.steps == 3
    for name, values in back.fields().items():
        np.testing.assert_array_equal(values, fields[name])


def test_grid_of_cell_fields_becomes_cells_on_the_corner_grid(tmp_path, fake_models):
    sim = small("fake-wave-2d", nx=6)
    export.write_data(sim, tmp_path / "f.vtu")
    m = meshio.read(tmp_path / "f.vtu")
    assert len(m.points) == 7 * 7 and len(m.cells[0].data) == 36
    # the quad of cell (j, i) has the cell centre at the mean of its corners
    c = m.points[m.cells[0].data].mean(axis=1)
    X, Y = np.meshgrid(sim.mesh.x, sim.mesh.y)
    np.testing.assert_allclose(c[:, 0], X.ravel(), atol=1e-12)
    np.testing.assert_allclose(c[:, 1], Y.ravel(), atol=1e-12)


def test_bad_data_and_video_names_are_refused(tmp_path):
    sim = small("heat-1d")
    with pytest.raises(solvers.ParameterError, match="allowed: .npz, .vti, .vtu, .pvd"):
        export.write_data(sim, tmp_path / "f.csv")
    with pytest.raises(solvers.ParameterError, match="allowed: .mp4, .gif"):
        export.VideoRecorder(tmp_path / "v.avi", sim)
    with pytest.raises(solvers.ParameterError, match="unknown field"):
        export.render_image(sim, tmp_path / "x.png", field="nope")


def _not_blank(img, colours=20):
    assert img.ndim == 3 and img.shape[2] == 3
    assert img.std() > 5 and len(np.unique(img.reshape(-1, 3), axis=0)) > colours


RENDER = """
import sys, numpy as np, imageio.v3 as iio
from pdestudio.solvers.core import registry
from pdestudio import solvers
from tests.app.fakes import FAKES
solvers.available_models()
for c in FAKES:
    registry._MODELS[c.model] = c
from pdestudio.app import export
from tests.app.test_export import small
out = sys.argv[1]
for model in ("heat-1d", "fake-wave-2d", "fake-surface-rd"):
    sim = small(model)
    how = export.render_image(sim, f"{out}/{model}-a.png")
    sim.step(50)
    export.render_image(sim, f"{out}/{model}-b.png")
    print(how)
"""


def run_py(code, *args):
    """OpenGL rendering runs in a child process: the EGL context of a headless export and the
    window's Qt contexts never meet in one process (as in real use)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_render_image_draws_the_field(tmp_path):
    import imageio.v3 as iio
    how = run_py(RENDER, tmp_path)
    assert "OpenGL" in how or "software" in how
    for model in ("heat-1d", "fake-wave-2d", "fake-surface-rd"):
        a, b = iio.imread(tmp_path / f"{model}-a.png"), iio.imread(tmp_path / f"{model}-b.png")
        _not_blank(a)
        assert a.shape[0] % 16 == 0 and a.shape[1] % 16 == 0
        assert not np.array_equal(a, b)  # the field moved


@pytest.mark.parametrize("model", ["heat-1d", "fake-wave-2d", "fake-surface-rd"])
def test_software_fallback_uses_the_viewer_colormap(fake_models, model):
    sim = small(model)
    info = SimInfo.of(sim)
    f = info.default_field
    scale = ColorScale("viridis", "auto")
    img = render_software(info, Frame(sim.fields(), 0.0, 0, 0), f, scale, (320, 240))
    _not_blank(img, colours=8)
    colours = {tuple(c) for c in img.reshape(-1, 3)}
    lut = {tuple((c[:3] * 255).astype(np.uint8)) for c in scale.rgba(np.linspace(0, 1, 256),
                                                                       (0, 1))}
    assert len(colours & lut) >= 8  # the field is painted with the colormap's colours


RECORD = """
import sys
from pdestudio.app import export
from tests.app.test_export import small
out = sys.argv[1]
for name in ("a", "b"):
    for suffix in (".gif", ".mp4"):
        sim = small("heat-1d", nx=200)
        rec = export.VideoRecorder(f"{out}/{name}{suffix}", sim, fps=10)
        for _ in range(4):
            rec.add(sim)
            sim.step(40)
        rec.close()
        print(rec.frames)
"""


def test_recording_is_deterministic(tmp_path):
    import imageio.v3 as iio
    assert run_py(RECORD, tmp_path).split() == ["4"] * 4
    for suffix in (".gif", ".mp4"):
        a = iio.imread(tmp_path / f"a{suffix}", index=None)
        b = iio.imread(tmp_path / f"b{suffix}", index=None)
        assert len(a) == 4 and a.shape[1] % 16 == 0 and a.shape[2] % 16 == 0
        np.testing.assert_array_equal(a, b)  # the same run gives the same frames
        assert not np.array_equal(a[0], a[-1])  # and the run moves


def test_cli_run_exports_every_kind(tmp_path):
    import subprocess
    import sys
    out = tmp_path
    r = subprocess.run([sys.executable, "-m", "pdestudio", "run", "heat-1d", "--set", "nx=128",
                        "--backend", "numpy", "--steps", "60", "--frame-every", "20",
                        "--export-image", str(out / "i.png"), "--export-video", str(out / "v.gif"),
                        "--export-data", str(out / "d.vtu"), "--json"],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stderr and "drawn by" in r.stderr
    written = {w["kind"]: w for w in json.loads(r.stdout)["outputs"]}
    assert written["video"]["frames"] == 4 and written["data"]["path"] == str(out / "d.vtu")
    assert set(written) == {"video", "data", "image"}
    assert (out / "i.png").stat().st_size > 1000
    m = meshio.read(out / "d.vtu")
    assert "T" in m.point_data and len(m.points) == 128
    import imageio.v3 as iio
    assert len(iio.imread(out / "v.gif", index=None)) == 4  # steps 0, 20, 40, 60


NO_GL = """
import sys
sys.modules["vispy"] = None  # no VisPy and hence no OpenGL context at all
from pdestudio import solvers
from pdestudio.app import export
sim = solvers.create("heat-1d", backend="numpy", nx=64)
print(export.render_image(sim, sys.argv[1]))
"""


def test_without_opengl_the_image_is_drawn_in_software_and_said_so(tmp_path):
    import imageio.v3 as iio
    how = run_py(NO_GL, tmp_path / "s.png")
    assert how.startswith("software rendering (no OpenGL context")
    img = iio.imread(tmp_path / "s.png")
    _not_blank(img, colours=8)
    viridis_end = (253, 231, 36)  # the top of the colormap appears (the field's maximum)
    assert (np.abs(img.reshape(-1, 3).astype(int) - viridis_end).sum(axis=1) < 6).any()


def test_a_renderer_draws_nothing_before_its_first_frame(qapp, vispy_records):
    """The offscreen renderer proves its context by rendering before any frame; the field
    visuals then had no colour map yet and VisPy warned "Program has unset variables: {'u_cmap',
    'u_clim'}" (with a Qt application, as beside the window). Now they wait for the first
    frame, and the frame still draws: the line view's space-time image is coloured."""
    sim = small("heat-1d", nx=64)
    sim.step(5)
    r = export.Renderer(sim)
    if r.canvas is None:
        pytest.skip(r.how)
    img = r.render(sim).astype(int)
    assert not [m for m in vispy_records if "unset variables" in m.getMessage()], \
        [m.getMessage() for m in vispy_records]
    # the space-time image (lower half) holds colours of the colour map, not only the background
    lower = img[img.shape[0] // 2:]
    colours = {tuple(c) for c in lower.reshape(-1, 3)[::7]}
    assert len(colours) > 20, len(colours)
