"""Solver steps/s with and without the frame hand-over the window uses, without Qt (so it runs
on a GPU machine that has no display or Qt): the solver thread's loop (chunks of steps, then the
newest frame copied out: pinned async copies on a side stream on CuPy, plain copies on NumPy)
with a consumer thread standing in for the screen (takes the newest frame every 1/60 s and reads
it, as the colour range does). Drawing itself is not included: see the window's own summary
(`pdestudio --model M --run-for S`) for that, or --render, which draws each frame taken with
the window's view on an offscreen canvas (EGL) in the reader thread.

    python -m benchmarks.app.handover_bench mean-curvature shallow-water --size 1024 --backend cupy
    python -m benchmarks.app.handover_bench mean-curvature --size 1024 --render   # + drawing

`drawing_rate` (used by view_bench --solver) is the same loop with a screen thread that draws
at most 60 frames/s with the window's view, on either hand-over path (pinned or interop).

It uses the public API (`solvers.create`, `solvers.describe`, `Simulation.device_fields`) and the
app's own hand-over pieces (frames, transfer, export), which are what it measures.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time

import numpy as np

from pdestudio import solvers
from pdestudio.app.frames import (CallSizer, FramePacer, Mailbox, RunAhead, SimInfo,
                                  switch_interval)
from pdestudio.app.transfer import make_copier

from ..timing import synchronize


def plain_rate(sim, seconds: float) -> tuple[float, int]:
    n, steps, t0 = 1, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        sim.step(n)
        steps += n
        n = min(2 * n, 4096)
    synchronize()
    return steps / (time.perf_counter() - t0), steps


def handover_rate(sim, seconds: float, names, frame_s: float = 1 / 60, render: bool = False):
    """The worker loop: step ~frame_s of work, publish the newest frame, repeat. The reader
    takes the newest frame every frame_s and reads it, or (render=True) draws it with the
    window's view on an offscreen OpenGL canvas (EGL), as fast as it can."""
    box, copier = Mailbox(), make_copier(sim.backend)
    taken, stop, ready = [0], threading.Event(), threading.Event()
    transfer, draw, how = [], [], [None]
    info = SimInfo.of(sim)

    def screen():
        r = None
        try:
            if render:
                from pdestudio.app.export import Renderer
                r = Renderer(None, info.default_field, size=(832, 640), info=info)
                how[0] = r.how
        finally:
            ready.set()
        while not stop.is_set():
            f = box.take()
            if f is not None:
                t0 = time.perf_counter()
                if r is None:
                    for a in f.fields.values():
                        float(np.nanmax(a))  # touch the data like the colour range does
                elif r.canvas is not None:
                    r.view.set_frame(f, r.field, r.scale)
                    r.canvas.render(alpha=False)
                else:
                    from pdestudio.app.software import render_software
                    render_software(info, f, r.field, r.scale, r.size)
                draw.append(time.perf_counter() - t0)
                f.done()
                taken[0] += 1
            if r is None or f is None:
                time.sleep(frame_s if r is None else 0.001)
        if r is not None:
            r.close()

    th = threading.Thread(target=screen, daemon=True)
    th.start()
    ready.wait()
    chunk, steps, frames = 1, 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        c0 = time.perf_counter()
        sim.step(chunk)
        steps += chunk
        if time.perf_counter() - c0 < 0.5 * frame_s:
            chunk *= 2
        done = copier.poll()
        if done is not None:
            transfer.append(done.transfer_s)
            box.put(done)
        if copier.submit(sim.device_fields(names), sim.t, sim.steps, 0):
            frames += 1
        if not copier.busy:
            f = copier.poll(wait=True)
            transfer.append(f.transfer_s)
            box.put(f)
    synchronize()
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    return {"steps_per_s": steps / wall, "steps": steps, "frames_copied_per_s": frames / wall,
            "frames_shown_per_s": taken[0] / wall, "dropped": box.dropped,
            "transfer_ms_median": 1e3 * float(np.median(transfer)) if transfer else None,
            "draw_ms_median": 1e3 * float(np.median(draw)) if draw else None,
            "drawn_by": how[0], "steps_per_frame": chunk}


def paced_frames(box, stop, fps: float):
    """The screen thread's loop: the newest frame of `box`, at most `fps` times a second, until
    `stop` is set."""
    due = time.perf_counter()
    while not stop.is_set():
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
            continue
        due = max(due + 1.0 / fps, now)
        f = box.take()
        if f is not None:
            yield f


