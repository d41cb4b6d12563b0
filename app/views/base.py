"""The base of every view: a grid of VisPy widgets on a SceneCanvas with a title line and a
colour bar, one `set_frame` handler, a camera that can be reset, and the upload of a frame's
fields into the view's textures (textures.py: host arrays through gloo, device arrays through
CUDA–OpenGL interop)."""
from __future__ import annotations

import time
import weakref

import numpy as np
from vispy import scene
from vispy.visuals.transforms import STTransform

from .colors import ColorScale, end_label, finite_range, lut, tick_labels, ticks
from .textures import FieldTexture, Upload, is_device
from .visuals import lut_texture

# (28, 31, 36) in 8 bits, given as (k + 1/4)/255: every conversion to 8 bits (rounding in a full
# glClear, truncation in some drivers' scissored clears: views/partial.py) gives the same k
BACKGROUND = (28.25 / 255, 31.25 / 255, 36.25 / 255, 1.0)
TEXT = (0.92, 0.92, 0.92, 1.0)
COLORBAR_WIDTH = 118
_FONTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def fonts(canvas):
    """One glyph atlas per canvas for the views' own labels (VisPy gives every Text visual its
    own, and rendering the glyphs again took about a second a view on the CPU)."""
    from vispy.visuals.text.text import FontManager
    if canvas not in _FONTS:
        _FONTS[canvas] = FontManager(method="cpu")
    return _FONTS[canvas]


def _kernel_on_gpu(font) -> None:
    """VisPy's Text visual assigns its font's filter kernel (a 16×1024 RGBA float array) to its
    program before every draw, which uploads those 256 KiB again each time: six labels cost
    1.5 MiB of texture uploads a frame (4.6 ms of llvmpipe's 7.4 ms draw here). Made a texture
    once per font, the assignment only binds it."""
    from vispy.gloo import Texture2D
    from vispy.gloo.texture import BaseTexture
    if not isinstance(font._kernel, BaseTexture):
        font._kernel = Texture2D(font._kernel)


def set_text(visual, text) -> bool:
    """Give a Text visual (or Label) new text only when it changed. VisPy lays out every glyph
    of every string again after each assignment (in Python: about 1 ms a string), and assigning
    the same labels every frame was most of a frame's draw time (issue 15: the 9–12 ms floor)."""
    if visual.text == text:
        return False
    visual.text = text
    return True


def share_fonts(node, fm) -> None:
    """Point every Text visual under `node` (labels, axes) at the canvas's glyph atlas."""
    from vispy.visuals.text.text import TextVisual
    stack = [node]
    while stack:
        n = stack.pop()
        for v in [n] + list(getattr(n, "_subvisuals", [])):
            if isinstance(v, TextVisual):
                if v._font_manager is not fm:
                    v._font_manager = fm
                    v._update_font()
                _kernel_on_gpu(v._font)
        stack.extend(getattr(n, "children", []))
        stack.extend(v for v in getattr(n, "_subvisuals", []) if hasattr(v, "_subvisuals"))


