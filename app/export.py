"""Exports (SPEC §5): PNG of a field as the viewer draws it, MP4/GIF recordings, field data as
.npz or .vtu (meshio; ParaView opens it).

Headless rendering (`pdestudio run --export-image/--export-video`, no display): the same VisPy
view as the window, on an offscreen canvas through EGL (Mesa llvmpipe works without a display).
If no OpenGL context can be had, a software rendering with the same colormap is used instead
(a flat image of the field, a line plot, or the mesh's triangles filled from above), and
`Renderer.how` says which one drew the picture.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from pdestudio.solvers import ParameterError

from .frames import Frame, SimInfo
from .views.colors import ColorScale

SIZE = (960, 720)  # divisible by 16 (libx264)
VIDEO_SUFFIXES = (".mp4", ".gif")


# ---- field data ------------------------------------------------------------------------------
def write_data(sim, path) -> None:
    """Write every field of `sim` with its coordinates: .npz (arrays + metadata) or .vtu."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".npz", ".vtu"):
        raise ParameterError(f"data file '{path}' has type '{suffix}'; allowed: .npz, .vtu")
    fields = sim.fields()
    info = SimInfo.of(sim)
    if suffix == ".npz":
        mesh = sim.mesh
        coords = {}
        for name in ("x", "y", "points", "cells"):
            if hasattr(mesh, name):
                coords[f"mesh/{name}"] = np.asarray(getattr(mesh, name))
        meta = {"model": sim.model, "scenario": sim.scenario_name, "t": sim.t,
                "steps": sim.steps, "dtype": sim.dtype, "params": dict(sim.params),
                "locations": {k: v["location"] for k, v in info.fields.items()},
                "units": {k: v["unit"] for k, v in info.fields.items()}}
        with open(path, "wb") as f:
            np.savez(f, __meta__=np.array(json.dumps(meta)), **fields, **coords)
        return
    import meshio
    points, cells, point_data, cell_data = vtu_arrays(info, fields)
    m = meshio.Mesh(points, cells, point_data=point_data,
                    cell_data={k: [v] for k, v in cell_data.items()},
                    field_data={})
    m.field_data = {}
    meshio.write(str(path), m, file_format="vtu")


def _edges(c: np.ndarray) -> np.ndarray:
    """Cell corners from cell centres (midpoints, ends extrapolated)."""
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])


def vtu_arrays(info: SimInfo, fields: dict):
    """(points, cells, point_data, cell_data) for meshio. Grids become quads (lines in 1D);
    cell-located fields are cell data on the grid of cell corners when every field is
    cell-located, otherwise all grid fields are point data at the coordinates given."""
    kind = info.kind
    loc = {k: info.fields[k]["location"] for k in fields}
    if kind == "triangles":
        pts = np.asarray(info.mesh.points, dtype=np.float64)
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        cells = [("triangle", np.asarray(info.mesh.cells, dtype=np.int64))]
        pd = {k: v for k, v in fields.items() if loc[k] != "cell" and len(v) == len(pts)}
        cd = {k: v for k, v in fields.items() if k not in pd}
        return pts, cells, pd, cd
    all_cells = all(v == "cell" for v in loc.values())
    x = np.asarray(info.mesh.x, dtype=np.float64)
    if kind == "grid1d":
        xs = _edges(x) if all_cells else x
        pts = np.column_stack([xs, np.zeros_like(xs), np.zeros_like(xs)])
        n = len(xs)
        cells = [("line", np.column_stack([np.arange(n - 1), np.arange(1, n)]))]
        data = {k: np.asarray(v, dtype=np.float64) for k, v in fields.items()}
        return (pts, cells, {}, data) if all_cells else (pts, cells, data, {})
    y = np.asarray(info.mesh.y, dtype=np.float64)
    xs, ys = (_edges(x), _edges(y)) if all_cells else (x, y)
    X, Y = np.meshgrid(xs, ys)  # (ny, nx), x along the last axis like the fields
    pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    nx = len(xs)
    j, i = np.meshgrid(np.arange(len(ys) - 1), np.arange(nx - 1), indexing="ij")
    a = (j * nx + i).ravel()
    quads = np.column_stack([a, a + 1, a + 1 + nx, a + nx])
    data = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in fields.items()}
    return (pts, [("quad", quads)], {}, data) if all_cells else \
        (pts, [("quad", quads)], data, {})


# ---- rendering ----------------------------------------------------------------------------------
def write_png(path, rgb: np.ndarray) -> None:
    import imageio.v3 as iio
    iio.imwrite(str(path), np.ascontiguousarray(rgb[..., :3]))


