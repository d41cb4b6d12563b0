"""The notebook view's OpenGL context and threads (docs/NOTEBOOK.md, "Threads"): jupyter_rfb
calls `get_frame` from more than one thread of the kernel (its main thread and ipykernel's
subshell threads). An EGL context is current in at most one thread at a time, so a draw must
never leave it current in the thread that drew, and in a kernel the drawing happens in the main
thread (the one whose event loop the view uses), as the window draws in its GUI thread."""
import asyncio
import threading

import numpy as np

import pdestudio
from pdestudio import solvers
from pdestudio.app.notebook.canvas import render

W, H = 320, 240


def in_thread(fn):
    """fn() in a new thread (named like ipykernel's subshells); its result or its exception."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 (handed to the test)
            out["error"] = e

    t = threading.Thread(target=body, name="subshell-test")
    t.start()
    t.join(60)
    if "error" in out:
        raise out["error"]
    return out["value"]


def show_paused(views):
    sim = solvers.create("shallow-water", backend="numpy", nx=48)
    v = pdestudio.show(sim, mode="image", field="h")
    views.append(v)
    v.router.call(lambda: None)  # the first frame is in the mailbox
    return sim, v


def test_frames_from_a_second_thread_then_from_the_main_thread():
    """No event loop runs (a script, a test): each call draws where it is made, and the
    context is released after the draw, so the next thread can make it current. Run in a
    process of its own, as in a kernel: in this test process the Qt tests leave a Qt app, whose
    contexts belong to the thread that made them (the view then uses Qt's context, and draws
    in the kernel's main thread only; the next test checks that case)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PDESTUDIO_THREADS_BODY="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"{__file__}::test_threads_body"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


def test_threads_body(views):
    """The body of the test above, in its own process (skipped in the suite's process)."""
    import os

    import pytest
    if os.environ.get("PDESTUDIO_THREADS_BODY") != "1":
        pytest.skip("run by test_frames_from_a_second_thread_then_from_the_main_thread in a "
                    "process of its own")
    sim, v = show_paused(views)
    rfb = v.canvas.native
    rfb.handle_event({"type": "resize", "width": W, "height": H, "ratio": 1.0})
    a = in_thread(rfb.get_frame)  # what ipykernel's subshell thread does
    b = rfb.get_frame()  # then the main thread: failed with "Could not make the context current"
    c = in_thread(rfb.get_frame)
    for img in (a, b, c):
        assert img is not None and img.shape[:2] == (H, W)
    a, b, c = (np.asarray(x[..., :3], int) for x in (a, b, c))
    # the field's picture (a paused simulation: the three frames are the same picture) ...
    assert np.array_equal(a, b) and np.array_equal(b, c)
    # ... with structure: the dam-break's water column is a different colour from the rest
    assert len(np.unique(a.reshape(-1, 3), axis=0)) > 10
    assert v.frames_sent == 3


def test_in_a_kernel_draws_happen_in_the_main_thread(views):
    """An event loop runs in the main thread (a kernel): a frame asked for from another thread
    is drawn in the main thread, in its loop, and reaches jupyter_rfb's sender."""
    sim, v = show_paused(views)
    rfb = v.canvas.native
    drew_in, asked_in = [], []
    get = rfb.get_frame
    rfb.get_frame = lambda: (asked_in.append(threading.current_thread().name), get())[1]
    draw = v._draw_frame
    v._draw_frame = lambda: (drew_in.append(threading.current_thread().name), draw())[1]
    sent = []
    rfb._rfb_send_frame = lambda array, lossless=False: sent.append(array)

    async def kernel():
        v._loop = asyncio.get_running_loop()  # (the view was made outside this loop)
        rfb._has_visible_views = True  # what the browser says when it shows the canvas
        rfb.handle_event({"type": "resize", "width": W, "height": H, "ratio": 1.0})
        v.canvas.update()  # a draw asked for (as a changed visual or a new frame does) ...
        # ... and taken up by a subshell's loop first: jupyter_rfb's draw there calls get_frame
        got = in_thread(rfb._rfb_maybe_draw)
        for _ in range(200):
            if sent:
                break
            await asyncio.sleep(0.01)
        return got

    loop = asyncio.new_event_loop()
    try:
        got = loop.run_until_complete(kernel())
    finally:
        loop.close()
    assert got is None and asked_in[0] == "subshell-test"  # not drawn in the other thread ...
    assert drew_in and set(drew_in) == {threading.main_thread().name}  # ... but in this one
    assert sent and sent[-1].shape[:2] == (H, W)
    assert len(np.unique(np.asarray(sent[-1])[..., :3].reshape(-1, 3), axis=0)) > 10
