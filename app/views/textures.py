"""Float textures holding fields, and the per-frame upload into them.

A `FieldTexture` is one float32 (r32f) texture per field: a 2D grid field (ny, nx) as it is
(level of detail beyond MAX_TEXTURE texels a side: every s-th value, s the smallest stride that
fits), any other field packed row by row into PACK texels a row (a power of two, so the shaders'
index arithmetic is exact in float32). The views' vertex and fragment shaders sample them; only
the field's bytes go to the GPU each frame.

An `Upload` gathers one frame's uploads: host arrays go through gloo (`set_data`) and are
flushed to OpenGL before `finish` returns, so the frame's buffers can be handed back at once;
device arrays (CuPy, the interop path) are copied on the GPU by the canvas's interop session in
one map/unmap (views/interop.py). A device frame on a canvas without interop is read back once
(counted as a readback: that is the failure the counters exist to show).
"""
from __future__ import annotations

import weakref

import numpy as np
from vispy import gloo

from ..transfer import COUNTS
from . import interop

MAX_TEXTURE = 16384  # texels a side: the minimum GL 4.1+ guarantees (GL_MAX_TEXTURE_SIZE)
PACK = 4096          # texels a row of a packed 1D field


def is_device(a) -> bool:
    return hasattr(a, "__cuda_array_interface__")


def next_pow2(n: int) -> int:
    return 1 << max(0, int(n - 1).bit_length())


def float_texture(shape, interpolation: str = "nearest") -> gloo.Texture2D:
    return gloo.Texture2D(shape=tuple(shape) + (1,), format="red", internalformat="r32f",
                          interpolation=interpolation, wrapping="clamp_to_edge")


