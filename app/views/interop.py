"""CUDA–OpenGL interop: CuPy arrays copied into the views' float textures on the GPU.

When the solver runs on CuPy and the OpenGL context of the canvas is on the same GPU, a frame's
fields go device → GL texture without a host round trip: each texture is registered with CUDA
once (cuGraphicsGLRegisterImage), and per frame the GUI thread (which owns the GL context)

  1. makes its copy stream wait for the frame's `ready` event (recorded by the solver thread
     after its device snapshot: a GPU-side wait, the GUI thread never waits on solver kernels),
  2. maps the frame's textures (cuGraphicsMapResources: GL work issued before is finished first),
  3. copies each array into its texture's CUDA array (cuMemcpy2DAsync, device to array),
  4. unmaps them (GL commands issued after see the data) and records the `consumed` event, after
     which the solver thread may overwrite the snapshot (its stream waits on that event).

The calls go through the CUDA driver API (libcuda, loaded with ctypes: the functions are part of
every NVIDIA driver and work on the primary context CuPy uses), so no CuPy version needs to wrap
them. Anything that fails (no NVIDIA GL driver, GL on another GPU, a call refused) makes `probe`
answer None with the reason, and the app uses the pinned-copy path instead; `path_reason` says
why in the log and the profiler.
"""
from __future__ import annotations

import ctypes
import os
import weakref

GL_TEXTURE_2D = 0x0DE1
CU_GL_DEVICE_LIST_ALL = 1
CU_MEMORYTYPE_DEVICE = 2
CU_MEMORYTYPE_ARRAY = 3
REGISTER_FLAGS_NONE = 0  # read and write: the space–time image writes one row at a time


class InteropError(RuntimeError):
    pass


class CUDA_MEMCPY2D(ctypes.Structure):
    """cuda.h's CUDA_MEMCPY2D (128 bytes on 64-bit Linux; checked in the tests)."""
    _fields_ = [("srcXInBytes", ctypes.c_size_t), ("srcY", ctypes.c_size_t),
                ("srcMemoryType", ctypes.c_int), ("srcHost", ctypes.c_void_p),
                ("srcDevice", ctypes.c_uint64), ("srcArray", ctypes.c_void_p),
                ("srcPitch", ctypes.c_size_t),
                ("dstXInBytes", ctypes.c_size_t), ("dstY", ctypes.c_size_t),
                ("dstMemoryType", ctypes.c_int), ("dstHost", ctypes.c_void_p),
                ("dstDevice", ctypes.c_uint64), ("dstArray", ctypes.c_void_p),
                ("dstPitch", ctypes.c_size_t),
                ("WidthInBytes", ctypes.c_size_t), ("Height", ctypes.c_size_t)]


