"""Exports (docs/MODELS.md §5): PNG of a field as the viewer draws it, MP4/GIF recordings streamed to the
encoder (memory independent of the length), field data as .npz (a checkpoint with the fields that
`solvers.load` reads back), .vti/.vtu and .pvd time series for ParaView (vtk.py).

Every file is written atomically: to a temporary file in the same folder, renamed over the target
only when complete (`solvers.atomic_write`; videos: a temporary file renamed at `close()`, removed
by `abort()`), so a failed or interrupted export never leaves a partial file or destroys the
previous one.

Headless rendering (`pdestudio run --export-image/--export-video`, no display): the same VisPy
view as the window, on an offscreen canvas through EGL (Mesa llvmpipe works without a display).
If no OpenGL context can be had, a software rendering with the same colormap is used instead
(a flat image of the field, a line plot, or the mesh's triangles filled from above), and
`Renderer.how` says which one drew the picture.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from pdestudio.solvers import ParameterError, atomic_write

from . import vtk
from .frames import Frame, SimInfo
from .views.colors import ColorScale

SIZE = (960, 720)  # divisible by 16 (libx264)
VIDEO_SUFFIXES = (".mp4", ".gif")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
DATA_SUFFIXES = (".npz", ".vti", ".vtu", ".pvd")
DRAW_LIMIT = 1e30


# ---- field data ------------------------------------------------------------------------------
def check_data_path(path, mesh=None) -> str:
    """The data format of `path` by its suffix (ParameterError if unknown); with the
    simulation's mesh, also whether that format can hold it (.vti needs a uniform grid)."""
    suffix = Path(path).suffix.lower()
    if suffix not in DATA_SUFFIXES:
        raise ParameterError(f"data file '{path}' has type '{suffix}'; allowed: "
                             + ", ".join(DATA_SUFFIXES) + " (.npz: a checkpoint with the fields "
                             "that solvers.load reads; .pvd: a ParaView time series)")
    if mesh is not None and suffix == ".vti":
        try:
            vtk.check_vti(mesh)
        except ParameterError as e:
            raise ParameterError(f"data file '{path}': {e}") from None
    if suffix == ".pvd":
        vtk.check_series_folder(path)
    return suffix


def data_arrays(sim):
    """(mesh, fields, locations) of the simulation's current state, for the VTK writers."""
    fields = sim.fields()
    locations = {k: sim.field_info(k)["location"] for k in fields}
    return sim.mesh, fields, locations


def write_data(sim, path) -> None:
    """Write the state of `sim`: .npz (a checkpoint holding the fields and mesh coordinates too,
    which solvers.load reads back), .vti (ImageData: grids), .vtu (UnstructuredGrid: meshes, or
    grids as lines/quads) or .pvd (a one-frame ParaView time series). Every file is written
    atomically: a failed write leaves the previous file in place."""
    suffix = check_data_path(path, sim.mesh)
    if suffix == ".npz":
        sim.save(path, include_fields=True)
        return
    mesh, fields, locations = data_arrays(sim)
    if suffix == ".pvd":
        series = vtk.Series(path, mesh)
        try:
            series.add(mesh, fields, locations, sim.t, sim.steps)
            series.close()
        except BaseException:
            series.abort()
            raise
        return
    writer = vtk.write_vti if suffix == ".vti" else vtk.write_vtu
    writer(path, mesh, fields, locations, sim.t, sim.steps)


# ---- rendering ----------------------------------------------------------------------------------
def write_png(path, rgb: np.ndarray) -> None:
    """Write an RGB(A) picture (PNG, or JPEG by the suffix) atomically."""
    import imageio.v3 as iio
    suffix = Path(path).suffix.lower()
    if suffix not in IMAGE_SUFFIXES:
        raise ParameterError(f"image file '{path}' has type '{suffix}'; allowed: "
                             + ", ".join(IMAGE_SUFFIXES))
    data = iio.imwrite("<bytes>", np.ascontiguousarray(rgb[..., :3]), extension=suffix)
    with atomic_write(path) as f:
        f.write(data)