class FieldTexture:
    """A field in a float texture (see the module docstring)."""

    def __init__(self, shape, interpolation: str = "nearest"):
        shape = tuple(int(s) for s in shape)
        self.shape = shape
        if len(shape) == 2:
            self.packed = False
            self.stride = max(1, -(-max(shape) // MAX_TEXTURE))
            s = self.stride
            self.tex_shape = (-(-shape[0] // s), -(-shape[1] // s))
        else:
            self.packed = True
            self.stride = 1
            n = int(np.prod(shape)) if shape else 1
            width = min(PACK, next_pow2(max(n, 1)))
            self.tex_shape = (-(-n // width), width)
            self.n = n
        self.texture = float_texture(self.tex_shape, interpolation)

    @property
    def size(self) -> tuple[float, float]:
        """(width, height) in texels, as the shaders take it."""
        return float(self.tex_shape[1]), float(self.tex_shape[0])

    def texcoords(self, index) -> np.ndarray:
        """Texel-centre coordinates (s, t) of packed entries `index` (float32, exact)."""
        h, w = self.tex_shape
        index = np.asarray(index, dtype=np.int64)
        return np.column_stack([((index % w) + 0.5) / w, ((index // w) + 0.5) / h]
                               ).astype(np.float32)

    def set_static(self, values) -> None:
        """Data that never changes (a table built once): uploaded once, not counted as a
        field copy."""
        v = self.host_block(values)
        w = self.tex_shape[1]
        if self.packed:
            full, tail = divmod(v.size, w)
            if full:
                self.texture.set_data(v[:full * w].reshape(full, w, 1), offset=(0, 0), copy=True)
            if tail:
                self.texture.set_data(v[full * w:].reshape(1, tail, 1), offset=(full, 0),
                                      copy=True)
        else:
            self.texture.set_data(v[..., None], offset=(0, 0), copy=True)

    def host_block(self, values) -> np.ndarray:
        v = np.asarray(values)
        if v.dtype != np.float32:
            v = v.astype(np.float32)
        if self.packed:
            return v.reshape(-1)
        if self.stride > 1:
            v = np.ascontiguousarray(v[::self.stride, ::self.stride])
        return v

    def device_block(self, values, stream):
        """A contiguous float32 device array as the texture holds it (a copy on `stream`, which
        waited for the frame, only beyond MAX_TEXTURE or for another dtype)."""
        import cupy as cp
        v = values.reshape(-1) if self.packed else values[::self.stride, ::self.stride]
        if v.dtype != cp.float32 or not v.flags.c_contiguous:
            with stream:
                v = cp.ascontiguousarray(v, dtype=cp.float32)
        return v


class Upload:
    """One frame's uploads into a canvas's textures (see the module docstring)."""

    def __init__(self, canvas, frame=None):
        self.canvas = canvas
        self.frame = frame
        self.device_ops: list = []
        self.host = 0
        self.path = None
        self.copy = not gl_ready(canvas)  # no context yet: gloo keeps its own copies

    def field(self, ft: FieldTexture, values) -> None:
        """The whole field `values` into `ft`."""
        if is_device(values):
            self._device(ft, values, 0)
            return
        block = ft.host_block(values)
        self._host_set(ft, block, 0)

    def row(self, ft: FieldTexture, values, row: int, stride: int = 1) -> None:
        """1D `values` (every `stride`-th) into row `row` of a 2D texture (the space–time
        image)."""
        if is_device(values):
            s = interop.session(self.canvas)
            if s is not None and s.broken is None:
                import cupy as cp
                with s.stream:
                    if self.frame is not None and self.frame.ready is not None:
                        s.stream.wait_event(self.frame.ready)
                    v = cp.ascontiguousarray(values[::stride][:ft.tex_shape[1]],
                                             dtype=cp.float32)
                attach(self.canvas, ft.texture)
                self.device_ops.append((ft.texture, v, row))
                return
            values = self._readback(values)
        v = np.ascontiguousarray(np.asarray(values)[::stride][:ft.tex_shape[1]], np.float32)
        attach(self.canvas, ft.texture)
        ft.texture.set_data(v.reshape(1, -1, 1), offset=(row, 0), copy=self.copy)
        self.host += 1

    def _host_set(self, ft: FieldTexture, block: np.ndarray, row0: int) -> None:
        attach(self.canvas, ft.texture)
        if ft.packed:
            w = ft.tex_shape[1]
            full, tail = divmod(block.size, w)
            if full:
                ft.texture.set_data(block[:full * w].reshape(full, w, 1), offset=(row0, 0),
                                    copy=self.copy)
            if tail:
                ft.texture.set_data(block[full * w:].reshape(1, tail, 1),
                                    offset=(row0 + full, 0), copy=self.copy)
        else:
            ft.texture.set_data(block[..., None], offset=(0, 0), copy=self.copy)
        self.host += 1

    def _device(self, ft: FieldTexture, values, row0: int) -> None:
        s = interop.session(self.canvas)
        if s is None or s.broken is not None:
            self._host_set(ft, ft.host_block(self._readback(values)), row0)
            return
        if self.frame is not None and self.frame.ready is not None:
            s.stream.wait_event(self.frame.ready)  # (before any conversion on that stream)
        attach(self.canvas, ft.texture)
        self.device_ops.append((ft.texture, ft.device_block(values, s.stream), row0))

    def _readback(self, values) -> np.ndarray:
        """A device array read back on this thread (interop unavailable): counted."""
        import cupy as cp
        stream = cp.cuda.Stream(non_blocking=True)
        if self.frame is not None and self.frame.ready is not None:
            stream.wait_event(self.frame.ready)
        host = cp.asnumpy(values, stream=stream)
        stream.synchronize()
        COUNTS.add("readback")
        return host

    def finish(self) -> str:
        """Send everything to OpenGL now; returns the path used ('host', 'interop' or '')."""
        flush(self.canvas, wanted=self.host > 0)
        if self.host:
            COUNTS.add("host_to_gl", self.host)
            self.path = "host"
        if self.device_ops:
            s = interop.session(self.canvas)
            try:
                ev = s.copy(self.device_ops, self.frame.ready if self.frame else None)
            except Exception as e:  # noqa: BLE001  (the fallback, said once, with the reason)
                s.broken = interop.FAILED = f"CUDA–OpenGL interop failed: {e}"
                for tex, arr, row0 in self.device_ops:
                    ft = _Packed(tex)
                    self._host_set(ft, self._readback(arr).reshape(-1) if ft.packed
                                   else self._readback(arr), row0)
                flush(self.canvas, wanted=True)
                self.path = "host"
                return self.path
            COUNTS.add("device_to_gl", len(self.device_ops))
            if self.frame is not None:
                self.frame.consumed = ev
            self.path = "interop"
        return self.path or ""


class _Packed:
    """A FieldTexture-like view of a bare texture (for the fallback of a failed copy)."""

    def __init__(self, texture):
        self.texture = texture
        self.tex_shape = tuple(texture.shape[:2])
        self.packed = True


def attach(canvas, texture) -> None:
    """Put a texture's GLIR commands on the canvas's queue (VisPy does that only when a program
    first draws with it), so `flush` runs them now: a new texture's first data is copied by
    OpenGL before the frame's buffers are handed back, and exists for CUDA to register."""
    canvas.context.glir.associate(texture.glir)


def gl_ready(canvas) -> bool:
    """Whether the canvas has an OpenGL context now (a Qt widget gets one when shown)."""
    native = getattr(canvas, "native", None)
    valid = getattr(native, "isValid", None)
    try:
        return bool(valid()) if callable(valid) else True
    except Exception:  # noqa: BLE001
        return False


SOFTWARE = ("llvmpipe", "softpipe", "swrast", "software", "swiftshader", "lavapipe")
_ASKED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # canvas -> {what: answer}


def _gl_string(canvas, what: str):
    """The canvas's OpenGL answer to glGetString(GL_<what>) as text, kept per canvas; None
    while the canvas has no context to ask; '' where the context does not answer (a core
    profile lists no extensions in one string)."""
    asked = _ASKED.setdefault(canvas, {})
    if what not in asked:
        if not gl_ready(canvas):
            return None
        from vispy.gloo import gl
        canvas.set_current()
        try:
            got = gl.glGetParameter(getattr(gl, "GL_" + what))
        except Exception:  # noqa: BLE001  (no answer now: asked again next time)
            return ""
        asked[what] = got.decode(errors="replace") if isinstance(got, bytes) else str(got or "")
    return asked[what]


def software_renderer(canvas):
    """True on a software rasterizer (Mesa llvmpipe...), False on a GPU, None while the canvas
    has no OpenGL context to ask (or it does not name its renderer)."""
    name = _gl_string(canvas, "RENDERER")
    return any(s in name.lower() for s in SOFTWARE) if name else None


def gl_extension(canvas, name: str):
    """Whether the canvas's OpenGL context offers extension `name`; None while the canvas has
    no context to ask (a context that does not list its extensions in one string, as a core
    profile does not, offers none here)."""
    got = _gl_string(canvas, "EXTENSIONS")
    return None if got is None else name in got.split()


def flush(canvas, wanted: bool = True) -> bool:
    """Run the queued GLIR commands now (context current), so the host buffers they read can
    be reused at once; False where the canvas has no context yet (then the commands keep
    their own copies: see `Upload`)."""
    if not wanted or not gl_ready(canvas):
        return False
    canvas.set_current()
    canvas.context.flush_commands()
    return True
