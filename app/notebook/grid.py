"""`ThumbnailGrid`: an ensemble or a sweep folder in a notebook, one thumbnail a member
(docs/NOTEBOOK.md).

An ensemble (`solvers.create_ensemble`) advances in a thread of its own, in chunks of about
0.1 s; every `every_s` seconds the thumbnails are drawn again from the members' fields (the
sweep's thumbnails, app/sweep/thumbs.py: NumPy and Pillow, cheap enough for many members). A
sweep folder (`pdestudio sweep ... --out DIR`) is read again as often, so members that finish
while a sweep runs appear. A click on a thumbnail opens that member's LiveView below the grid:
an ensemble member as a Simulation of its own (its state copied: the ensemble pauses), a sweep
member from its checkpoint. Calls on the ensemble from a cell run in its thread (router.py).
The thumbnails are PNGs (no OpenGL); a click that arrives in one of ipykernel's subshell threads
opens the LiveView in the kernel's main thread (its OpenGL context and scene live there)."""
from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import anywidget
import ipywidgets as w
import traitlets

from pdestudio import solvers

from ..sweep.results import read_sweep
from ..sweep.thumbs import png_bytes, thumbnail
from .router import Router, in_main, main_loop

CHUNK_S = 0.1

_THUMB_JS = """
function render({ model, el }) {
  const img = document.createElement("img");
  const label = document.createElement("div");
  let url = null;
  const update = () => {
    if (url) URL.revokeObjectURL(url);
    url = URL.createObjectURL(new Blob([model.get("png")], { type: "image/png" }));
    img.src = url;
    label.textContent = model.get("label");
  };
  model.on("change:png", update);
  model.on("change:label", update);
  update();
  img.style.display = "block";
  label.style.font = "11px monospace";
  el.style.cursor = "pointer";
  el.style.margin = "3px";
  el.appendChild(img);
  el.appendChild(label);
  el.addEventListener("click", () => model.send({ type: "click" }));
}
export default { render };
"""


class Thumb(anywidget.AnyWidget):
    """A clickable PNG with a label (ipywidgets' Image has no click event)."""

    _esm = _THUMB_JS
    png = traitlets.Bytes(b"").tag(sync=True)
    label = traitlets.Unicode("").tag(sync=True)

    def __init__(self, member: int, on_click, **kw):
        super().__init__(**kw)
        self.member = member
        self.add_class("pdestudio-thumb")
        self._on_click = on_click
        self.on_msg(lambda _w, content, _b: self.click() if content.get("type") == "click"
                    else None)

    def click(self) -> None:
        """What a click in the browser does."""
        self._on_click(self.member)


