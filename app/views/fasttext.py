"""Labels that do not redo unchanged work before every draw.

VisPy's TextVisual, before each draw, maps two points through a chain of three transforms to
find the size of a pixel, and sends seven uniforms again (pixel size, scaling, font kernel,
colour, atlas...), although for a label that did not change none of them changed. On the GPU
machine's CPU that was about half a millisecond a label, and a view draws six or seven labels
a frame: the largest part of a frame's time there (docs/BENCHMARKS.md, issue 15). Here that
step runs only when something it reads changed: the text, its positions or colour (VisPy's own
flags), the document, canvas and framebuffer transforms (a resize, a render into an offscreen
framebuffer), the dpi, font size, font kernel or atlas. Where the label has a document of its
own (or this VisPy lacks what is read), the original runs every time.
"""
from __future__ import annotations

from vispy.visuals.text.text import TextVisual
from vispy.visuals.transforms import NullTransform

_ORIGINAL = TextVisual._prepare_draw


def _key(visual):
    """What the skipped step reads, or None (then it always runs). The document → render
    transform is the canvas's: VisPy builds it from the canvas's size, its stack of offscreen
    framebuffers (each with its offset and size) and its stack of viewports, so those stand in
    for the transform (computing it is the cost this avoids); a visual with a document of its own
    always runs the step."""
    try:
        trs = visual.transforms
        canvas = trs.canvas
        if canvas is None or not _identity(trs.document_transform):
            return None
        fbs = tuple((id(fb), tuple(off), tuple(size)) for fb, off, size in canvas._fb_stack)
        vps = tuple(tuple(v) for v in canvas._vp_stack)
        font = visual._font
        return (tuple(canvas.size), tuple(canvas.physical_size), fbs, vps, trs.dpi,
                visual._font_size, visual._scaling, id(font._kernel), id(font._atlas),
                tuple(font._atlas.shape), visual._color.rgba.tobytes())
    except AttributeError:
        return None


def _identity(tr) -> bool:
    if isinstance(tr, NullTransform):
        return True
    inner = getattr(tr, "transforms", None)
    return inner is not None and all(_identity(t) for t in inner)


def _prepare_draw(self, view):
    if (len(self.text) == 0 or getattr(self, "_vertices", None) is None
            or getattr(self, "_pos_changed", True) or getattr(self, "_color_changed", True)):
        self.__dict__["_pdes_key"] = None  # (VisPy's visuals are frozen to new attributes)
        return _ORIGINAL(self, view)
    key = _key(self)
    if key is not None and key == self.__dict__.get("_pdes_key"):
        return None  # the program still holds every uniform as set last time
    result = _ORIGINAL(self, view)
    self.__dict__["_pdes_key"] = key
    return result


def install() -> None:
    """Use the skipping preparation for every TextVisual of this process (idempotent)."""
    TextVisual._prepare_draw = _prepare_draw


def uninstall() -> None:
    TextVisual._prepare_draw = _ORIGINAL