class ColorBar(scene.Widget):
    """A vertical colour bar: the colour map, ticks at 'nice' values with labels just long
    enough to tell them apart (`colors.tick_labels`, compact exponents such as 5.88e27), the
    two ends labelled where they are not next to a tick, and the field's name on top."""

    TOP, BOTTOM, BAR = 30, 12, 16

    def __init__(self, font_manager=None):
        super().__init__()
        self.unfreeze()
        self.width_min = self.width_max = COLORBAR_WIDTH
        self.image = scene.visuals.Image(lut("viridis")[:, None, :], parent=self,
                                         interpolation="nearest")
        self.image.transform = STTransform()
        self.lines = scene.visuals.Line(parent=self, color=TEXT, connect="segments",
                                        antialias=False)
        self.labels = scene.visuals.Text(parent=self, color=TEXT, font_size=7,
                                         anchor_x="left", anchor_y="center",
                                         font_manager=font_manager)
        # the ends' labels change with every auto-ranged frame, the ticks' rarely: two visuals,
        # so a new range lays out two short strings, not every label again
        self.ends = scene.visuals.Text(parent=self, color=TEXT, font_size=7,
                                       anchor_x="left", anchor_y="center",
                                       font_manager=font_manager)
        self.heading = scene.visuals.Text("", parent=self, color=TEXT, font_size=8,
                                          anchor_x="left", anchor_y="center",
                                          font_manager=font_manager)
        self.state = ("viridis", 0.0, 1.0, "")
        self._cmap = "viridis"
        self._laid_out = False
        self.changed = True  # since it was last drawn (views/partial.py redraws it only then)
        self.events.resize.connect(lambda e: self._layout())
        self.freeze()

    def set(self, cmap: str, lo: float, hi: float, label: str) -> None:
        if cmap != self._cmap:
            self.image.set_data(lut(cmap)[:, None, :])
            self._cmap = cmap
            self.changed = True
        state = (cmap, float(lo), float(hi), label)
        if state != self.state or not self._laid_out:
            self.state = state
            self._layout()
            self.changed = True

    def tick_values(self) -> list[float]:
        _, lo, hi, _ = self.state
        return ticks(lo, hi, most=max(2, min(7, int(self._bar_height() / 40) + 1)))

    def _bar_height(self) -> float:
        return max(self.rect.height - self.TOP - self.BOTTOM, 10.0)

    def _layout(self) -> None:
        self._laid_out = True
        _, lo, hi, label = self.state
        h = self._bar_height()
        x0, x1, y1 = 6.0, 6.0 + self.BAR, self.TOP + h
        self.image.transform.scale = (self.BAR, -h / 256.0)
        self.image.transform.translate = (x0, y1)
        span = hi - lo if hi > lo else 1.0
        values = self.tick_values()
        texts = tick_labels(values)
        ys = [y1 - (v - lo) / span * h for v in values]
        ends, end_ys = [], []
        for end, y in ((hi, self.TOP), (lo, y1)):  # the ends, unless a tick is close by
            if all(abs(y - t) > 14 for t in ys):
                ends.append(end_label(end, texts))
                end_ys.append(y)
        seg = [[x0, self.TOP], [x1, self.TOP], [x1, self.TOP], [x1, y1], [x1, y1], [x0, y1],
               [x0, y1], [x0, self.TOP]]
        for y in ys + end_ys:
            seg += [[x1, y], [x1 + 4, y]]
        self.lines.set_data(pos=np.array(seg, np.float32))
        for visual, strings, at in ((self.labels, texts, ys), (self.ends, ends, end_ys)):
            visual.visible = bool(strings)
            if strings:
                set_text(visual, strings)
                visual.pos = np.array([[x1 + 7, y] for y in at], np.float32)
        set_text(self.heading, label)
        self.heading.pos = (4, self.TOP / 2)


def add_axis(grid, orientation: str, view, row: int, col: int) -> scene.AxisWidget:
    """An axis in `grid` linked to `view` that also follows its own moves: VisPy's AxisWidget
    updates its labels only when the view's transform changes, but the grid lays its widgets
    out at draw time, after the camera was set (a single picture then showed a stale range:
    the 1D export labelled [0, 1] as about [-0.04, 0.56])."""
    axis = scene.AxisWidget(orientation=orientation, text_color=TEXT, axis_color=TEXT,
                            tick_color=TEXT, axis_font_size=8, tick_font_size=7)
    # fixed sizes: with only a maximum the grid's solver may settle on any of several layouts
    # (which one depends on where Python put its objects), and the picture moved by a few
    # pixels from one view to the next (issue 15: the interop == pinned test failed so)
    if orientation in ("left", "right"):
        axis.width_min = axis.width_max = 60
    else:
        axis.height_min = axis.height_max = 30
    grid.add_widget(axis, row=row, col=col)
    axis.link_view(view)
    axis.events.resize.connect(axis._view_changed)
    axis.transform.changed.connect(axis._view_changed)
    return axis