def frame_of_steps(sim, sizer: CallSizer, frame_s: float, call_s: float,
                   device: list | None = None, before_call=None,
                   ahead: RunAhead | None = None, period: float = 0.0) -> tuple[int, float]:
    """The window's solver thread (app/solver_loop.py, steps per frame = auto) for one frame:
    calls sized by `sizer` (app/frames.py CallSizer) to land the frame's stepping on `frame_s`,
    each at most `call_s`; with `ahead` (a RunAhead, CuPy, where the simulation runs ahead) one
    call that starts the next frame's steps. Returns (steps, seconds in the calls). `device`: a
    one-element list the calls' device seconds (the simulation's `kernel_s`, from its CUDA
    events on the GPU) are added to. `before_call`: called before each call."""
    steps, stepping, c0 = 0, 0.0, time.perf_counter()
    ahead = ahead if sizer.settled else None
    while k := sizer.next(steps, time.perf_counter() - c0, frame_s):
        if before_call is not None:
            before_call()
        s0 = time.perf_counter()
        if ahead is not None:
            k, wall = ahead.call(sim, sizer, k, period)
        else:
            sim.step(k)
            wall = time.perf_counter() - s0
        steps += k
        if device is not None:
            device[0] += sim.stats.get("kernel_s", 0.0)
        stepping += time.perf_counter() - s0
        sizer.called(k, wall, call_s)
        if ahead is not None:
            break
    return steps, stepping


def hand_over(sim, copier, box, names) -> None:
    """The newest frame into `box` as the window's solver thread hands it over."""
    done = copier.poll()
    if done is not None:
        box.put(done)
    copier.submit(sim.device_fields(names), sim.t, sim.steps, 0)
    if not copier.busy:
        box.put(copier.poll(wait=True))


# The GPU time of the draw is measured on one frame in this many: its query's result is waited
# for before the frame's glFinish, one more turn of the OpenGL context on the GPU that the window
# does not take (measured on every frame, mean curvature 1024² kept 87.0-89.0 % against
# 89.3-90.6 % untimed: docs/BENCHMARKS.md, "The screen's turns on the GPU").
GPU_TIMED_EVERY = 16


