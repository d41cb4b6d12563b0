"""An offscreen OpenGL canvas for the app benchmarks (no Qt): VisPy on EGL, which is Mesa
llvmpipe on a CPU machine and the NVIDIA driver on the GPU machine (there, point
__EGL_VENDOR_LIBRARY_FILENAMES at NVIDIA's vendor file: docs/BENCHMARKS.md has the command)."""
from __future__ import annotations

import os

SIZE = (832, 640)  # the window's canvas


def offscreen_canvas(size=SIZE):
    import vispy.app
    from vispy import scene

    from pdestudio.app.views.base import BACKGROUND
    os.environ.setdefault("EGL_PLATFORM", "surfaceless")
    app = vispy.app.Application(os.environ.get("VISPY_APP_BACKEND", "egl"))
    return scene.SceneCanvas(size=size, show=False, app=app, bgcolor=BACKGROUND)


def renderer_name() -> str:
    from vispy.gloo import gl
    try:
        return str(gl.glGetParameter(gl.GL_RENDERER))
    except Exception as e:  # noqa: BLE001  (a name only)
        return f"? ({e})"


def draw(canvas) -> None:
    """Draw the whole canvas now and wait until the GPU has finished it."""
    from vispy.gloo import gl
    canvas.set_current()
    canvas.events.draw(region=None)
    gl.glFinish()