class View:
    """Subclasses build their visuals in `__init__` and update them in `set_frame`."""

    def __init__(self, canvas: scene.SceneCanvas, info, colorbar: bool = True):
        self.canvas = canvas
        self.info = info
        self.grid = canvas.central_widget.add_grid(margin=6, spacing=4)
        self.title = scene.Label("", color=TEXT, font_size=9)
        self.title.height_min = self.title.height_max = 26  # fixed: see add_axis
        self.grid.add_widget(self.title, row=0, col=0, col_span=3)
        self.colorbar = None
        self._colorbar_wanted = colorbar
        self._fonts_shared = False
        self._luts: dict = {}
        self.textures: dict[str, FieldTexture] = {}
        self.upload_path = ""  # 'host' or 'interop': how the last frame reached the GPU
        self.upload_s = 0.0     # host time the last frame's upload took (the GUI thread's)
        self.limits = (0.0, 1.0)
        from . import partial
        partial.install(canvas, self)

    # -- helpers --------------------------------------------------------------------------
    def _label(self, field: str) -> str:
        unit = self.info.fields[field].get("unit") or ""
        return f"{field} [{unit}]" if unit else field

    def _set_title(self, field: str, frame, extra: str = "") -> None:
        i = self.info
        set_text(self.title, f"{i.model} / {i.scenario}: {self._label(field)}   "
                             f"t = {frame.t:.6g}   step {frame.steps}{extra}")

    def _update_colorbar(self, scale: ColorScale, limits, field: str, row=1, col=2,
                         row_span=1) -> None:
        if not self._colorbar_wanted:
            return
        if self.colorbar is None:
            self.colorbar = ColorBar(fonts(self.canvas))
            self.grid.add_widget(self.colorbar, row=row, col=col, row_span=row_span)
        self.colorbar.set(scale.cmap, limits[0], limits[1], self._label(field))
        if not self._fonts_shared:
            share_fonts(self.grid, fonts(self.canvas))
            self._fonts_shared = True

    def lut(self, cmap: str):
        """The colour map's texture (made once per map)."""
        if cmap not in self._luts:
            self._luts[cmap] = lut_texture(cmap)
        return self._luts[cmap]

    def texture(self, name: str, shape=None) -> FieldTexture:
        """The field's texture (made on first use, remade if the field's shape changed)."""
        shape = tuple(shape if shape is not None else self.info.shapes[name])
        ft = self.textures.get(name)
        if ft is None or ft.shape != shape:
            ft = self.textures[name] = FieldTexture(shape)
        return ft

    def upload(self, frame, names) -> dict:
        """Every field in `names` of the frame into its texture, now; returns their finite
        ranges (the frame's, or computed here for frames made without them)."""
        t0 = time.perf_counter()
        up = Upload(self.canvas, frame)
        for n in dict.fromkeys(names):
            v = frame.fields[n]
            up.field(self.texture(n, np.shape(v)), v)
        self.upload_path = up.finish() or self.upload_path
        self.upload_s = time.perf_counter() - t0
        return ranges_of(frame, names)

    # -- interface ------------------------------------------------------------------------
    def boxes(self) -> list:
        """The view boxes showing the field (redrawn with every frame)."""
        vb = getattr(self, "vb", None)
        return [vb] if vb is not None else []

    def live_regions(self) -> list:
        """The widgets a new frame changes (views/partial.py redraws only these when nothing
        else changed): the title, the colour bar and the view boxes."""
        return [self.title] + ([self.colorbar] if self.colorbar is not None else []) + \
            self.boxes()

    def needed(self, field: str) -> list[str]:
        """Fields this view needs to draw `field` (the worker copies only these)."""
        return [field]

    def set_frame(self, frame, field: str, scale: ColorScale) -> tuple[float, float]:
        raise NotImplementedError

    def _lod_key(self) -> tuple:
        """What a 3D view's geometry size on the screen depends on (its view box `vb` with a
        turntable camera: the grid surfaces and the meshes choose their level of detail by it):
        the camera, the view box's place and size, the canvas's pixels. (A render at another
        size than the canvas's, which no export makes, would keep the geometry chosen for the
        canvas.)"""
        c = self.vb.camera
        return (c.elevation, c.azimuth, tuple(c.center), c.distance, c.scale_factor, c.fov,
                tuple(self.vb.pos), tuple(self.vb.size), tuple(self.canvas.physical_size))

    def reset_camera(self) -> None:
        raise NotImplementedError

    def remove(self) -> None:
        from . import interop, partial
        partial.uninstall(self.canvas, self)
        s = interop.session(self.canvas)
        if s is not None:
            s.forget([t.texture for t in self.textures.values()])
        self.canvas.central_widget.remove_widget(self.grid)


def ranges_of(frame, names) -> dict:
    """name -> finite (min, max) or None: from the frame when it carries them, else computed
    (host arrays: two reductions; device arrays: on the device, then two numbers read)."""
    got = dict(frame.ranges or {})
    for n in names:
        if n in got:
            continue
        v = frame.fields[n]
        if is_device(v):
            import cupy as cp
            fin = cp.isfinite(v)
            lo = float(cp.where(fin, v, cp.inf).min()) if v.size else np.inf
            hi = float(cp.where(fin, v, -cp.inf).max()) if v.size else -np.inf
            got[n] = (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else None
        else:
            got[n] = finite_range(v)
    return got
