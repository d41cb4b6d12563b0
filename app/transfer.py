"""Field hand-over from the solver to the screen (Qt-free).

Frames hold float32 copies of the fields a view needs (the views draw float32) plus each
field's finite (min, max), computed where the frame is made, so the GUI thread never makes a
pass over the data for the colour range.

`HostCopier` (NumPy backend): plain float32 copies.
`PinnedCopier` (CuPy backend, the fallback path): the fields are snapshotted on the device (a
fast device-to-device copy, cast to float32, on the compute stream, so the solver may go on
overwriting its state), then copied to page-locked host buffers asynchronously on a side stream
while the next steps run. The worker polls for completion and never waits for it while running.
Four pinned slots rotate: one being written, one in the mailbox, one held by the GUI, one spare;
when none is free the frame is dropped.
`DeviceCopier` (CuPy backend with CUDA–OpenGL interop, see views/interop.py): the same device
snapshot, but the frame hands over the device arrays themselves and a CUDA event recorded after
the snapshot; the GUI thread copies them into its textures on the GPU. Only the ranges (two
numbers a field) travel to the host. The consumer records when it has read a slot
(`frame.consumed`); the compute stream waits on that event (on the GPU) before overwriting it.

`COUNTS` counts the copies of field data by kind (device_to_host, host_to_gl, device_to_gl,
readback: a device frame read back on the GUI thread when interop failed), so a test can assert
that the interop path makes no host copy. CuPy is imported only by the CuPy copiers.
"""
from __future__ import annotations

import collections
import threading
import time

import numpy as np

from pdestudio import solvers
from .frames import Frame
from .views.colors import finite_range

PATHS = ("host", "pinned", "interop")


