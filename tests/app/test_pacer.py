"""The frame pace (app/frames.py FramePacer): 'smooth' hands a frame over each AUTO_FRAME_S of
stepping (calls sized by CallSizer to land on it), up to MAX_FPS with fixed steps a frame;
'fast solver' caps them so that drawing takes at most a tenth of the time, adapting to the
measured draw time; the profiler's choice reaches the solver thread, and the thread steps for
the whole interval between two frames."""
import pytest

from pdestudio.app.frames import AUTO_FRAME_S, MAX_FPS, CallSizer, FramePacer, steps_for


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


def test_steps_for_rounds_down_to_a_power_of_two_multiple():
    for rate, sec in [(12_200, 1 / 32), (31_000, 1 / 32), (5_900, 0.1), (1e6, 0.03), (90, 0.03),
                      (3, 1.0), (0.0, 1.0)]:
        n = int(rate * sec)
        k = steps_for(rate, sec)
        assert k >= 1
        if n >= 8:
            q = 1 << ((n // 8).bit_length() - 1)
            assert k % q == 0 and abs(k - n) <= q / 2 <= n / 16  # whole graphs, within 6.25 %
        else:
            assert k == max(n, 1)
    assert steps_for(12_200, 1 / 32) == 384 and steps_for(31_000, 1 / 32) == 960


def _frames(sizer, rate, overhead, frame_s, call_s, count):
    """Frames of a solver loop that drives `sizer` on a fake clock: a call of k steps takes
    overhead + k / rate seconds. Returns [(seconds of stepping, calls)] a frame."""
    out = []
    for _ in range(count):
        steps, t, calls = 0, 0.0, 0
        while k := sizer.next(steps, t, frame_s):
            wall = overhead + k / rate
            t += wall
            steps += k
            calls += 1
            sizer.called(k, wall, call_s)
        out.append((t, calls))
    return out


@pytest.mark.parametrize("rate", [12_200.0, 31_000.0, 270_000.0, 900.0])
def test_frames_land_on_their_time_in_one_call(rate):
    """The smooth pace: after a cold start (one step a call, kernels compiling), frames last
    AUTO_FRAME_S to within 10 % (so about 30 frames/s with the hand-over), in one call (each
    call ends in a host wait). The old doubling and halving made frames of
    25-50 ms."""
    sizer = CallSizer()
    frames = _frames(sizer, rate, 3e-4, AUTO_FRAME_S, AUTO_FRAME_S, 40)[10:]
    for t, calls in frames:
        assert 0.9 * AUTO_FRAME_S <= t <= 1.1 * AUTO_FRAME_S, (t, calls)
        assert calls == 1


def test_a_slower_solver_shrinks_the_calls_at_once():
    sizer = CallSizer()
    _frames(sizer, 50_000.0, 3e-4, AUTO_FRAME_S, AUTO_FRAME_S, 20)
    (t, calls), = _frames(sizer, 5_000.0, 3e-4, AUTO_FRAME_S, AUTO_FRAME_S, 1)
    assert t > 5 * AUTO_FRAME_S  # the first call was sized for the fast solver ...
    t, calls = _frames(sizer, 5_000.0, 3e-4, AUTO_FRAME_S, AUTO_FRAME_S, 1)[0]
    assert t <= 1.1 * AUTO_FRAME_S  # ... the next frame's for the slow one


def test_fast_solver_pace_steps_its_interval_in_calls_of_at_most_call_s():
    p = FramePacer("fast solver")
    for _ in range(5):
        p.drawn(0.04)  # 2.5 frames/s: 0.4 s of stepping a frame, in calls of 0.1 s
    sizer = CallSizer()
    frames = _frames(sizer, 20_000.0, 3e-4, p.frame_s, p.call_s, 12)[6:]
    for t, calls in frames:
        assert 0.83 * p.frame_s <= t <= 1.17 * p.frame_s
        assert 4 <= calls <= 5


@pytest.mark.parametrize("rate", [5_800.0, 12_200.0, 36_900.0])
@pytest.mark.parametrize("aside", [0.0004, 0.0024, 0.006])
def test_smooth_frames_last_their_period_with_the_hand_over(aside, rate):
    """A frame's time in all is AUTO_FRAME_S (31 frames/s) whatever the hand-over takes: the
    two-layer model's 2.4 ms a frame made 29.5-29.7 frames/s while the stepping alone was
    timed (docs/BENCHMARKS.md, "The screen's turns on the GPU"). A fake clock: calls of
    overhead + k / rate seconds, then `aside` seconds outside the calls; one frame that waited
    for a command (0.2 s) does not shorten the next ones. The calls' steps are multiples of
    powers of two, up to 12 % off a frame's time: on average frames come on time."""
    p, sizer, clock, starts = FramePacer("smooth"), CallSizer(), 0.0, []
    for i in range(40):
        start, steps = clock, 0
        while k := sizer.next(steps, clock - start, p.frame_s):
            wall = 3e-4 + k / rate
            clock += wall
            steps += k
            sizer.called(k, wall, p.call_s)
        p.stepped(start, clock)
        starts.append(start)
        clock += 0.2 if i == 25 else aside
    periods = [b - a for a, b in zip(starts[10:], starts[11:]) if b - a < 0.1]
    assert len(periods) >= 25
    mean = sum(periods) / len(periods)
    assert mean == pytest.approx(AUTO_FRAME_S, rel=0.01), (mean, periods)
    assert 1 / mean >= 30.0
    assert p.aside_s == pytest.approx(aside, rel=1e-9)
    p.restart()  # paused: the pause is not a hand-over
    p.stepped(clock + 5.0, clock + 5.03)
    assert p.aside_s == pytest.approx(aside, rel=1e-9)


def test_the_time_aside_is_the_mean_of_the_last_frames():
    """Hand-overs of two kinds (made beside the screen's Python, or not): the frame's time
    aside is their mean, not the shorter kind's (the median made 30.3 frames/s of 31)."""
    p, t = FramePacer("smooth"), 0.0
    for i in range(FramePacer.ASIDES * 3):
        p.stepped(t, t + 0.03)
        t += 0.03 + (0.002 if i % 3 == 0 else 0.0003)
    p.stepped(t, t + 0.03)
    assert p.aside_s == pytest.approx((0.002 + 2 * 0.0003) / 3, rel=1e-6)
    assert p.frame_s == pytest.approx(AUTO_FRAME_S - p.aside_s - p.late_s)


def test_numpy_frames_keep_their_whole_stepping_time():
    """On NumPy the solver loop does not shorten a frame's stepping for its hand-over or its
    lateness (the screen shares the CPU and the GIL there: more frames than it draws cost the
    solver a third of its share in the CPU window); the pacer stays at AUTO_FRAME_S."""
    from pdestudio import solvers
    from pdestudio.app.solver_loop import SolverLoop

    class Outlet:
        def emit(self, *args):
            pass
    loop = SolverLoop()
    for name in ("created", "frame_ready", "message", "running_changed", "stats", "speedup",
                 "param_refused"):
        setattr(loop, name, Outlet())
    loop.frame_ready.emit = lambda: loop.mailbox.take()  # a screen that keeps up
    loop.adopt(solvers.create("heat-1d", backend="numpy", nx=256))
    loop.running = True
    for _ in range(4):
        loop._frame_of_steps()
    assert loop.sim.steps > 0
    assert loop.pacer.aside_s == 0.0 and loop.pacer.late_s == 0.0
    assert loop.pacer.frame_s == AUTO_FRAME_S


def test_run_ahead_calls_take_the_steps_the_last_call_started():
    """RunAhead (the window's loop on a simulation that runs ahead): every call's steps are the
    steps the call before started ahead, though the sizer's chunk changes with the rate (steps
    started ahead and not taken up by the next call are GPU time lost); its rate and its frame
    are measured between two returns (the steps began before the call)."""
    from pdestudio.app.frames import CallSizer, RunAhead

    class Sim:
        def __init__(self):
            self.calls, self.stats = [], {"wall_s": 0.0}

        def step(self, n, ahead=0):
            self.calls.append((n, ahead))
            self.stats["wall_s"] = 1e-4 * n * (1 + len(self.calls) % 3)  # the rate moves

    sim, sizer, run = Sim(), CallSizer(), RunAhead()
    ends = []
    for i in range(40):
        k, wall = run.call(sim, sizer, sizer.next(0, 0.0, AUTO_FRAME_S), 1.0)
        sizer.called(k, wall, AUTO_FRAME_S)
        ends.append(run.frame(0.0, 1.0, True))
    assert len({n for n, _ in sim.calls}) > 2  # the chunk did change
    for (n, _), (_, before) in zip(sim.calls[1:], sim.calls[:-1]):
        assert n == before
    assert all(s == e0 for (s, _), (_, e0) in zip(ends[1:], ends[:-1]))
    run.reset()
    run.call(sim, sizer, 3, 1.0)
    assert sim.calls[-1][0] == 3  # after a reset (a new simulation, a divergence): as asked
