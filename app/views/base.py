"""The base of every view: a grid of VisPy widgets on a SceneCanvas with a title line and a
colour bar, one `set_frame` handler and a camera that can be reset."""
from __future__ import annotations

import numpy as np
from vispy import scene

from .colors import ColorScale

BACKGROUND = (0.11, 0.12, 0.14, 1.0)
TEXT = (0.92, 0.92, 0.92, 1.0)


class View:
    """Subclasses build their visuals in `__init__` and update them in `set_frame`."""

    def __init__(self, canvas: scene.SceneCanvas, info, colorbar: bool = True):
        self.canvas = canvas
        self.info = info
        self.grid = canvas.central_widget.add_grid(margin=6, spacing=4)
        self.title = scene.Label("", color=TEXT, font_size=9)
        self.title.height_max = 26
        self.grid.add_widget(self.title, row=0, col=0, col_span=3)
        self.colorbar = None
        self._colorbar_wanted = colorbar
        self._cbar_cmap = None

    # -- helpers --------------------------------------------------------------------------
    def _label(self, field: str) -> str:
        unit = self.info.fields[field].get("unit") or ""
        return f"{field} [{unit}]" if unit else field

    def _set_title(self, field: str, frame) -> None:
        i = self.info
        self.title.text = (f"{i.model} / {i.scenario}: {self._label(field)}   "
                           f"t = {frame.t:.6g}   step {frame.steps}")

    def _update_colorbar(self, scale: ColorScale, limits, field: str, row=1, col=2,
                         row_span=1) -> None:
        if not self._colorbar_wanted:
            return
        if self.colorbar is None or self._cbar_cmap != scale.cmap:
            if self.colorbar is not None:
                self.grid.remove_widget(self.colorbar)
            self.colorbar = scene.ColorBarWidget(cmap=scale.cmap, orientation="right",
                                                 label=self._label(field), label_color=TEXT,
                                                 clim=limits, border_width=0)
            self.colorbar.width_max = 150
            self.colorbar.width_min = 150
            self.grid.add_widget(self.colorbar, row=row, col=col, row_span=row_span)
            self._cbar_cmap = scale.cmap
        self.colorbar.clim = (f"{limits[0]:.3g}", f"{limits[1]:.3g}")
        self.colorbar.label.text = self._label(field)

    # -- interface ------------------------------------------------------------------------
    def needed(self, field: str) -> list[str]:
        """Fields this view needs to draw `field` (the worker copies only these)."""
        return [field]

    def set_frame(self, frame, field: str, scale: ColorScale) -> tuple[float, float]:
        raise NotImplementedError

    def reset_camera(self) -> None:
        raise NotImplementedError

    def remove(self) -> None:
        self.canvas.central_widget.remove_widget(self.grid)


def as_float32(a) -> np.ndarray:
    """A float32 copy (views never keep a reference to a frame's buffers)."""
    return np.array(a, dtype=np.float32, copy=True)