def check_image_path(path) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in IMAGE_SUFFIXES:
        raise ParameterError(f"image file '{path}' has type '{suffix}'; allowed: "
                             + ", ".join(IMAGE_SUFFIXES))


def check_video_path(path) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise ParameterError(f"video file '{path}' has type '{suffix}'; allowed: .mp4, .gif")


def _gl_app():
    """A VisPy app that can render offscreen: the running Qt app in the window, else EGL
    (surfaceless Mesa works without a display). Raises RuntimeError when there is none."""
    import vispy.app
    qt = sys.modules.get("PySide6.QtWidgets")  # the window's Qt, never imported here: a
    if qt is not None and qt.QApplication.instance() is not None:  # headless run loads no Qt
        return vispy.app.Application("pyside6"), "VisPy/OpenGL (Qt)"
    os.environ.setdefault("EGL_PLATFORM", "surfaceless")
    import vispy
    vispy.set_log_level("error")  # headless: VisPy's warnings are not the user's business
    return vispy.app.Application("egl"), "VisPy/OpenGL (EGL, offscreen)"


class FollowRange:
    """A colour range for recordings that shows the dynamics: it contains every frame's data
    at once (a line plot never runs off its axes, no colour saturates), and when the data
    occupy less of it (a dam-break column that collapsed) it closes in on them by `rate` of
    the gap a frame, so the picture neither goes dark nor flickers as each frame's own range
    would."""

    def __init__(self, rate: float = 0.15):
        self.rate = rate
        self.lo = self.hi = None

    def update(self, lo: float, hi: float) -> tuple[float, float]:
        if self.lo is None:
            self.lo, self.hi = lo, hi
        else:
            self.lo = min(lo, self.lo + self.rate * (lo - self.lo))
            self.hi = max(hi, self.hi + self.rate * (hi - self.hi))
        return self.lo, self.hi


def describe_range(color_range) -> str:
    """How a recording's colour range was chosen, for the user."""
    if color_range == "auto":
        return "each frame its own colour range"
    if color_range == "first":
        return "the first frame's colour range"
    if color_range in (None, "follow"):
        return ("a colour range that follows the data (it takes in every frame at once and "
                "closes in by 15 % of the gap a frame)")
    return f"colour range {color_range[0]:g} .. {color_range[1]:g}"


