"""What the browser test checks on a live view in the page (the scratch stand-in or the real
pdestudio.show): the canvas shows a picture that changes while running, a slider moved with the
keyboard changes the parameter in the kernel, a brush drag with the mouse changes the field and
the picture along the stroke only, and the picture in the page is the frame the kernel sent."""
import json
import time

import numpy as np

# Kernel-side helpers the checks run in cells (printed results are read back from the page).
KERNEL_HELPERS = r'''
import json as _json, hashlib as _hashlib, time as _time
import numpy as _np
from jupyter_rfb import RemoteFrameBuffer as _RFB

def _rfb(widget):
    if isinstance(widget, _RFB):
        return widget
    for child in getattr(widget, "children", ()):
        found = _rfb(child)
        if found is not None:
            return found

def _fields_digest(sim):
    return {k: _hashlib.sha1(_np.ascontiguousarray(_np.asarray(v)).tobytes()).hexdigest()
            for k, v in sim.fields().items()}

def _blocks(a, n=8):
    a = _np.asarray(a, dtype=float)[..., :3]
    h, w = a.shape[0] // n * n, a.shape[1] // n * n
    return a[:h, :w].reshape(h // n, n, w // n, n, 3).mean(axis=(1, 3))
'''


def write_notebook(path, cells):
    """cells: (source, tags) pairs."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    for source, tags in cells:
        cell = nbformat.v4.new_code_cell(source)
        if tags:
            cell.metadata["tags"] = list(tags)
        nb.cells.append(cell)
    nbformat.write(nb, str(path))


def blocks(a, n=8):
    a = np.asarray(a, dtype=float)[..., :3]
    h, w = a.shape[0] // n * n, a.shape[1] // n * n
    return a[:h, :w].reshape(h // n, n, w // n, n, 3).mean(axis=(1, 3))


def first_picture(page, timeout=60):
    """Wait until the canvas shows a real frame (not jupyter_rfb's 1×1 placeholder)."""
    return page.wait("a frame on the canvas", lambda: (
        (p := page.canvas_pixels()) is not None and p.shape[0] > 16 and p), timeout=timeout)


def check_picture_changes(page):
    """(a) a picture with structure (not blank or uniform) that changes while the solver runs."""
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})",
                               page.element(page.CANVAS))
    p1 = first_picture(page)
    page.shot("notebook_running")
    spread = p1.reshape(-1, 3).std(axis=0).max()
    colours = len(np.unique(p1.reshape(-1, 3), axis=0))
    assert spread > 4 and colours > 50, (spread, colours)
    p2 = page.wait("the picture to change while running", lambda: (
        (p := page.canvas_pixels()) is not None and p.shape == p1.shape
        and np.abs(p - p1).mean() > 0.5 and p), timeout=30)
    return p1, p2


def check_slider(page, name="F", presses=10):
    """(b) arrow keys on the slider's handle change the parameter in the kernel to the value the
    slider's readout shows."""
    from selenium.webdriver.common.keys import Keys
    before = page.run_json(f"print(_json.dumps(sim.params[{name!r}]))")
    handle = page.element(f".pdestudio-param-{name} .noUi-handle")
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", handle)
    handle.click()
    for _ in range(presses):
        handle.send_keys(Keys.ARROW_RIGHT)
        time.sleep(0.05)
    readout = float(page.element(f".pdestudio-param-{name} .widget-readout").text)
    # the kernel receives the key presses' values one by one: wait for the last (under load an
    # intermediate one, 0.045 against the readout's 0.047, was read first)
    after = page.wait("the kernel's parameter to follow the slider", lambda: (
        (v := page.run_json(f"print(_json.dumps(sim.params[{name!r}]))")) != before
        and abs(v - readout) <= 1e-3 * max(1.0, abs(v)) and v), timeout=20)
    assert after > before, (before, after)
    assert abs(after - readout) <= 1e-3 * max(1.0, abs(after)), (after, readout)
    return before, after


