"""Field hand-over from the solver to the screen (Qt-free).

`HostCopier` (NumPy backend): plain copies of the fields the view needs.
`PinnedCopier` (CuPy backend): the fields are snapshotted on the device (a fast device-to-device
copy on the compute stream, so the solver may go on overwriting its state), then copied to
page-locked host buffers asynchronously on a side stream while the next steps run. The worker
polls for completion and never waits for it while running. Four pinned slots rotate: one being
written, one in the mailbox, one held by the GUI, one spare; when none is free the frame is
dropped. CuPy is imported only when a PinnedCopier is made, i.e. only on the cupy backend.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from .frames import Frame


class HostCopier:
    """NumPy backend: synchronous copies (fields are already in host memory)."""

    def submit(self, arrays: dict, t: float, steps: int, generation: int) -> bool:
        t0 = time.perf_counter()
        copies = {k: np.array(v, copy=True) for k, v in arrays.items()}
        self._frame = Frame(copies, t, steps, generation, transfer_s=time.perf_counter() - t0)
        return True

    def poll(self, wait: bool = False) -> Frame | None:
        f, self._frame = getattr(self, "_frame", None), None
        return f

    @property
    def busy(self) -> bool:
        return False


class PinnedCopier:
    SLOTS = 4
    D2H = 2  # cudaMemcpyDeviceToHost

    def __init__(self):
        import cupy as cp
        import cupyx
        self.cp, self.cupyx = cp, cupyx
        self.side = cp.cuda.Stream(non_blocking=True)
        self.staging: dict = {}
        self.slots: list[dict] = [{} for _ in range(self.SLOTS)]
        self.held = [False] * self.SLOTS
        self.lock = threading.Lock()
        self.pending = None
        self.readout_done = None

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

    def _release(self, i: int) -> None:
        with self.lock:
            self.held[i] = False

    def submit(self, arrays: dict, t: float, steps: int, generation: int) -> bool:
        """Start copying `arrays` (CuPy arrays) to a pinned slot; False (frame dropped) when a
        copy is still in flight or no slot is free. Never blocks the host."""
        if self.pending is not None:
            return False
        slot = self._free_slot()
        if slot is None:
            return False
        cp = self.cp
        compute = cp.cuda.get_current_stream()
        if self.readout_done is not None:
            compute.wait_event(self.readout_done)  # staging buffers are free again (GPU-side)
        bufs = self.slots[slot]
        for name, a in arrays.items():
            st = self.staging.get(name)
            if st is None or st.shape != a.shape or st.dtype != a.dtype:
                st = self.staging[name] = cp.empty(a.shape, a.dtype)
            cp.copyto(st, a)  # device snapshot on the compute stream
            b = bufs.get(name)
            if b is None or b.shape != a.shape or b.dtype != a.dtype:
                bufs[name] = self.cupyx.empty_pinned(a.shape, a.dtype)
        ready = compute.record()
        self.side.wait_event(ready)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(self.side)
        for name in arrays:
            st, b = self.staging[name], bufs[name]
            cp.cuda.runtime.memcpyAsync(b.ctypes.data, st.data.ptr, st.nbytes, self.D2H,
                                        self.side.ptr)
        end.record(self.side)
        self.readout_done = end
        self.pending = (slot, list(arrays), start, end, t, steps, generation)
        return True

    def poll(self, wait: bool = False) -> Frame | None:
        """The finished frame, or None while the copy is in flight (wait=True blocks)."""
        if self.pending is None:
            return None
        slot, names, start, end, t, steps, gen = self.pending
        if not wait and not end.done:
            return None
        end.synchronize()
        self.pending = None
        seconds = self.cp.cuda.get_elapsed_time(start, end) / 1e3
        bufs = self.slots[slot]
        return Frame({n: bufs[n] for n in names}, t, steps, gen, transfer_s=seconds,
                     release=lambda: self._release(slot))


def make_copier(backend: str):
    return PinnedCopier() if backend == "cupy" else HostCopier()
