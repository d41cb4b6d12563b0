"""The interop path's plumbing on the CPU: views hand device frames to GLInterop, which maps the
textures, copies each field with cuMemcpy2DAsync and unmaps them. Here the CUDA driver is a fake
that performs the 2D copies in host memory into one buffer per registered texture, so the test
checks what the GPU run cannot show separately: the copy parameters (rows, tails of packed 1D
fields, the space–time row, pitches) lay every field out exactly as the host upload does, in
one map/unmap per frame, with no host copy counted. (The real driver: test_views_gpu.py.)"""
from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("vispy")

from pdestudio.app.frames import Frame  # noqa: E402
from pdestudio.app.transfer import COUNTS  # noqa: E402
from pdestudio.app.views import ColorScale, interop, make_view  # noqa: E402
from pdestudio.app.views.textures import FieldTexture  # noqa: E402

from .test_views import canvas, grid2d, info_of  # noqa: E402,F401  (the EGL canvas fixture)


class Dev:
    """A 'device' array: host memory with the attributes the interop code reads."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape}
        self.data = SimpleNamespace(ptr=a.ctypes.data)

    dtype = property(lambda self: self.a.dtype)
    shape = property(lambda self: self.a.shape)
    size = property(lambda self: self.a.size)
    ndim = property(lambda self: self.a.ndim)
    flags = property(lambda self: SimpleNamespace(c_contiguous=self.a.flags.c_contiguous))

    def reshape(self, *s):
        return Dev(self.a.reshape(*s))

    def __getitem__(self, k):
        return Dev(self.a[k])


class Event:
    done = True

    def record(self, stream=None):
        return self


class Stream:
    ptr = 7

    def wait_event(self, e):
        self.waited = e

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


fake_cupy = SimpleNamespace(
    float32=np.float32,
    ascontiguousarray=lambda v, dtype=None: Dev(np.ascontiguousarray(v.a, dtype=dtype)),
    cuda=SimpleNamespace(Event=lambda **kw: Event(), get_elapsed_time=lambda a, b: 0.25,
                         Device=lambda d: SimpleNamespace(use=lambda: None),
                         runtime=SimpleNamespace(memGetInfo=lambda: (1, 1))))


class Driver:
    """cuGraphics*/cuMemcpy2DAsync on host memory: one float32 buffer per registered texture."""

    def __init__(self, shapes):
        self.shapes, self.buffers, self.mapped, self.maps, self.copies = shapes, {}, set(), 0, []

    def fns(self):
        def ctx(p):
            p._obj.value = 1
            return 0

        def register(res, handle, target, flags):
            assert target == interop.GL_TEXTURE_2D
            res._obj.value = handle
            self.buffers[handle] = np.full(self.shapes[handle], np.nan, np.float32)
            return 0

        def map_(count, handles, stream):
            assert stream == 7
            self.mapped = {handles[i] for i in range(count)}
            self.maps += 1
            return 0

        def array(arr, res, index, level):
            assert res.value in self.mapped and (index, level) == (0, 0)
            arr._obj.value = res.value
            return 0

        def memcpy(p, stream):
            p = p._obj
            assert (p.srcMemoryType, p.dstMemoryType) == (interop.CU_MEMORYTYPE_DEVICE,
                                                         interop.CU_MEMORYTYPE_ARRAY)
            assert p.dstArray in self.mapped and p.srcPitch >= p.WidthInBytes
            raw = (ctypes.c_char * (p.srcPitch * (p.Height - 1) + p.WidthInBytes)
                   ).from_address(p.srcDevice)
            src = np.frombuffer(raw, np.uint8)
            dst = self.buffers[p.dstArray]
            for r in range(p.Height):
                row = src[r * p.srcPitch:r * p.srcPitch + p.WidthInBytes].view(np.float32)
                x0 = p.dstXInBytes // 4
                dst[p.dstY + r, x0:x0 + len(row)] = row
            self.copies.append((p.dstY, p.WidthInBytes, p.Height))
            return 0

        def unmap(count, handles, stream):
            assert {handles[i] for i in range(count)} == self.mapped
            self.mapped = set()
            return 0

        return {"cuCtxGetCurrent": ctx, "cuGraphicsGLRegisterImage": register,
                "cuGraphicsMapResources": map_, "cuGraphicsSubResourceGetMappedArray": array,
                "cuMemcpy2DAsync": memcpy, "cuGraphicsUnmapResources": unmap,
                "cuGraphicsUnregisterResource": lambda r: 0}


@pytest.fixture
def fake_interop(canvas, monkeypatch):  # noqa: F811
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    shapes: dict = {}
    drv = Driver(shapes)
    s = object.__new__(interop.GLInterop)
    s.cp, s.canvas, s.device, s.fn, s.stream = fake_cupy, canvas, 0, drv.fns(), Stream()
    s.resources, s.keep, s.timings, s.last_copy_ms, s.broken = {}, [], [], None, None
    s.description = "fake"
    monkeypatch.setitem(interop._SESSIONS, canvas, s)
    real = interop.gl_handle

    def handle(c, tex):  # learn each texture's shape as it gets its OpenGL name
        h = real(c, tex)
        shapes[h] = tuple(tex.shape[:2])
        return h

    monkeypatch.setattr(interop, "gl_handle", handle)
    return drv


def held(drv, view, name):
    return drv.buffers[interop.gl_handle(view.canvas, view.textures[name].texture)]


def test_device_frames_are_laid_out_like_host_uploads(canvas, fake_interop):  # noqa: F811
    drv = fake_interop
    rng = np.random.default_rng(3)
    # a packed 1D field with a tail (10,000 = 2 rows of 4096 + 1808), a line with its ring row
    x = np.linspace(0, 1, 10_000)
    u = rng.random(10_000).astype(np.float32)
    view = make_view(canvas, info_of(SimpleNamespace(kind="grid1d", x=x), {"u": u}), "line")
    try:
        for k in range(2):
            COUNTS.reset()
            f = Frame({"u": Dev(u + k)}, float(k), k, 0, ranges={"u": (0.0, 2.0)},
                      ready=Event())
            view.set_frame(f, "u", ColorScale())
            assert f.consumed is not None and view.upload_path == "interop"
            assert COUNTS.snapshot() == {"device_to_gl": 2}
        assert view.textures["u"].tex_shape == (3, 4096)
        np.testing.assert_array_equal(held(drv, view, "u").ravel()[:10_000], u + 1)
        ring = held(drv, view, "__space_time__")
        np.testing.assert_array_equal(ring[1, :10_000], u + 1)  # the second row: frame 1
        np.testing.assert_array_equal(ring[0, :10_000], u)
        assert drv.maps == 2  # one map/unmap per frame for both textures
    finally:
        view.remove()
    # a grid surface over another: two 2D textures, full rows
    mesh = grid2d(48)
    eta = rng.random((48, 48)).astype(np.float32)
    fields = {"eta": Dev(eta), "bottom": Dev(eta - 2)}
    view = make_view(canvas, info_of(mesh, {"eta": eta, "bottom": eta}, ("eta", "bottom")),
                     "surface")
    try:
        view.set_frame(Frame(fields, 0.0, 0, 0, ready=Event(),
                             ranges={"eta": (0.0, 1.0), "bottom": (-2.0, -1.0)}),
                       "eta", ColorScale())
        np.testing.assert_array_equal(held(drv, view, "eta"), eta)
        np.testing.assert_array_equal(held(drv, view, "bottom"), eta - 2)
        assert (0, 48 * 4, 48) in drv.copies
    finally:
        view.remove()


def test_packed_texture_coordinates_address_every_entry():
    ft = FieldTexture((10_000,))
    tc = ft.texcoords(np.arange(10_000))
    h, w = ft.tex_shape
    cols, rows = np.floor(tc[:, 0] * w).astype(int), np.floor(tc[:, 1] * h).astype(int)
    np.testing.assert_array_equal(rows * w + cols, np.arange(10_000))
    assert w & (w - 1) == 0  # a power of two: the shaders' index arithmetic is exact