class CopyCounter:
    """Thread-safe counts of field copies by kind."""

    def __init__(self):
        self._lock = threading.Lock()
        self._c: collections.Counter = collections.Counter()

    def add(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self._c[kind] += n

    def snapshot(self) -> dict:
        with self._lock:
            return dict(self._c)

    def reset(self) -> None:
        with self._lock:
            self._c.clear()


COUNTS = CopyCounter()


class HostCopier:
    """NumPy backend: synchronous float32 copies (fields are already in host memory)."""

    path = "host"

    def submit(self, arrays: dict, t: float, steps: int, generation: int) -> bool:
        t0 = time.perf_counter()
        copies = {k: np.array(v, dtype=np.float32, copy=True) for k, v in arrays.items()}
        ranges = {k: finite_range(v) for k, v in copies.items()}
        self._frame = Frame(copies, t, steps, generation, transfer_s=time.perf_counter() - t0,
                            ranges=ranges)
        return True

    def poll(self, wait: bool = False) -> Frame | None:
        f, self._frame = getattr(self, "_frame", None), None
        return f

    @property
    def busy(self) -> bool:
        return False


class _DeviceSnapshots:
    """What both CuPy copiers share: float32 device snapshots, the finite (min, max) of each
    field computed on the device, and the bookkeeping of the slots the GUI holds."""

    SLOTS = 4

    def __init__(self):
        import cupy as cp
        self.cp = cp
        self.side = cp.cuda.Stream(non_blocking=True)
        self.device_slots: list[dict] = [{} for _ in range(self.SLOTS)]
        self.frame_bufs: list[dict] = [{} for _ in range(self.SLOTS)]  # ranges and scratch
        self.consumed: list = [None] * self.SLOTS  # event after which the GUI read a slot
        self.held = [False] * self.SLOTS
        self.lock = threading.Lock()
        self.pending = None

    @property
    def busy(self) -> bool:
        return self.pending is not None

    def _free_slot(self) -> int | None:
        with self.lock:
            for i, h in enumerate(self.held):
                if not h:
                    self.held[i] = True
                    return i
        return None

    def _release(self, i: int, consumed=None) -> None:
        with self.lock:
            self.held[i] = False
            self.consumed[i] = consumed

    def _snapshot(self, i: int, arrays: dict, wait_for=None):
        """float32 device copies of `arrays` into device slot i and a device vector of their
        finite (min, max) pairs, on the compute stream, after `wait_for` (an event after which
        the old snapshots were read); returns (snapshots, ranges, ready event). One launch a
        field (`solvers.float32_frame`): the solver thread spends little host time here, which
        the GPU would spend idle."""
        cp = self.cp
        compute = cp.cuda.get_current_stream()
        if wait_for is not None:
            compute.wait_event(wait_for)  # GPU-side: the host never waits here
        n = len(arrays)
        bufs = self.frame_bufs[i]
        if bufs.get("n") != n:
            bufs.update(n=n, ranges=cp.empty(2 * n, cp.float32),
                        scratch=solvers.frame_scratch(n))
        snaps = solvers.float32_frame(arrays, self.device_slots[i], bufs["ranges"],
                                      bufs["scratch"])
        return snaps, bufs["ranges"], compute.record()


def _ranges_dict(names, values) -> dict:
    out = {}
    for k, name in enumerate(names):
        lo, hi = float(values[2 * k]), float(values[2 * k + 1])
        out[name] = (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else None
    return out


class PinnedCopier(_DeviceSnapshots):
    """The fallback path on CuPy: device snapshot, then an async copy to pinned host memory."""

    path = "pinned"
    D2H = 2  # cudaMemcpyDeviceToHost

    def __init__(self):
        super().__init__()
        import cupyx
        self.cupyx = cupyx
        self.slots: list[dict] = [{} for _ in range(self.SLOTS)]
        self.range_slots = [None] * self.SLOTS
        self.readout_done = None

    def submit(self, arrays: dict, t: float, steps: int, generation: int) -> bool:
        """Start copying `arrays` (CuPy arrays) to a pinned slot; False (frame dropped) when a
        copy is still in flight or no slot is free. Never blocks the host."""
        if self.pending is not None:
            return False
        slot = self._free_slot()
        if slot is None:
            return False
        cp = self.cp
        snaps, ranges, ready = self._snapshot(0, arrays, self.readout_done)
        bufs = self.slots[slot]
        for name, a in snaps.items():
            b = bufs.get(name)
            if b is None or b.shape != a.shape:
                bufs[name] = self.cupyx.empty_pinned(a.shape, np.float32)
        rb = self.range_slots[slot]
        if rb is None or rb.shape != ranges.shape:
            rb = self.range_slots[slot] = self.cupyx.empty_pinned(ranges.shape, np.float32)
        self.side.wait_event(ready)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(self.side)
        for name, st in snaps.items():
            cp.cuda.runtime.memcpyAsync(bufs[name].ctypes.data, st.data.ptr, st.nbytes, self.D2H,
                                        self.side.ptr)
        if ranges.size:
            cp.cuda.runtime.memcpyAsync(rb.ctypes.data, ranges.data.ptr, ranges.nbytes, self.D2H,
                                        self.side.ptr)
        end.record(self.side)
        self.readout_done = end  # the staging snapshot is free again once read out
        # (`ranges` lives with device slot 0, which the next snapshot overwrites only after
        # readout_done)
        self.pending = (slot, list(arrays), start, end, t, steps, generation, ranges)
        return True

    def poll(self, wait: bool = False) -> Frame | None:
        """The finished frame, or None while the copy is in flight (wait=True blocks)."""
        if self.pending is None:
            return None
        slot, names, start, end, t, steps, gen, _ = self.pending
        if not wait and not end.done:
            return None
        end.synchronize()
        self.pending = None
        COUNTS.add("device_to_host", len(names))
        seconds = self.cp.cuda.get_elapsed_time(start, end) / 1e3
        bufs = self.slots[slot]
        return Frame({n: bufs[n] for n in names}, t, steps, gen, transfer_s=seconds,
                     ranges=_ranges_dict(names, self.range_slots[slot]),
                     release=lambda: self._release(slot))


class DeviceCopier(_DeviceSnapshots):
    """The interop path: frames of device snapshots; only the ranges go to the host."""

    path = "interop"

    def __init__(self):
        super().__init__()
        self.range_slots = [None] * self.SLOTS

    def submit(self, arrays: dict, t: float, steps: int, generation: int) -> bool:
        if self.pending is not None:
            return False
        slot = self._free_slot()
        if slot is None:
            return False
        cp = self.cp
        wait_for, self.consumed[slot] = self.consumed[slot], None
        snaps, ranges, ready = self._snapshot(slot, arrays, wait_for)
        rb = self.range_slots[slot]
        if rb is None or rb.shape != ranges.shape:
            rb = self.range_slots[slot] = self.cupyx_pinned(ranges.shape)
        self.side.wait_event(ready)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(self.side)
        if ranges.size:
            cp.cuda.runtime.memcpyAsync(rb.ctypes.data, ranges.data.ptr, ranges.nbytes, 2,
                                        self.side.ptr)
        end.record(self.side)
        self.pending = (slot, snaps, ready, start, end, t, steps, generation, ranges)
        return True

    def cupyx_pinned(self, shape):
        import cupyx
        return cupyx.empty_pinned(shape, np.float32)

    def poll(self, wait: bool = False) -> Frame | None:
        """The frame once its ranges reached the host (the fields stay on the device)."""
        if self.pending is None:
            return None
        slot, snaps, ready, start, end, t, steps, gen, _ = self.pending
        if not wait and not end.done:
            return None
        end.synchronize()
        self.pending = None
        seconds = self.cp.cuda.get_elapsed_time(start, end) / 1e3
        frame = Frame(dict(snaps), t, steps, gen, transfer_s=seconds,
                      ranges=_ranges_dict(list(snaps), self.range_slots[slot]), ready=ready)
        frame.release = lambda: self._release(slot, frame.consumed)
        return frame


def make_copier(backend: str, path: str = "pinned"):
    """The copier for `backend`: NumPy -> host copies; CuPy -> pinned copies, or device frames
    for CUDA–OpenGL interop when `path` is 'interop'."""
    if backend != "cupy":
        return HostCopier()
    return DeviceCopier() if path == "interop" else PinnedCopier()
