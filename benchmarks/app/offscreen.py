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
    from pdestudio.app.views import meshvisual
    from pdestudio.app.views.partial import keep_pixels
    # the benchmarks measure the steady state: a mesh's cell raster (made on a worker thread in
    # the window, a second for a million cells) is made before its first coarse frame
    meshvisual.RASTER_WAIT = True
    app = vispy.app.Application(os.environ.get("VISPY_APP_BACKEND", "egl"))
    canvas = scene.SceneCanvas(size=size, show=False, app=app, bgcolor=BACKGROUND)
    keep_pixels(canvas)  # an EGL pbuffer keeps its pixels between draws, as the window's does
    return canvas


def renderer_name() -> str:
    from vispy.gloo import gl
    try:
        return str(gl.glGetParameter(gl.GL_RENDERER))
    except Exception as e:  # noqa: BLE001  (a name only)
        return f"? ({e})"


class GpuTimer:
    """GPU time of the OpenGL work between `begin` and `end` (a GL_TIME_ELAPSED query, read
    after the frame finished): what the GPU itself spent drawing, apart from the Python that
    issued it. `ok` is False where the driver offers no timer query (then `ms` is None)."""

    TIME_ELAPSED, QUERY_RESULT = 0x88BF, 0x8866

    def __init__(self):
        import ctypes
        self.ms = None
        self.ok = False
        self._c = ctypes
        for name in ("libOpenGL.so.0", "libGL.so.1"):
            try:
                lib = ctypes.CDLL(name)
                self._gen, self._begin = lib.glGenQueries, lib.glBeginQuery
                self._end, self._get = lib.glEndQuery, lib.glGetQueryObjectui64v
                break
            except (OSError, AttributeError):
                continue
        else:
            return
        self._begin.argtypes = [ctypes.c_uint, ctypes.c_uint]
        self._end.argtypes = [ctypes.c_uint]
        self._get.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_uint64)]
        self._id = None
        self.ok = True

    def begin(self) -> None:
        if not self.ok:
            return
        if self._id is None:
            ids = (self._c.c_uint * 1)()
            self._gen(1, ids)
            self._id = ids[0]
            if not self._id:
                self.ok = False
                return
        self._begin(self.TIME_ELAPSED, self._id)

    def end(self) -> None:
        if self.ok and self._id:
            self._end(self.TIME_ELAPSED)
            ns = self._c.c_uint64(0)
            self._get(self._id, self.QUERY_RESULT, self._c.byref(ns))
            self.ms = ns.value / 1e6


def draw(canvas, timer: GpuTimer | None = None) -> None:
    """Draw the whole canvas now and wait until the GPU has finished it (`timer`: the GPU time
    of the draw is left in timer.ms)."""
    from vispy.gloo import gl
    canvas.set_current()
    if timer is not None:
        canvas.context.flush_commands()  # the frame's uploads: not part of the draw's GPU time
        timer.begin()
    canvas.events.draw(region=None)
    canvas.context.flush_commands()
    if timer is not None:
        timer.end()
    gl.glFinish()