def settled_pixels(page, wait=1.0):
    """The canvas's picture once the frames stop changing (jupyter_rfb follows the last JPEG
    with a lossless PNG after 0.3 s)."""
    last = None
    for _ in range(40):
        time.sleep(wait / 2)
        now = page.canvas_pixels()
        if last is not None and now.shape == last.shape and np.array_equal(now, last):
            return now
        last = now
    raise AssertionError("the picture kept changing with the solver paused")


def check_brush(page):
    """(c) Pause from the page, switch the brush on, drag across the canvas's middle: the
    kernel's fields change, the picture changes along the stroke and (nearly) nowhere else,
    and the picture in the page is the frame the kernel last sent."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    ranges = page.driver.find_elements(By.CSS_SELECTOR, ".pdestudio-range select")
    if ranges:  # a fixed colour range: the stroke must not rescale the whole picture
        Select(ranges[0]).select_by_visible_text("fixed")
    page.element(".pdestudio-pause").click()
    page.wait("the view to pause", lambda: page.run_json(
        "print(_json.dumps(view.running))") is False, timeout=20)
    before_fields = page.run_json("print(_json.dumps(_fields_digest(sim)))")
    before = settled_pixels(page)
    page.element(".pdestudio-brush").click()
    img = page.element(page.CANVAS)
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
    w, h = img.size["width"], img.size["height"]
    chain = ActionChains(page.driver, duration=20)
    chain.move_to_element_with_offset(img, -w // 4, 0).click_and_hold()
    for _ in range(20):
        chain.move_by_offset(w // 40, 0).pause(0.04)
    chain.release().perform()
    page.element(".pdestudio-brush").click()
    after_fields = page.wait("the brush to change the fields", lambda: (
        (d := page.run_json("print(_json.dumps(_fields_digest(sim)))")) != before_fields
        and d), timeout=20)
    after = settled_pixels(page)
    page.shot("notebook_brush")
    diff = np.abs(after - before).mean(axis=2)
    H, W = diff.shape
    band = np.zeros_like(diff, dtype=bool)
    band[int(H * 0.3):int(H * 0.7), int(W * 0.2):int(W * 0.8)] = True
    assert diff[band].mean() > 5 * max(diff[~band].mean(), 0.2), (
        diff[band].mean(), diff[~band].mean())
    sent = np.asarray(page.run_json(
        "print(_json.dumps(_blocks(_rfb(view).snapshot().data).tolist()))"))
    assert sent.shape == blocks(after).shape and np.abs(sent - blocks(after)).max() < 1.0
    return before_fields, after_fields


def measure(page, seconds=5.0):
    """Frames/s reaching the page (distinct pictures of the canvas's <img>) and the solver's
    steps/s with the view running, against the solver stepping alone in the kernel."""
    # alone: stepped in calls of ~50 ms as the view's solver loop steps (single steps would
    # add a call's overhead per step that the loop does not pay); each call size is timed on
    # its second call (on a GPU the first call of a new size may capture a CUDA graph, which
    # once stopped the search at a few steps a call: 1,351 steps/s "alone" against 83,928
    # with the view)
    alone = page.run_json(
        "view.pause(); _k = 1\n"
        "while True:\n"
        "    sim.step(_k); _t = _time.perf_counter(); sim.step(_k)\n"
        "    if _time.perf_counter() - _t > 0.05 or _k >= 1 << 16: break\n"
        "    _k *= 2\n"
        "_t0 = _time.perf_counter(); _n0 = sim.steps\n"
        "while _time.perf_counter() - _t0 < 3: sim.step(_k)\n"
        "print(_json.dumps((sim.steps - _n0) / (_time.perf_counter() - _t0)))")
    page.run_cell("view.run(); _time.sleep(1)")
    page.run_cell("_t0 = _time.perf_counter(); _n0 = sim.steps")
    frames = page.count_frames(seconds)
    running = page.run_json(
        "print(_json.dumps((sim.steps - _n0) / (_time.perf_counter() - _t0)))")
    page.shot("notebook_measure")
    page.run_cell("view.pause()")
    return {"frames_per_s": frames["distinct"] / frames["seconds"],
            "loads_per_s": frames["loads"] / frames["seconds"],
            "frame": (frames["width"], frames["height"]),
            "steps_per_s_alone": alone, "steps_per_s_view": running}