# the exported names (cuda.h maps cuMemcpy2DAsync to its _v2 ABI, cudaGL.h cuGLGetDevices too)
_SIGNATURES = {
    "cuGetErrorString": ("cuGetErrorString", [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    "cuCtxGetCurrent": ("cuCtxGetCurrent", [ctypes.POINTER(ctypes.c_void_p)]),
    "cuGLGetDevices": ("cuGLGetDevices_v2", [ctypes.POINTER(ctypes.c_uint),
                                             ctypes.POINTER(ctypes.c_int), ctypes.c_uint,
                                             ctypes.c_int]),
    "cuGraphicsGLRegisterImage": ("cuGraphicsGLRegisterImage",
                                  [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_uint,
                                   ctypes.c_uint]),
    "cuGraphicsUnregisterResource": ("cuGraphicsUnregisterResource", [ctypes.c_void_p]),
    "cuGraphicsMapResources": ("cuGraphicsMapResources",
                               [ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]),
    "cuGraphicsUnmapResources": ("cuGraphicsUnmapResources",
                                 [ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.c_void_p]),
    "cuGraphicsSubResourceGetMappedArray": ("cuGraphicsSubResourceGetMappedArray",
                                            [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                             ctypes.c_uint, ctypes.c_uint]),
    "cuMemcpy2DAsync": ("cuMemcpy2DAsync_v2", [ctypes.POINTER(CUDA_MEMCPY2D), ctypes.c_void_p]),
}
_DRIVER = None


def driver():
    """The driver functions (ctypes), loaded once; InteropError if libcuda is missing."""
    global _DRIVER
    if _DRIVER is None:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise InteropError(f"no CUDA driver library (libcuda.so.1: {e})") from None
        fns = {}
        for key, (name, args) in _SIGNATURES.items():
            try:
                f = getattr(lib, name)
            except AttributeError:
                raise InteropError(f"the CUDA driver has no {name}") from None
            f.argtypes, f.restype = args, ctypes.c_int
            fns[key] = f
        _DRIVER = fns
    return _DRIVER


def check(status: int, what: str) -> None:
    if status != 0:
        msg = ctypes.c_char_p()
        try:
            driver()["cuGetErrorString"](status, ctypes.byref(msg))
            text = msg.value.decode() if msg.value else ""
        except Exception:  # noqa: BLE001  (the message only)
            text = ""
        raise InteropError(f"{what} failed: CUDA error {status} {text}".rstrip())


def gl_handle(canvas, texture) -> int:
    """The OpenGL name of a gloo texture (its GLIR commands flushed first)."""
    canvas.context.glir.associate(texture.glir)
    canvas.context.flush_commands()
    obj = canvas.context.shared.parser.get_object(texture.id)
    if obj is None or getattr(obj, "handle", -1) in (-1, None, 0):
        raise InteropError("the texture has no OpenGL object yet")
    return int(obj.handle)


_SESSIONS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
FAILED = ""  # why interop failed at run time (the solver thread then hands over pinned copies)


def transfer_path(canvas, backend: str) -> tuple[str, str]:
    """The hand-over path for fields of `backend` drawn on `canvas`, and why: 'interop' where
    CUDA–OpenGL interop works on this canvas's context, else 'pinned' (CuPy) or 'host'."""
    s, why = probe(canvas, backend)
    if s is not None:
        return "interop", why
    return ("pinned" if backend == "cupy" else "host"), why


def session(canvas):
    """The interop session of this canvas, if `probe` opened one."""
    return _SESSIONS.get(canvas)


def probe(canvas, backend: str):
    """(GLInterop or None, reason): whether fields of `backend` can go device → GL texture on
    this canvas's OpenGL context, and why not. Opens (and keeps) the session when they can."""
    if backend != "cupy":
        return None, f"{backend} backend: the fields are in host memory"
    if os.environ.get("PDESTUDIO_INTEROP", "1") == "0":
        return None, "CUDA–OpenGL interop disabled (PDESTUDIO_INTEROP=0)"
    old = _SESSIONS.get(canvas)
    if old is not None and old.broken is None:
        return old, old.description
    if old is not None:
        return None, old.broken
    from .textures import gl_ready
    if not gl_ready(canvas):
        return None, "no CUDA–OpenGL interop: the canvas has no OpenGL context yet"
    try:
        s = GLInterop(canvas)
        s.self_test()
    except Exception as e:  # noqa: BLE001  (any failure: the pinned path, with the reason)
        return None, f"no CUDA–OpenGL interop: {e}"
    _SESSIONS[canvas] = s
    return s, s.description


class GLInterop:
    """Copies of CuPy arrays into gloo float textures of one canvas, on one CUDA stream."""

    def __init__(self, canvas):
        import cupy as cp
        self.cp, self.canvas = cp, canvas
        self.device = cp.cuda.runtime.getDevice()
        self.fn = driver()
        canvas.set_current()
        self._cuda_current()
        count = ctypes.c_uint(0)
        devs = (ctypes.c_int * 8)()
        st = self.fn["cuGLGetDevices"](ctypes.byref(count), devs, 8, CU_GL_DEVICE_LIST_ALL)
        renderer = _renderer()
        # an error here (some drivers answer so for EGL contexts) leaves the answer to the
        # registration in self_test; a clean answer without the solver's device is final
        if st == 0 and count.value == 0:
            raise InteropError(f"the OpenGL context ({renderer}) is not on a CUDA device")
        gl_devs = [devs[i] for i in range(count.value)] if st == 0 else []
        if st == 0 and self.device not in gl_devs:
            raise InteropError(f"OpenGL ({renderer}) runs on CUDA device {gl_devs}, the solver "
                               f"on device {self.device}")
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.resources: dict = {}  # texture id -> (handle, shape, CUgraphicsResource)
        self.keep: list = []       # (event, arrays) alive until the copies reading them ran
        self.timings: list = []    # (start, end) events of recent copies
        self.last_copy_ms = None
        self.broken = None
        name = cp.cuda.runtime.getDeviceProperties(self.device)["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        self.description = f"CUDA–OpenGL interop on device {self.device} ({name})"

    def _cuda_current(self) -> None:
        """The CUDA context the solver uses, current on this (the GUI) thread."""
        self.cp.cuda.Device(self.device).use()
        self.cp.cuda.runtime.memGetInfo()  # the runtime makes its primary context current
        ctx = ctypes.c_void_p()
        check(self.fn["cuCtxGetCurrent"](ctypes.byref(ctx)), "cuCtxGetCurrent")
        if not ctx.value:
            raise InteropError("no CUDA context on the GUI thread")

    def self_test(self) -> None:
        """One register/map/copy/unmap/unregister on a small texture (raises on failure)."""
        from vispy import gloo
        cp = self.cp
        tex = gloo.Texture2D(shape=(2, 4, 1), format="red", internalformat="r32f")
        try:
            self.copy([(tex, cp.arange(8, dtype=cp.float32).reshape(2, 4), 0)], None)
            self.stream.synchronize()
        finally:
            self.forget([tex])
            tex.delete()

    def _resource(self, texture):
        handle = gl_handle(self.canvas, texture)
        shape = tuple(texture.shape[:2])
        got = self.resources.get(texture.id)
        if got is not None and got[:2] == (handle, shape):
            return got[2]
        if got is not None:
            check(self.fn["cuGraphicsUnregisterResource"](got[2]), "cuGraphicsUnregisterResource")
        res = ctypes.c_void_p()
        check(self.fn["cuGraphicsGLRegisterImage"](ctypes.byref(res), handle, GL_TEXTURE_2D,
                                                   REGISTER_FLAGS_NONE),
              "cuGraphicsGLRegisterImage")
        self.resources[texture.id] = (handle, shape, res)
        return res

    def forget(self, textures) -> None:
        """Unregister textures (before they are deleted: a view being removed)."""
        for t in textures:
            got = self.resources.pop(t.id, None)
            if got is not None:
                try:
                    self.canvas.set_current()
                    self._cuda_current()
                    self.fn["cuGraphicsUnregisterResource"](got[2])
                except Exception:  # noqa: BLE001  (going away anyway)
                    pass

    def copy(self, ops, ready):
        """Copy device arrays into textures: ops are (gloo texture, contiguous float32 CuPy
        array of rows × texture width or fewer, first row). Waits (on the GPU) for `ready`;
        returns the event after which the arrays are no longer read."""
        cp = self.cp
        self.canvas.set_current()
        self._cuda_current()
        resources = [self._resource(t) for t, _, _ in ops]
        uniq = list(dict.fromkeys(r.value for r in resources))
        arr_t = ctypes.c_void_p * len(uniq)
        handles = arr_t(*uniq)
        s = self.stream
        if ready is not None:
            s.wait_event(ready)
        start = cp.cuda.Event(disable_timing=False)
        start.record(s)
        check(self.fn["cuGraphicsMapResources"](len(uniq), handles, s.ptr),
              "cuGraphicsMapResources")
        try:
            for (tex, a, row0), res in zip(ops, resources):
                self._copy_one(res, tex, a, row0)
        finally:
            check(self.fn["cuGraphicsUnmapResources"](len(uniq), handles, s.ptr),
                  "cuGraphicsUnmapResources")
        end = cp.cuda.Event(disable_timing=False)
        end.record(s)
        self._account(end, [a for _, a, _ in ops], start)
        return end

    def _copy_one(self, res, tex, a, row0) -> None:
        if a.dtype != self.cp.float32 or not a.flags.c_contiguous:
            raise InteropError("interop copies take contiguous float32 arrays")
        arr = ctypes.c_void_p()
        check(self.fn["cuGraphicsSubResourceGetMappedArray"](ctypes.byref(arr), res, 0, 0),
              "cuGraphicsSubResourceGetMappedArray")
        width = int(tex.shape[1])
        n = int(a.size)
        rows, tail = (a.shape[0], 0) if a.ndim == 2 else divmod(n, width)
        row_bytes = (a.shape[1] if a.ndim == 2 else width) * 4
        if row0 + rows + (1 if tail else 0) > tex.shape[0] or row_bytes > width * 4:
            raise InteropError(f"array of shape {a.shape} does not fit texture {tex.shape[:2]}")
        base = int(a.data.ptr)
        if rows:
            self._memcpy(base, row_bytes, arr.value, row0, row_bytes, rows)
        if tail:
            self._memcpy(base + rows * row_bytes, tail * 4, arr.value, row0 + rows, tail * 4, 1)

    def _memcpy(self, src, pitch, dst_array, dst_row, width_bytes, height) -> None:
        p = CUDA_MEMCPY2D()
        p.srcMemoryType, p.srcDevice, p.srcPitch = CU_MEMORYTYPE_DEVICE, src, pitch
        p.dstMemoryType, p.dstArray, p.dstY = CU_MEMORYTYPE_ARRAY, dst_array, dst_row
        p.WidthInBytes, p.Height = width_bytes, height
        check(self.fn["cuMemcpy2DAsync"](ctypes.byref(p), self.stream.ptr), "cuMemcpy2DAsync")

    def _account(self, end, arrays, start) -> None:
        """Keep the arrays alive until the copies ran; time the copies that finished."""
        self.keep = [(e, keep) for e, keep in self.keep if not e.done] + [(end, arrays)]
        self.timings.append((start, end))
        while self.timings and self.timings[0][1].done:
            s0, e0 = self.timings.pop(0)
            self.last_copy_ms = self.cp.cuda.get_elapsed_time(s0, e0)


def _renderer() -> str:
    try:
        from vispy.gloo import gl
        return str(gl.glGetParameter(gl.GL_RENDERER))
    except Exception:  # noqa: BLE001  (a name only)
        return "unknown renderer"
