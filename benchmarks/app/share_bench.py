"""Where the solver's share goes while the screen draws (issue 25): the window's solver loop
(calls of steps for AUTO_FRAME_S, then a frame handed over) beside a screen thread doing one of

    nothing   no frames at all (the loop's own cost: calls that end in a host wait)
    none      frames made and taken, nothing drawn (the hand-over: snapshot, ranges, events)
    copy      frames copied into the view's textures (interop), nothing drawn
    draw      frames drawn by the window's view (VisPy on EGL), at most CAP frames/s
    burn      frames taken, nothing drawn; instead VIEW_MODE milliseconds of pure Python (the
              GIL held, no GPU work) a frame: what the draw's Python alone would cost the solver
    serial    as draw, but the OpenGL work and the solver's calls take turns on the GPU: the
              frame's interop copy (and so the draw after it) waits, on the GPU, for the work
              the solver has queued when the screen starts the frame, and the solver's next
              call waits, on the GPU, for the draw (an interop map after the draw's commands
              were issued: "graphics calls issued before complete before later CUDA work")

each after the view drew two warm-up frames, measured against the solver alone (before and
after), with the time the solver thread spends stepping and handing over. On the GPU each row
also splits the loss: the device time a step takes (from the simulation's CUDA events, which
count whatever else the GPU ran between a chunk's start and end: the screen's OpenGL work
time-sliced in) against the solver alone, and the share of the wall the solver's chunks kept
the device busy (the rest: gaps between chunks, while the host waits, hands over or wants
the GIL).

    python -m benchmarks.app.share_bench mean-curvature,shallow-water --size 1024 \
        --variants none:60,draw:15,draw:30,draw:30:image,draw:15::0.0001

A variant is MODE:CAP[:VIEW_MODE[:SWITCH_INTERVAL[:FRAME_MS]]] (FRAME_MS: the solver's stepping
time per frame, the window's AUTO_FRAME_S by default; calls into the solver last as long). It uses the public API (`solvers.create`,
`Simulation.device_fields`) and the app's hand-over and view pieces, which are what it measures.

The serial mode reaches into the interop session (`mark_after_gl`: its copy stream and
registered textures), the app's own piece it experiments with. Beyond the public API it
imports `pdestudio.solvers.core.checks` for `--checks-after` alone:
the switch that puts a chunk's checks back after its wait, to measure what queueing them
ahead changes.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time

import numpy as np

from pdestudio import solvers
from pdestudio.app.frames import AUTO_FRAME_S, CallSizer, Mailbox, SimInfo, switch_interval
from pdestudio.app.transfer import make_copier

from ..timing import synchronize
from .handover_bench import frame_of_steps, hand_over, paced_frames, plain_rate
from .offscreen import GpuTimer, draw, offscreen_canvas


def run(sim, seconds: float, mode: str, fps: float, frame_s: float = AUTO_FRAME_S,
        call_s: float = AUTO_FRAME_S, view_mode: str | None = None,
        switch: float | None = None) -> dict:
    """One variant (see the module docstring); rates over `seconds` after the warm-up."""
    from pdestudio.app.views import ColorScale, interop, make_view
    info = SimInfo.of(sim)
    box, stop, ready = Mailbox(), threading.Event(), threading.Event()
    st = {"draw": [], "gpu": [], "cpu": [], "shown": 0}
    burn_s = float(view_mode) / 1e3 if mode == "burn" else 0.0
    serial = mode == "serial"
    mode = "draw" if serial else mode
    turn: dict = {"gl": None}  # serial: the event after the screen's last draw
    compute = None
    if serial:
        import cupy as cp
        compute = cp.cuda.get_current_stream()
    view_mode = None if mode == "burn" else view_mode
    sys.setswitchinterval(switch if switch is not None else switch_interval(sim.backend))

    def screen():
        canvas = offscreen_canvas()
        canvas.render()
        view = make_view(canvas, info, view_mode) if view_mode else make_view(canvas, info)
        st["names"] = view.needed(info.default_field)
        st["path"] = interop.transfer_path(canvas, sim.backend)[0]
        scale, timer = ColorScale(), GpuTimer()
        ready.set()
        for f in paced_frames(box, stop, fps):
            t0, c0 = time.perf_counter(), time.thread_time()
            if mode == "burn":
                x, end = 0, t0 + burn_s
                while time.perf_counter() < end:
                    x += 1
            if serial:
                canvas.set_current()
                f.ready = compute.record()  # after whatever the solver has queued by now
            if mode in ("copy", "draw"):
                view.set_frame(f, info.default_field, scale)
            if serial:
                turn["gl"] = draw_then_mark(canvas, timer, interop.session(canvas))
            elif mode == "draw":
                draw(canvas, timer)
                if timer.ms is not None:
                    st["gpu"].append(timer.ms)
            elif mode == "copy":
                from vispy.gloo import gl
                canvas.context.flush_commands()  # host frames: the queued texture uploads
                gl.glFinish()
            st["draw"].append(time.perf_counter() - t0)
            st["cpu"].append(time.thread_time() - c0)
            f.done()
            st["shown"] += 1
        view.remove()
        canvas.close()

    th = threading.Thread(target=screen, daemon=True)
    th.start()
    ready.wait()
    copier = make_copier(sim.backend, st["path"])
    names = st["names"]
    for k in range(3):  # warm-up: the first draws compile shaders and render glyphs, and a
        sim.step(64)    # large mesh's first ones order and cluster it (seconds at 1M cells)
        copier.submit(sim.device_fields(names), sim.t, sim.steps, 0)
        box.put(copier.poll(wait=True))
        w0 = time.perf_counter()
        while mode != "nothing" and st["shown"] <= k and time.perf_counter() - w0 < 60:
            time.sleep(0.01)
        time.sleep(0.3)
    st["draw"].clear()
    st["gpu"].clear()
    st["cpu"].clear()
    st["shown"] = 0
    sizer, steps = CallSizer(), 0
    acc = {"step": 0.0, "submit": 0.0}
    device = [0.0]
    t0 = time.perf_counter()
    def wait_for_draw():
        g, turn["gl"] = turn["gl"], None
        if g is not None:
            compute.wait_event(g)  # on the GPU: the host goes on queueing

    while time.perf_counter() - t0 < seconds:
        n, stepping = frame_of_steps(sim, sizer, frame_s, call_s, device,
                                            before_call=wait_for_draw if serial else None)
        steps += n
        acc["step"] += stepping
        if mode == "nothing":
            continue
        a = time.perf_counter()
        hand_over(sim, copier, box, names)
        acc["submit"] += time.perf_counter() - a
    synchronize()
    wall = time.perf_counter() - t0
    stop.set()
    th.join()
    box.clear()

    def med(xs):
        return float(np.median(xs)) if xs else float("nan")
    return {"mode": "serial" if serial else mode, "fps_cap": fps, "steps_s": steps / wall, "shown_s": st["shown"] / wall,
            "draw_ms": 1e3 * med(st["draw"]), "gpu_ms": med(st["gpu"]), "chunk": sizer.chunk,
            "cpu_ms": 1e3 * med(st["cpu"]),
            "device_us_step": 1e6 * device[0] / steps if steps else float("nan"),
            "device_busy": device[0] / wall,
            **{k: round(v / wall, 4) for k, v in acc.items()}}


def mark_after_gl(session):
    """An event on the interop session's copy stream that completes after the OpenGL work
    issued so far on its canvas's context: an interop map orders it ("graphics calls issued
    before the map complete before later CUDA work in the stream"). None before any texture
    was registered."""
    import ctypes

    from pdestudio.app.views.interop import check
    if not session.resources:
        return None
    session.canvas.set_current()
    session._cuda_current()
    res = next(iter(session.resources.values()))[2]
    one = (ctypes.c_void_p * 1)(res.value)
    s = session.stream
    check(session.fn["cuGraphicsMapResources"](1, one, s.ptr), "cuGraphicsMapResources")
    check(session.fn["cuGraphicsUnmapResources"](1, one, s.ptr), "cuGraphicsUnmapResources")
    return s.record()


def draw_then_mark(canvas, timer, session):
    """`draw`, with an event recorded after the draw's OpenGL commands were issued and an
    interop map made on the copy stream (so the event completes after the draw ran on the
    GPU); returns the event."""
    from vispy.gloo import gl
    canvas.set_current()
    canvas.context.flush_commands()
    timer.begin()
    canvas.events.draw(region=None)
    canvas.context.flush_commands()
    g = mark_after_gl(session)
    timer.end()
    gl.glFinish()
    return g


def device_alone(sim, seconds: float) -> tuple[float, float]:
    """The solver alone as `plain_rate` steps it: (device µs a step, the share of the wall the
    device was busy with its chunks)."""
    n, steps, dev, t0 = 1, 0, 0.0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        sim.step(n)
        steps += n
        dev += sim.stats.get("kernel_s", 0.0)
        n = min(2 * n, 4096)
    synchronize()
    return 1e6 * dev / steps, dev / (time.perf_counter() - t0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", help="comma-separated model names")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--backend", default="cupy")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--variants", default="nothing:60,none:60,copy:60,draw:60,draw:15")
    ap.add_argument("--checks-after", action="store_true",
                    help="the stepping's checks after each chunk's wait, as before 2026-11-27 "
                         "(solvers/core/checks.py AHEAD = False)")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    if a.checks_after:
        from pdestudio.solvers.core import checks
        checks.AHEAD = False
    rows = []
    for model in a.models.split(","):
        schema = solvers.describe(model)
        sim = solvers.create(model, backend=a.backend, dtype=a.dtype,
                             **{schema["size_param"]: a.size})
        sim.step(1)
        plain_rate(sim, 1.0)  # kernels compiled, graphs captured
        alone, _ = plain_rate(sim, a.seconds)
        dev_us, busy = device_alone(sim, a.seconds)
        print(f"{model} {a.size} {sim.backend} {sim.dtype}: alone {alone:.5g} steps/s, device "
              f"{dev_us:.4g} µs a step, busy {100 * busy:.1f} %", flush=True)
        for v in a.variants.split(","):
            mode, cap, vm, sw, fm = (v.split(":") + ["", "", ""])[:5]
            frame_s = float(fm) / 1e3 if fm else AUTO_FRAME_S
            r = run(sim, a.seconds, mode, float(cap), frame_s=frame_s, call_s=frame_s,
                    view_mode=vm or None, switch=float(sw) if sw else None)
            after, _ = plain_rate(sim, a.seconds / 2)
            r.update(model=model, size=a.size, alone_before=alone, alone_after=after,
                     device_us_step_alone=dev_us, device_busy_alone=busy,
                     view_mode=vm or "default", switch=float(sw) if sw else switch_interval(sim.backend),
                     frame_ms=1e3 * frame_s,
                     kept=r["steps_s"] / alone)
            rows.append(r)
            print(f"  {mode:>7} cap {cap:>3} {r['view_mode']:>7} switch {r['switch']:g} frame "
                  f"{r['frame_ms']:.0f} ms: "
                  f"{r['steps_s']:9.5g} steps/s, kept {100 * r['kept']:5.1f} % (alone after "
                  f"{after:.5g}), {r['shown_s']:5.1f} frames/s, draw {r['draw_ms']:6.2f} ms "
                  f"(GPU {r['gpu_ms']:.3g}, screen thread CPU {r['cpu_ms']:.3g}), stepping {100 * r['step']:.1f} % and handing "
                  f"over {100 * r['submit']:.2f} % of the time; device {r['device_us_step']:.4g} µs a step "
                  f"({dev_us:.4g} alone), busy {100 * r['device_busy']:.1f} % of the wall",
                  flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
