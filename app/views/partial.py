"""Partial redraws: a new frame redraws only the parts of the picture that change with it.

A view's picture is mostly decoration that a new frame leaves as it was: axes, tick labels,
the colour bar's ticks, the grid's layout. VisPy draws every visual of the canvas for every
frame, and in Python each visual costs about a third of a millisecond to issue (its transforms,
uniforms and GL state), so the decorations were most of a frame's time on a GPU (issue 15: a
1024² surface took 10 ms a frame, of which the GPU drew 1.7 ms). Here, when nothing but the
view's live regions changed since the last full draw, a frame clears and redraws only those
regions (`View.live_regions()`: the title, the view boxes holding the field, and the colour bar
when it changed, as its `changed` flag says), each inside its own rectangle (a scissored clear);
the pixels around them stay as they were.

A full draw is made whenever anything else may have changed: any visual outside the live
regions sent an update (text, data, transform: a camera move updates the 2D axes), the scene's
topology or the canvas's size changed, a live region moved, the draw goes to an offscreen
framebuffer (`canvas.render`, exports: those always draw everything), or FULL_EVERY frames
passed. Partial draws need a framebuffer that keeps its pixels between frames: they are used
only on canvases marked with `keep_pixels` (the window's, after it asked Qt to keep them; the
benchmarks' EGL pbuffers); everywhere else every frame is a full draw.
"""
from __future__ import annotations

import weakref

FULL_EVERY = 120  # frames between two full draws at most (a bound on any staleness)

_KEEPS: "weakref.WeakSet" = weakref.WeakSet()
_INSTALLED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def keep_pixels(canvas) -> None:
    """Mark `canvas` as one whose framebuffer keeps its pixels from one draw to the next."""
    _KEEPS.add(canvas)


def keeps_pixels(canvas) -> bool:
    return canvas in _KEEPS


class PartialDraw:
    """Installed on a canvas by a view (`install`); replaces the canvas's scene draw."""

    def __init__(self, canvas, view):
        self.canvas = canvas
        self.view = weakref.ref(view)
        self.dirty = True
        self.signature = None
        self.since_full = 0
        self.partial_frames = 0
        self.full_frames = 0
        self._watched: list = []
        self._rects: dict = {}
        self._order_key = None
        self._full_draw = type(canvas)._draw_scene.__get__(canvas)
        canvas._draw_scene = self._draw_scene

    def uninstall(self) -> None:
        self._unwatch()
        if self.canvas.__dict__.get("_draw_scene") == self._draw_scene:
            del self.canvas.__dict__["_draw_scene"]

    # -- what may change ------------------------------------------------------------------
    def _mark(self, event=None) -> None:
        self.dirty = True

    def _unwatch(self) -> None:
        for node in self._watched:
            try:
                node.events.update.disconnect(self._mark)
            except Exception:  # noqa: BLE001  (gone already)
                pass
        self._watched = []

    def _watch(self, regions) -> None:
        """Listen to every node outside the live regions (their updates ask for a full draw)."""
        self._unwatch()
        skip = {id(r) for r in regions}
        stack = [self.canvas.scene]
        while stack:
            node = stack.pop()
            if id(node) in skip:
                continue
            node.events.update.connect(self._mark)
            self._watched.append(node)
            stack.extend(node.children)

    def _rect(self, widget):
        """The widget's rectangle in framebuffer pixels (x, y, w, h; y up from the bottom, as
        glScissor takes it: VisPy's framebuffer coordinates are OpenGL's). Mapping through
        VisPy's transforms takes a quarter of a millisecond, so the answer is kept while the
        widget, its parents and the canvas keep their positions and sizes."""
        key = [tuple(self.canvas.physical_size)]
        node = widget
        while node is not None and hasattr(node, "pos"):
            key.append((tuple(node.pos), tuple(node.size)))
            node = node.parent
        key = tuple(key)
        got = self._rects.get(id(widget))
        if got is not None and got[0] == key:
            return got[1]
        rect = self._map_rect(widget)
        self._rects[id(widget)] = (key, rect)
        return rect

    def _map_rect(self, widget):
        tr = widget.transforms.get_transform("visual", "framebuffer")
        r = widget.rect
        (x0, y0), (x1, y1) = (tr.map((r.left, r.bottom))[:2], tr.map((r.right, r.top))[:2])
        xa, xb = sorted((int(round(x0)), int(round(x1))))
        ya, yb = sorted((int(round(y0)), int(round(y1))))
        return (xa, ya, xb - xa, yb - ya)

    # -- drawing --------------------------------------------------------------------------
    def _draw_scene(self, bgcolor=None):
        canvas = self.canvas
        view = self.view()
        regions = view.live_regions() if view is not None else None
        if (regions is None or not keeps_pixels(canvas) or canvas._fb_stack
                or canvas.scene not in canvas._draw_order):
            return self._full(bgcolor, regions)
        rects = [self._rect(r) for r in regions]
        signature = (tuple(canvas.physical_size), tuple(rects),
                     id(canvas._draw_order[canvas.scene]))
        if self.dirty or signature != self.signature or self.since_full >= FULL_EVERY:
            return self._full(bgcolor, regions)
        from vispy.color import Color
        from vispy.gloo import gl
        ctx = canvas.context
        rgba = Color(canvas._bgcolor if bgcolor is None else bgcolor).rgba
        for region, (x, y, w, h) in zip(regions, rects):
            if not getattr(region, "changed", True):  # (the colour bar, when it did not change)
                continue
            ctx.flush_commands()  # what was queued before runs before the clear
            gl.glEnable(gl.GL_SCISSOR_TEST)
            gl.glScissor(x, y, w, h)
            gl.glClearColor(*(float(v) for v in rgba))
            gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
            gl.glDisable(gl.GL_SCISSOR_TEST)
            if region not in canvas._draw_order:
                canvas._draw_order[region] = canvas._generate_draw_order(region)
            canvas.draw_visual(region)
            if hasattr(region, "changed"):
                region.changed = False
        self.since_full += 1
        self.partial_frames += 1

    def _full(self, bgcolor, regions):
        canvas = self.canvas
        self._full_draw(bgcolor=bgcolor)
        if canvas._fb_stack:  # an offscreen render: says nothing about the canvas's pixels
            return
        self.full_frames += 1
        if regions is None:
            return
        key = id(canvas._draw_order.get(canvas.scene))
        if key != self._order_key:  # new topology: watch the nodes there are now
            self._watch(regions)
            self._order_key = key
        self.signature = (tuple(canvas.physical_size), tuple(self._rect(r) for r in regions),
                          key)
        self.since_full = 0
        self.dirty = False
        for region in regions:
            if hasattr(region, "changed"):
                region.changed = False


def install(canvas, view) -> PartialDraw:
    """Partial redraws of `view` on `canvas` (replacing any installed before)."""
    old = _INSTALLED.get(canvas)
    if old is not None:
        old.uninstall()
    p = _INSTALLED[canvas] = PartialDraw(canvas, view)
    return p


def uninstall(canvas, view) -> None:
    p = _INSTALLED.get(canvas)
    if p is not None and p.view() is view:
        p.uninstall()
        del _INSTALLED[canvas]


def installed(canvas) -> PartialDraw | None:
    return _INSTALLED.get(canvas)