def _gl_app():
    """A VisPy app that can render offscreen: the running Qt app in the window, else EGL
    (surfaceless Mesa works without a display). Raises RuntimeError when there is none."""
    import vispy.app
    try:
        from PySide6.QtWidgets import QApplication
        if QApplication.instance() is not None:
            return vispy.app.Application("pyside6"), "VisPy/OpenGL (Qt)"
    except ImportError:
        pass
    os.environ.setdefault("EGL_PLATFORM", "surfaceless")
    return vispy.app.Application("egl"), "VisPy/OpenGL (EGL, offscreen)"


class Renderer:
    """Draws a simulation's field as the viewer does, into RGB arrays of `size`."""

    def __init__(self, sim, field: str | None = None, size=SIZE, scale: ColorScale | None = None,
                 info: SimInfo | None = None):
        self.info = info or SimInfo.of(sim)
        self.field = field or self.info.default_field
        if self.field not in self.info.fields:
            raise ParameterError(f"{sim.model}: unknown field '{self.field}'; fields: "
                                 + ", ".join(self.info.fields))
        self.size = (int(size[0]) // 16 * 16, int(size[1]) // 16 * 16)
        self.scale = scale or _default_scale(self.info, self.field)
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
        return Frame({n: raw[n] for n in names}, sim.t, sim.steps, 0)

    def render(self, sim) -> np.ndarray:
        frame = self.frame_of(sim)
        if self.canvas is None:
            from .software import render_software
            return render_software(self.info, frame, self.field, self.scale, self.size)
        self.view.set_frame(frame, self.field, self.scale)
        img = self.canvas.render(alpha=False)
        return np.ascontiguousarray(img[..., :3])

    def close(self):
        if self.canvas is not None:
            self.canvas.close()
            self.canvas = None


def _renderer_name() -> str:
    try:
        from vispy.gloo import gl
        return f" on {gl.glGetParameter(gl.GL_RENDERER)}"
    except Exception:
        return ""


def _default_scale(info: SimInfo, field: str) -> ColorScale:
    """The window's default: viridis over the data's range."""
    return ColorScale()


def render_image(sim, path, field: str | None = None) -> str:
    """Write a PNG of `field` (default: the model's default field) as the viewer draws it.
    Returns how it was drawn (OpenGL or the software fallback, and why)."""
    r = Renderer(sim, field)
    try:
        write_png(path, r.render(sim))
    finally:
        r.close()
    return r.how


# ---- video ----------------------------------------------------------------------------------------
class VideoRecorder:
    """MP4 (libx264 via imageio-ffmpeg) or GIF by extension. `add(sim)` renders the field like
    `render_image` (headless); `add_image(rgb)` adds a picture already drawn (the window's
    canvas). Frames are padded to the first frame's size rounded up to a multiple of 16, so
    the same run gives the same frames."""

    def __init__(self, path, sim=None, field: str | None = None, fps: int = 25):
        self.path = Path(path)
        suffix = self.path.suffix.lower()
        if suffix not in VIDEO_SUFFIXES:
            raise ParameterError(f"video file '{path}' has type '{suffix}'; allowed: .mp4, .gif")
        if not (isinstance(fps, int) and 1 <= fps <= 240):
            raise ParameterError(f"video frame rate {fps!r}; allowed: an integer in [1, 240]")
        self.fps = fps
        self.frames = 0
        self.shape = None
        self.renderer = Renderer(sim, field) if sim is not None else None
        self.how = self.renderer.how if self.renderer else "the window's canvas"
        import imageio.v2 as iio2
        if suffix == ".mp4":
            self.writer = iio2.get_writer(str(self.path), format="FFMPEG", fps=fps,
                                          codec="libx264", quality=7, macro_block_size=16,
                                          pixelformat="yuv420p",
                                          output_params=["-threads", "1"], ffmpeg_log_level="error")
        else:
            self.writer = iio2.get_writer(str(self.path), format="GIF", duration=1000 / fps,
                                          loop=0)

    def add(self, sim) -> None:
        if self.renderer is None:
            raise RuntimeError("this recorder takes images (add_image); it has no renderer")
        self.add_image(self.renderer.render(sim))

    def add_image(self, rgb: np.ndarray) -> None:
        rgb = np.ascontiguousarray(np.asarray(rgb)[..., :3], dtype=np.uint8)
        if self.shape is None:
            h, w = rgb.shape[:2]
            self.shape = (-(-h // 16) * 16, -(-w // 16) * 16)
        out = np.zeros(self.shape + (3,), np.uint8)
        h, w = min(rgb.shape[0], self.shape[0]), min(rgb.shape[1], self.shape[1])
        out[:h, :w] = rgb[:h, :w]
        self.writer.append_data(out)
        self.frames += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.renderer is not None:
            self.renderer.close()
