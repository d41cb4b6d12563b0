"""The frame pace (app/frames.py FramePacer): 'smooth' hands frames over up to MAX_FPS;
'fast solver' caps them so that drawing takes at most a tenth of the time, adapting to the
measured draw time; the profiler's choice reaches the solver thread, and the thread steps for
the whole interval between two frames."""
import pytest

from pdestudio.app.frames import AUTO_FRAME_S, MAX_FPS, FramePacer


def test_smooth_ignores_the_draw_time():
    p = FramePacer("smooth")
    p.drawn(0.2)
    assert p.fps == MAX_FPS and p.frame_s == AUTO_FRAME_S


def test_fast_solver_caps_frames_to_a_tenth_of_the_time():
    p = FramePacer("fast solver")
    assert p.fps == MAX_FPS  # nothing drawn yet
    for _ in range(50):
        p.drawn(0.02)          # 20 ms a frame: 5 frames/s keep drawing at 10 %
    assert p.fps == pytest.approx(5.0, rel=1e-3)
    assert p.frame_s == pytest.approx(0.2, rel=1e-3)  # the solver steps the whole interval
    assert p.call_s == FramePacer.CALL_MAX_S  # in calls of at most 0.1 s (commands wait)
    for _ in range(50):
        p.drawn(0.0005)        # a cheap screen: the cap rises, at most MAX_FPS
    assert p.fps == MAX_FPS
    for _ in range(50):
        p.drawn(10.0)          # a very slow screen: still a few frames a second
    assert p.fps == FramePacer.MIN_FPS
    assert "fast solver" in p.describe() and "cap" in p.describe()


def test_unknown_pace_is_refused():
    with pytest.raises(ValueError, match="allowed: smooth, fast solver"):
        FramePacer("turbo")


def test_the_profilers_pace_reaches_the_solver_thread(qtbot):
    pytest.importorskip("pytestqt")
    from pdestudio.app.window import MainWindow
    w = MainWindow(backend="numpy")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    try:
        w.profiler.pace.setCurrentText("fast solver")
        qtbot.waitUntil(lambda: w.worker.pacer.mode == "fast solver", timeout=10000)
        w.profiler.pace.setCurrentText("smooth")
        qtbot.waitUntil(lambda: w.worker.pacer.mode == "smooth", timeout=10000)
    finally:
        w.close()


def test_fast_solver_forgets_one_slow_first_frame_within_a_few_frames():
    p = FramePacer("fast solver")
    p.drawn(1.5)               # the first draw compiles shaders and renders glyphs
    assert p.fps == FramePacer.MIN_FPS
    for _ in range(2):
        p.drawn(0.02)
    assert p.fps == pytest.approx(5.0, rel=1e-3)  # three frames later, not tens of seconds
    p.drawn(0.5)               # one slow frame (a resize) changes nothing
    assert p.fps == pytest.approx(5.0, rel=1e-3)
    for _ in range(3):
        p.drawn(0.05)          # a lasting change (a larger view) is followed
    assert p.fps == pytest.approx(2.0, rel=1e-3)
