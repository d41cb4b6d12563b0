"""pdestudio in Jupyter (docs/NOTEBOOK.md): `pdestudio.show(obj)` returns a live widget.

    from pdestudio import solvers
    import pdestudio
    sim = solvers.create("gray-scott", vertices=4000)
    view = pdestudio.show(sim)   # LiveView: the window's views on a jupyter_rfb canvas
    view.run()

`obj` is a Simulation (a `LiveView`), an ensemble of `solvers.create_ensemble` or a
`pdestudio sweep` output folder (a `ThumbnailGrid`: thumbnails that update; a click opens the
member's LiveView below the grid). Needs the optional extra: pip install 'pdestudio[notebook]'.
No Qt: the drawing goes through an offscreen OpenGL context (canvas.py)."""
from __future__ import annotations

from pathlib import Path

__all__ = ["show"]


def show(obj, **options):
    """A live widget for `obj` (see the module docstring); `options` go to its class:
    LiveView(sim, size=(640, 480), field=None, cmap="viridis", mode=None, steps_per_frame=0,
    pace="smooth"),
    ThumbnailGrid(obj, size=128, every_s=0.5)."""
    try:
        import ipywidgets  # noqa: F401
        import jupyter_rfb  # noqa: F401
    except ImportError as e:
        raise ImportError(f"pdestudio.show needs the notebook extra ({e.name} is missing): "
                          "pip install 'pdestudio[notebook]'") from None
    from pdestudio import solvers
    if isinstance(obj, solvers.Simulation):
        from .live import LiveView
        return LiveView(obj, **options)
    if isinstance(obj, (str, Path)) or hasattr(obj, "member"):
        from .grid import ThumbnailGrid
        return ThumbnailGrid(obj, **options)
    raise solvers.ParameterError(
        f"pdestudio.show: cannot show {type(obj).__name__}; allowed: a Simulation "
        "(solvers.create/load), an ensemble (solvers.create_ensemble) or a sweep folder")
