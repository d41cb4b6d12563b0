"""The frame hand-over (Qt-free, so the GPU machine runs it too): the mailbox keeps only the
newest frame; copies are float32 snapshots (the solver may overwrite its arrays at once) with
their finite ranges; pinned slots are reused only after the GUI released them; CuPy is never
imported on the NumPy backend. The interop path's device frames: tests/app/test_views_gpu.py."""
import subprocess
import sys

import numpy as np
import pytest

from pdestudio.app.frames import Frame, Mailbox
from pdestudio.app.transfer import COUNTS, HostCopier, make_copier


def test_mailbox_keeps_only_the_newest_frame_and_counts_drops():
    box, released = Mailbox(), []
    for i in range(3):
        box.put(Frame({"u": np.full(3, i)}, t=i, steps=i, generation=0,
                      release=lambda i=i: released.append(i)))
    assert box.dropped == 2 and released == [0, 1]  # dropped frames hand their buffers back
    f = box.take()
    assert f.steps == 2 and box.take() is None
    assert box.wait_taken(0.01)


def test_host_copies_are_float32_snapshots_with_finite_ranges():
    a = np.arange(5.0)
    b = np.array([np.nan, 2.0, -np.inf, 3.5])
    c = HostCopier()
    assert c.submit({"a": a, "b": b}, 0.5, 7, 1)
    a[:] = -1  # the solver goes on
    f = c.poll()
    np.testing.assert_array_equal(f.fields["a"], np.arange(5.0))
    assert f.fields["a"].dtype == np.float32
    assert f.ranges == {"a": (0.0, 4.0), "b": (2.0, 3.5)}
    assert (f.t, f.steps, f.generation) == (0.5, 7, 1) and f.transfer_s >= 0
    assert c.submit({"c": np.full(3, np.nan)}, 0, 0, 0) and c.poll().ranges == {"c": None}


def test_copy_counter_and_copier_choice():
    COUNTS.reset()
    COUNTS.add("host_to_gl", 2)
    COUNTS.add("host_to_gl")
    assert COUNTS.snapshot() == {"host_to_gl": 3}
    COUNTS.reset()
    assert COUNTS.snapshot() == {}
    assert make_copier("numpy", "interop").path == "host"  # NumPy fields are on the host


def test_numpy_backend_never_imports_cupy():
    code = ("import sys; from pdestudio.app.transfer import make_copier; "
            "from pdestudio.app.frames import SimInfo; from pdestudio import solvers; "
            "s = solvers.create('heat-1d', backend='numpy', nx=16); "
            "c = make_copier(s.backend); c.submit(s.device_fields(), 0, 0, 0); c.poll(); "
            "SimInfo.of(s); print('cupy' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr


@pytest.mark.gpu
def test_pinned_async_copies_are_snapshots_and_slots_rotate():
    import cupy as cp
    c = make_copier("cupy")
    a = cp.arange(1 << 20, dtype=cp.float64)
    assert c.submit({"a": a}, 1.0, 3, 0)
    assert not c.submit({"a": a}, 1.0, 3, 0)  # one copy in flight: this frame is dropped
    a *= -1  # the next step overwrites the state right away, on the compute stream
    f = c.poll(wait=True)
    host = f.fields["a"]
    np.testing.assert_array_equal(host, np.arange(1 << 20, dtype=np.float64))
    assert f.transfer_s > 0
    # slots held by the GUI are never written; released ones are reused
    held = [f]
    for k in range(c.SLOTS - 1):
        assert c.submit({"a": a}, 2.0 + k, 4 + k, 0)
        held.append(c.poll(wait=True))
    assert not c.submit({"a": a}, 9.0, 9, 0)  # every slot is held
    np.testing.assert_array_equal(held[0].fields["a"], np.arange(1 << 20, dtype=np.float64))
    held[0].done()
    assert c.submit({"a": a}, 9.0, 9, 0)
    g = c.poll(wait=True)
    np.testing.assert_array_equal(g.fields["a"], -np.arange(1 << 20, dtype=np.float64))


@pytest.mark.gpu
def test_pinned_handover_on_a_model():
    from pdestudio import solvers
    sim = solvers.create("heat-1d", backend="cupy", nx=4096)
    c = make_copier("cupy")
    c.submit(sim.device_fields(), sim.t, sim.steps, 0)
    sim.step(10)  # runs while the copy may still be in flight
    f = c.poll(wait=True)
    ref = solvers.create("heat-1d", backend="numpy", nx=4096)
    np.testing.assert_array_equal(f.fields["T"], ref.fields()["T"].astype(np.float32))
    assert f.ranges["T"] == (float(f.fields["T"].min()), float(f.fields["T"].max()))