class Renderer:
    """Draws a simulation's field as the viewer does, into RGB arrays of `size`.

    `color_range`: None or "auto" (the data's range in every picture), (lo, hi) (fixed),
    "first" (fixed to the range of the first picture drawn) or "follow" (FollowRange: every
    frame's data inside it, closing in on data that occupy less of it)."""

    def __init__(self, sim, field: str | None = None, size=SIZE, scale: ColorScale | None = None,
                 info: SimInfo | None = None, color_range=None):
        self.info = info or SimInfo.of(sim)
        self.field = field or self.info.default_field
        if self.field not in self.info.fields:
            raise ParameterError(f"{sim.model}: unknown field '{self.field}'; fields: "
                                 + ", ".join(self.info.fields))
        self.size = (int(size[0]) // 16 * 16, int(size[1]) // 16 * 16)
        self.scale = scale or _default_scale(self.info, self.field)
        self._fix_first = color_range == "first"
        self.follow = FollowRange() if color_range == "follow" else None
        self.limits = None  # the colour range of the last picture drawn
        self.seen = None    # (min, max) of the field over every picture drawn
        if color_range not in (None, "auto", "first", "follow"):
            lo, hi = color_range
            self.scale = ColorScale(self.scale.cmap, "fixed", float(lo), float(hi))
        try:
            self._gl_setup()
        except Exception as e:  # no OpenGL context: software fallback, said so
            self.canvas = None
            self.how = f"software rendering (no OpenGL context: {type(e).__name__}: {e})"

    def _gl_setup(self):
        from vispy import scene
        from .views import make_view
        from .views.base import BACKGROUND
        app, how = _gl_app()
        self.canvas = scene.SceneCanvas(size=self.size, show=False, app=app, bgcolor=BACKGROUND)
        self.view = make_view(self.canvas, self.info)
        self.canvas.render(alpha=False)  # proves a context works (raises otherwise)
        self.how = how + _renderer_name()

    def frame_of(self, sim) -> Frame:
        raw = sim.fields()
        names = self.view.needed(self.field) if self.canvas is not None else [self.field]
        # values beyond ±DRAW_LIMIT (a solution on its way to a divergence) are drawn at the
        # limit: colours saturate long before, and the views' float32 transforms stay regular
        return Frame({n: np.clip(raw[n], -DRAW_LIMIT, DRAW_LIMIT) for n in names}, sim.t,
                     sim.steps, 0)

    def render(self, sim) -> np.ndarray:
        frame = self.frame_of(sim)
        from .views.colors import finite_range
        got = finite_range(np.asarray(frame.fields[self.field], np.float64))
        if got is not None:
            self.seen = got if self.seen is None else (min(self.seen[0], got[0]),
                                                       max(self.seen[1], got[1]))
            if self.follow is not None:
                lo, hi = self.follow.update(*got)
                self.scale = ColorScale(self.scale.cmap, "fixed", lo, hi)
        if self.canvas is None:
            from .software import render_software
            self.limits = self.scale.limits(np.asarray(frame.fields[self.field], np.float64))
            if self._fix_first:
                self._fix(self.limits)
            return render_software(self.info, frame, self.field, self.scale, self.size)
        self.limits = self.view.set_frame(frame, self.field, self.scale)
        if self._fix_first and self.limits is not None:
            self._fix(self.limits)
        img = self.canvas.render(alpha=False)
        return np.ascontiguousarray(img[..., :3])

    def _fix(self, limits) -> None:
        self.scale = ColorScale(self.scale.cmap, "fixed", float(limits[0]), float(limits[1]))
        self._fix_first = False

    def close(self):
        if self.canvas is not None:
            canvas, self.canvas = self.canvas, None
            with contextlib.suppress(Exception):
                canvas.close()


def _renderer_name() -> str:
    try:
        from vispy.gloo import gl
        return f" on {gl.glGetParameter(gl.GL_RENDERER)}"
    except Exception:
        return ""


def _default_scale(info: SimInfo, field: str) -> ColorScale:
    """The window's default: viridis over the data's range."""
    return ColorScale()


def render_image(sim, path, field: str | None = None, color_range=None) -> str:
    """Write a PNG of `field` (default: the model's default field) as the viewer draws it.
    Returns how it was drawn (OpenGL or the software fallback, and why)."""
    check_image_path(path)
    r = Renderer(sim, field, color_range=color_range)
    try:
        write_png(path, r.render(sim))
    finally:
        r.close()
    return r.how


# ---- video ----------------------------------------------------------------------------------------
class VideoRecorder:
    """MP4 (H.264 by imageio-ffmpeg's ffmpeg) or GIF by extension, streamed (encoders.py): each
    frame goes to the encoder as it is added, so memory does not grow with the recording's length. `add(sim)`
    renders the field like `render_image` (headless); `add_image(rgb)` adds a picture already
    drawn (the window's canvas). Frames are cut about their centre to the first frame's size
    rounded down to a multiple of 16 (H.264's macroblock; no black bars), so the same run gives
    the same frames. The file is written under a
    temporary name in the same folder and renamed at `close()`; `abort()` removes it.

    `color_range` (headless recordings): "follow" (default: a range that takes in every
    frame's data at once and closes in on data that occupy less of it), "first" (the first
    frame's range, fixed for the whole video), "auto" (each frame its own range) or (lo, hi)."""

    def __init__(self, path, sim=None, field: str | None = None, fps: int = 25,
                 color_range="follow"):
        self.path = Path(path)
        check_video_path(self.path)
        suffix = self.path.suffix.lower()
        if not (isinstance(fps, int) and 1 <= fps <= 240):
            raise ParameterError(f"video frame rate {fps!r}; allowed: an integer in [1, 240]")
        self.fps = fps
        self.frames = 0
        self.shape = None
        self.writer = None
        self.renderer = Renderer(sim, field, color_range=color_range) if sim is not None else None
        self.how = self.renderer.how if self.renderer else "the window's canvas"
        folder = self.path.parent if str(self.path.parent) else Path(".")
        if not folder.is_dir():
            self._close_renderer()
            raise ParameterError(f"cannot write '{self.path}': folder '{folder}' does not exist")
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".part" + suffix,
                                       dir=folder)
        except BaseException:
            self._close_renderer()
            raise
        self.tmp = Path(tmp)
        try:
            os.fchmod(fd, vtk.file_mode(self.path))
            from .encoders import GifWriter, Mp4Writer
            if suffix == ".mp4":
                os.close(fd)
                self.writer = Mp4Writer(self.tmp, fps)
            else:
                self.writer = GifWriter(os.fdopen(fd, "wb"), fps)
        except BaseException:
            self.abort()
            raise

    def add(self, sim) -> None:
        if self.renderer is None:
            raise RuntimeError("this recorder takes images (add_image); it has no renderer")
        self.add_image(self.renderer.render(sim))

    def add_image(self, rgb: np.ndarray) -> None:
        rgb = np.ascontiguousarray(np.asarray(rgb)[..., :3], dtype=np.uint8)
        if self.shape is None:
            h, w = rgb.shape[:2]
            if h < 16 or w < 16:
                raise ParameterError(f"video frame of {w}x{h} pixels; allowed: at least 16x16")
            self.shape = (h // 16 * 16, w // 16 * 16)
        self.writer.append_data(fit_frame(rgb, self.shape))
        self.frames += 1

    def close(self) -> None:
        """Finish the file and move it into place (the previous file is replaced only now)."""
        if self.writer is None:
            self._close_renderer()
            return
        writer, self.writer = self.writer, None
        try:
            writer.close()
            with open(self.tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(self.tmp, self.path)
        except BaseException:
            _unlink(self.tmp)
            raise
        finally:
            self._close_renderer()

    def abort(self) -> None:
        """Stop without writing: the temporary file goes, the previous file stays."""
        writer, self.writer = self.writer, None
        if writer is not None:
            with contextlib.suppress(Exception):
                getattr(writer, "kill", writer.close)()
        _unlink(self.tmp)
        self._close_renderer()

    def _close_renderer(self) -> None:
        if self.renderer is not None:
            self.renderer.close()


def fit_frame(rgb: np.ndarray, shape) -> np.ndarray:
    """`rgb` cut to `shape` (h, w) about its centre (a 754x739 canvas gives its central 752x736:
    never a black bar); a smaller picture (the window shrank while recording) is centred on
    its own corner colour, the canvas background."""
    h, w = shape
    H, W = rgb.shape[:2]
    top, left = max(0, (H - h) // 2), max(0, (W - w) // 2)
    cut = rgb[top:top + h, left:left + w]
    if cut.shape[:2] == (h, w):
        return np.ascontiguousarray(cut)
    out = np.empty((h, w, 3), np.uint8)
    out[:] = rgb[0, 0]
    y, x = (h - cut.shape[0]) // 2, (w - cut.shape[1]) // 2
    out[y:y + cut.shape[0], x:x + cut.shape[1]] = cut
    return out


def _unlink(path) -> None:
    with contextlib.suppress(OSError, TypeError):
        os.unlink(path)
