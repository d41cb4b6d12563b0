"""jupyter_rfb canvases for the app's views (app/views/): a VisPy `SceneCanvas` on VisPy's own
`jupyter_rfb` app backend (a remote frame buffer: the picture is rendered in the kernel, on its
GPU where there is one, and streamed to the browser as JPEG/PNG), so the notebook draws with the
window's code and no second renderer.

VisPy's backend gives every canvas a hidden window of the default GUI toolkit as its OpenGL
context (Qt here, which needs a display and would bring Qt into the kernel). A notebook kernel
often runs on a server without a display, so the context here is the offscreen one the headless
exports use (app/export.py: EGL, surfaceless Mesa on a CPU machine, the NVIDIA driver's EGL on
a GPU one, where the CUDA–OpenGL interop path of views/interop.py works too)."""
from __future__ import annotations

from ..export import _gl_app

SIZE = (640, 480)  # logical pixels of a live view's canvas (the browser may resize it)


class OffscreenGL:
    """The OpenGL context of one jupyter_rfb canvas: a hidden 1×1 canvas of the offscreen app
    (VisPy's backend makes it current before each draw and closes it with the widget).

    An EGL context is current in at most one thread at a time: made current in one thread, it
    cannot be made current in another until the first releases it (EGL_BAD_ACCESS, VisPy's
    "Could not make the context current"). jupyter_rfb may draw from more than one thread of
    the kernel, so the view releases the context after every draw (`release`)."""

    def __init__(self):
        import vispy.app
        app, self.how = _gl_app()
        self._canvas = vispy.app.Canvas(app=app, size=(1, 1), show=False)
        self.release()  # (VisPy's EGL canvas is made current where it is made)

    def make_current(self):
        self._canvas.set_current()
        return self

    def release(self) -> None:
        """Make no context current in this thread (another thread may then make it current)."""
        native = self._canvas.native
        if hasattr(native, "doneCurrent"):  # the Qt app (a kernel that runs the window's Qt)
            native.doneCurrent()
            return
        from vispy.app.backends import _egl
        from vispy.ext import egl
        egl.eglMakeCurrent(_egl._EGL_DISPLAY, egl.EGL_NO_SURFACE, egl.EGL_NO_SURFACE,
                           egl.EGL_NO_CONTEXT)

    def close(self) -> None:
        self._canvas.close()


def make_canvas(size=SIZE):
    """A SceneCanvas whose `native` is a jupyter_rfb widget drawn through `OffscreenGL`."""
    from vispy import scene
    from vispy.app.backends import _jupyter_rfb

    from ..views.base import BACKGROUND
    _jupyter_rfb.OffscreenContext = OffscreenGL  # the backend's context class, looked up per canvas
    canvas = scene.SceneCanvas(app="jupyter_rfb", size=tuple(int(s) for s in size),
                               bgcolor=BACKGROUND, keys=None, show=False)
    return canvas


def render(canvas, width: int | None = None, height: int | None = None):
    """One frame of `canvas` as the browser would get it (an (h, w, 4) uint8 array), drawn now:
    what jupyter_rfb calls when the browser is ready for a frame. The size, when given, is the
    canvas's size in the page (what the browser's first resize event says)."""
    rfb = canvas.native
    if width is not None:
        rfb.handle_event({"type": "resize", "width": width, "height": height, "ratio": 1.0})
    return rfb.get_frame()