class ThumbnailGrid(w.VBox):
    def __init__(self, obj, size: int = 128, every_s: float = 0.5):
        super().__init__()
        self.add_class("pdestudio-grid")
        self.size, self.every_s = int(size), float(every_s)
        self.live = None  # the LiveView opened below the grid
        self.refreshes = 0
        self._stop = threading.Event()
        self._q: queue.Queue = queue.Queue()
        self.running = False
        self._main_loop = main_loop()
        if isinstance(obj, (str, Path)):
            self.folder, self.ensemble = Path(obj), None
            self.spec, rows = _read(self.folder)
            self.model = self.spec["model"]
            n, names = len(rows), [v[0] for v in self.spec["vary"]]
        else:
            self.folder, self.ensemble = None, obj
            self.model = obj.model
            n, names = obj.size, solvers.describe(obj.model)["ensemble"]
        self.field = solvers.describe(self.model)["default_field"]
        self._names = names
        self.thumbs = [Thumb(m, lambda m: in_main(self._main_loop, self.open_member, m))
                       for m in range(n)]
        self.title = w.HTML()
        buttons = []
        if self.ensemble is not None:
            run, pause = w.Button(description="Run"), w.Button(description="Pause")
            run.add_class("pdestudio-run")
            pause.add_class("pdestudio-pause")
            run.on_click(lambda _b: self.run())
            pause.on_click(lambda _b: self.pause())
            buttons = [run, pause]
        self.below = w.VBox()
        self.children = [w.HBox([self.title] + buttons),
                         w.Box(self.thumbs, layout={"flex_flow": "row wrap"}), self.below]
        self.refresh()
        self.thread = threading.Thread(target=self._loop, daemon=True, name="pdestudio-grid")
        self.router = Router(self._q.put, lambda: self.thread)
        self.thread.start()
        if self.ensemble is not None:
            self.router.install(self.ensemble, ("step", "advance", "member"))

    # ---- the public interface -----------------------------------------------------------
    def run(self) -> None:
        """Advance the ensemble in the grid's thread (returns at once)."""
        self.running = self.ensemble is not None

    def pause(self) -> None:
        self.running = False
        self.router.call(lambda: None)

    def open_member(self, member: int):
        """Member `member` in a LiveView below the grid (what a click on its thumbnail does)."""
        from .live import LiveView
        self.pause()
        if self.folder is not None:
            sim = solvers.load(self.folder / self._rows[member]["checkpoint"])
        else:
            sim = self.router.call(self._copy_member, member)
        if self.live is not None:
            self.live.close()
        self.live = LiveView(sim)
        self.below.children = [w.HTML(f"<b>member #{member}</b>: {self._label(member)}"),
                               self.live]
        return self.live

    def close(self) -> None:
        if not hasattr(self, "thread"):  # (ipywidgets closes a widget whose __init__ failed)
            return super().close()
        self._stop.set()
        self.router.uninstall()
        self.thread.join(5)
        if self.live is not None:
            self.live.close()
        super().close()

    # ---- the grid's thread --------------------------------------------------------------
    def _loop(self) -> None:
        chunk, last = 1, time.perf_counter()
        while not self._stop.is_set():
            try:
                self._q.get(timeout=0.0 if self.running else 0.05)()
                continue
            except queue.Empty:
                pass
            if self.running:
                t0 = time.perf_counter()
                self.ensemble.step(chunk)
                took = time.perf_counter() - t0
                chunk = max(1, chunk * 2 if took < CHUNK_S / 2 else
                            chunk // 2 if took > 2 * CHUNK_S else chunk)
            if time.perf_counter() - last >= self.every_s and (self.running or self.folder):
                last = time.perf_counter()
                self.refresh()

    def refresh(self) -> None:
        """Draw every thumbnail again (the members' fields now, or the sweep's files)."""
        if self.folder is not None:
            self.spec, rows = _read(self.folder)
            self._rows = {r["member"]: r for r in rows}
            for t in self.thumbs:
                r = self._rows.get(t.member)
                if r is not None and r.get("thumbnail"):
                    png = (self.folder / r["thumbnail"]).read_bytes()
                    if png != t.png:
                        t.png = png
                t.label = f"#{t.member} {self._label(t.member)}" + (
                    " (diverged)" if r is not None and r.get("diverged") else "")
            self.title.value = f"<b>sweep {self.folder.name}</b>: {self.model}, " \
                               f"{len(self._rows)} of {len(self.thumbs)} members finished"
        else:
            ens = self.ensemble
            for t in self.thumbs:
                sim = type(ens).member(ens, t.member)  # (the grid's thread: no routing)
                t.png = png_bytes(thumbnail(sim.mesh, sim.fields()[self.field], self.size))
                t.label = f"#{t.member} {self._label(t.member)}" + (
                    " (diverged)" if ens.diverged[t.member] else "")
            self.title.value = f"<b>{self.model}</b> ensemble of {ens.size}: {self.field}, " \
                               f"t = {float(ens.t.min()):.6g}"
        self.refreshes += 1

    def _label(self, m: int) -> str:
        if self.folder is not None:
            r = self._rows.get(m, {})
            return ", ".join(f"{n}={_short(r.get(n))}" for n in self._names)
        p = self.ensemble.params[m]
        return ", ".join(f"{n}={_short(p[n])}" for n in self._names if n in p and
                         len({_short(q.get(n)) for q in self.ensemble.params}) > 1)

    def _copy_member(self, m: int):
        """A Simulation of its own holding member m's state now."""
        ens = self.ensemble
        snap = type(ens).member(ens, m).snapshot()
        p = {k: v for k, v in ens.params[m].items() if k != "kernel"}
        sim = solvers.create(ens.model, backend=ens.backend, dtype=ens.dtype,
                             scenario=ens.sim.scenario_name, **p)
        sim.restore(snap)
        return sim


def _read(folder: Path):
    try:
        return read_sweep(folder)
    except ValueError as e:
        raise solvers.ParameterError(str(e)) from None


def _short(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