def drawing_rate(sim, seconds: float, fps: float = 60.0, path: str = "pinned",
                 pace: str = "smooth", run_ahead: bool = True) -> dict:
    """The window's solver loop (app/worker.py's pace with steps per frame = auto: chunks of
    steps for AUTO_FRAME_S, then a frame; `handover_rate` keeps the older one-chunk-per-frame
    loop its recorded figures were measured with) while a screen thread draws the newest frame
    at most `fps` times a second with the window's view on an offscreen canvas (EGL). `path`: 'pinned'
    (host frames: pinned copies on CuPy, plain copies on NumPy) or 'interop' (device frames
    copied into the view's textures through CUDA–OpenGL interop, where the canvas can)."""
    from pdestudio.app.views import ColorScale, interop, make_view

    from .offscreen import GpuTimer, draw, offscreen_canvas, renderer_name
    info = SimInfo.of(sim)
    box, stop, ready = Mailbox(), threading.Event(), threading.Event()
    state: dict = {"draw": [], "handover": [], "shown": 0, "gpu": []}
    sys.setswitchinterval(switch_interval(sim.backend))  # as the window's solver thread
    pacer = FramePacer(pace)  # the worker's frame pace (app/frames.py)

    def screen():
        try:
            canvas = offscreen_canvas()
            canvas.render()
            view = make_view(canvas, info)
            if path == "interop":
                state["path"], state["why"] = interop.transfer_path(canvas, sim.backend)
            else:
                state["path"] = "pinned" if sim.backend == "cupy" else "host"
                state["why"] = "asked for"
            state["names"] = view.needed(info.default_field)
            state["drawn_by"] = "VisPy/OpenGL (EGL, offscreen) on " + renderer_name()
        except Exception as e:  # noqa: BLE001  (reported in the row)
            state["error"] = f"{type(e).__name__}: {e}"
            return
        finally:
            ready.set()
        scale = ColorScale()
        session = interop.session(canvas)
        timer = GpuTimer()
        for f in paced_frames(box, stop, fps):
            t0 = time.perf_counter()
            view.set_frame(f, info.default_field, scale)
            timed = state["shown"] % GPU_TIMED_EVERY == 0
            draw(canvas, timer if timed else None)
            state["draw"].append(time.perf_counter() - t0)
            pacer.drawn(state["draw"][-1])
            if timed and timer.ms is not None:
                state["gpu"].append(timer.ms / 1e3)
            f.done()
            state["shown"] += 1
            gpu_copy = session.last_copy_ms / 1e3 if session is not None and \
                session.last_copy_ms is not None else 0.0
            state["handover"].append(f.transfer_s + gpu_copy + view.upload_s)
        state["geometry"] = getattr(view, "geometry", "")
        view.remove()
        canvas.close()

    th = threading.Thread(target=screen, daemon=True)
    th.start()
    ready.wait()
    if "error" in state:
        raise RuntimeError(f"no offscreen drawing: {state['error']}")
    copier = make_copier(sim.backend, state["path"])
    names = state["names"]
    # two frames through the whole path before timing: the first draws compile the shaders and
    # render the glyphs (GIL-heavy Python that the window pays once, not per frame)
    for k in range(2):
        copier.submit(sim.device_fields(names), sim.t, sim.steps, 0)
        box.put(copier.poll(wait=True))
        w0 = time.perf_counter()
        while state["shown"] <= k and time.perf_counter() - w0 < 30:
            time.sleep(0.01)
    for key in ("draw", "handover", "gpu"):
        state[key].clear()
    state["shown"] = 0
    sizer, steps, made, stepping = CallSizer(), 0, 0, 0.0
    ahead = RunAhead() if run_ahead and sim.backend == "cupy" and sim.runs_ahead else None
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s0 = time.perf_counter()
        was = sizer.settled
        n, _ = frame_of_steps(sim, sizer, pacer.frame_s, pacer.call_s, ahead=ahead,
                              period=pacer.period_s)
        s1 = time.perf_counter()
        # the window's loop sets the hand-over aside (run ahead: frames from end to end)
        if ahead is not None:
            pacer.stepped(*ahead.frame(s0, pacer.period_s, was))
        else:
            pacer.stepped(s0, s1)
        stepping += s1 - s0
        steps += n
        made += 1
        hand_over(sim, copier, box, names)
    wall = time.perf_counter() - t0  # the last call's steps are done
    if ahead is not None:
        sim.settle()  # the steps started ahead are not counted
    synchronize()
    stop.set()
    th.join()
    box.clear()
    med = (lambda xs: 1e3 * float(np.median(xs)) if xs else float("nan"))  # noqa: E731
    return {"steps_per_s": steps / wall, "steps": steps, "frames_shown_per_s":
            state["shown"] / wall, "draw_ms_median": med(state["draw"]),
            "gpu_draw_ms_median": med(state["gpu"]),
            "handover_ms_median": med(state["handover"]), "path_used": state["path"],
            "path_reason": state["why"], "drawn_by": state["drawn_by"],
            "steps_per_frame": sizer.chunk, "pace": pacer.describe(),
            "frames_made_per_s": made / wall, "stepping_ms_mean": 1e3 * stepping / max(1, made),
            "frame_s_ms": 1e3 * pacer.frame_s, "aside_ms": 1e3 * pacer.aside_s,
            "run_ahead": ahead is not None,
            "geometry": state.get("geometry", "")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--render", action="store_true",
                    help="draw every frame taken with the window's view (offscreen OpenGL)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    rows = []
    for model in a.models:
        schema = solvers.describe(model)
        sim = solvers.create(model, backend=a.backend, dtype=a.dtype,
                             **{schema["size_param"]: a.size})
        sim.step(1)  # compile kernels
        names = list(dict.fromkeys(schema["surfaces"] + [schema["default_field"]]))
        rate, steps = plain_rate(sim, a.seconds)
        h = handover_rate(sim, a.seconds, names, render=a.render)
        row = {"model": model, "size": a.size, "backend": sim.backend, "dtype": sim.dtype,
               "fields": names, "plain_steps_per_s": rate, **h}
        rows.append(row)
        print(f"{model} {a.size} {sim.backend} {sim.dtype}: alone {rate:.4g} steps/s; with "
              f"hand-over of {names} {h['steps_per_s']:.4g} steps/s, "
              f"{h['frames_copied_per_s']:.3g} frames/s copied, {h['frames_shown_per_s']:.3g} "
              f"taken by a 60 Hz reader, {h['dropped']} dropped, transfer "
              f"{h['transfer_ms_median']} ms (median)"
              + (f", drawn by {h['drawn_by']} in {h['draw_ms_median']} ms (median)"
                 if a.render else ""), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
