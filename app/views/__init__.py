"""VisPy views, chosen by mesh kind (never by model name): one small adapter per kind of data.

    grid1d     -> LineView      line plot + growing space–time image
    grid2d     -> SurfaceView   lit height surface(s) from the `surfaces` hint, or ImageView (flat)
    triangles  -> TriMeshView   lit coloured 3D mesh (vertex or cell colours), heights if planar

Every view draws from float textures holding the fields (textures.py) with its own shaders
(visuals.py, meshvisual.py): a frame uploads only the fields' values, from host memory or, on
the CUDA–OpenGL interop path, from device memory without a host copy (interop.py).
"""
from __future__ import annotations

from .colors import COLORMAPS, RANGE_MODES, ColorScale  # noqa: F401  (re-exported)

__all__ = ["COLORMAPS", "RANGE_MODES", "ColorScale", "make_view", "view_modes"]

VIEW_MODES = {"grid1d": ("line",), "grid2d": ("surface", "image"), "triangles": ("mesh",)}


def view_modes(kind: str) -> tuple[str, ...]:
    return VIEW_MODES.get(kind, ("line",))


def make_view(canvas, info, mode: str | None = None):
    """The view for `info`'s mesh kind (`mode` picks among view_modes(kind))."""
    from . import fasttext
    fasttext.install()  # labels skip unchanged work before each draw
    kind = info.kind
    modes = view_modes(kind)
    mode = mode if mode in modes else modes[0]
    if kind == "grid2d":
        from .surface import ImageView, SurfaceView
        return (ImageView if mode == "image" else SurfaceView)(canvas, info)
    if kind == "triangles":
        from .trimesh import TriMeshView
        return TriMeshView(canvas, info)
    from .line import LineView
    return LineView(canvas, info)
