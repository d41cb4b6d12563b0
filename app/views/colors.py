"""Colour scales shared by the window, the headless renderer and the software fallback.

A `ColorScale` is a colormap name plus a range mode: 'auto' (the data's min..max each frame),
'fixed' (lo..hi as given) or 'symmetric' (−m..m with m = max |data|). Colours come from a
256-entry lookup table of VisPy's colormap: the views' fragment shaders look the same table up
(as a 256×1 texture, entry floor((v − lo)·255/(hi − lo)) clipped to 0..255, NaN → entry 0), so
the OpenGL views and the software renderer show the same colours.

`finite_range` is the (min, max) of an array's finite values, computed once per frame where the
frame is made (the solver thread; on the GPU for CuPy frames): a view then needs only these two
numbers per field, never a pass over the data on the GUI thread. `ticks` and `compact` label
colour bars and axes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

COLORMAPS = ("viridis", "coolwarm", "RdBu", "fire", "ice", "grays", "hot", "cubehelix", "husl")
RANGE_MODES = ("auto", "fixed", "symmetric")
LUT_SIZE = 256


# viridis at 0, 1/4, 1/2, 3/4, 1: the table used where VisPy itself cannot be imported (a
# headless machine without fontconfig), so the software renderer still works.
_VIRIDIS = ((0.267, 0.005, 0.329), (0.229, 0.322, 0.546), (0.128, 0.567, 0.551),
            (0.369, 0.789, 0.383), (0.993, 0.906, 0.144))


def check_cmap(name) -> str:
    """`name` if it is one of COLORMAPS, else ParameterError naming the allowed ones."""
    if name not in COLORMAPS:
        from pdestudio.solvers import ParameterError
        raise ParameterError(f"colour map {name!r} is unknown; allowed: " + ", ".join(COLORMAPS))
    return name


def check_range_mode(mode) -> str:
    if mode not in RANGE_MODES:
        from pdestudio.solvers import ParameterError
        raise ParameterError(f"colour range mode {mode!r} is unknown; allowed: "
                             + ", ".join(RANGE_MODES))
    return mode


@functools.lru_cache(maxsize=None)
def lut(name: str) -> np.ndarray:
    """(256, 4) float32 RGBA table of one of COLORMAPS (ParameterError for another name).
    VisPy's maps are sampled at a column of positions: 'fire' and 'hot' (VisPy 0.17) broadcast
    a flat vector of positions against their colours and raise."""
    check_cmap(name)
    s = np.linspace(0.0, 1.0, LUT_SIZE)
    try:
        from vispy.color import get_colormap
        return np.asarray(get_colormap(name).map(s[:, None]),
                          dtype=np.float32).reshape(LUT_SIZE, 4)
    except (ImportError, OSError):
        a = np.asarray(_VIRIDIS)
        knots = np.linspace(0.0, 1.0, len(a))
        rgb = np.column_stack([np.interp(s, knots, a[:, k]) for k in range(3)])
        return np.column_stack([rgb, np.ones(LUT_SIZE)]).astype(np.float32)


@dataclass
class ColorScale:
    """A colour map of COLORMAPS and a range mode of RANGE_MODES: any other name is refused
    (ParameterError) when set, so no view is ever asked to draw with it."""
    cmap: str = "viridis"
    mode: str = "auto"
    lo: float = 0.0
    hi: float = 1.0

    def __setattr__(self, key, value):
        if key == "cmap":
            check_cmap(value)
        elif key == "mode":
            check_range_mode(value)
        super().__setattr__(key, value)

    def limits(self, *arrays: np.ndarray) -> tuple[float, float]:
        """The colour range for this data under the current mode (never empty)."""
        if self.mode == "fixed":
            lo, hi = self.lo, self.hi
        else:
            finite = [a[np.isfinite(a)] for a in arrays if a is not None and a.size]
            finite = [a for a in finite if a.size]
            if not finite:
                return (0.0, 1.0)
            if self.mode == "symmetric":
                m = max(float(np.abs(a).max()) for a in finite)
                lo, hi = -m, m
            else:
                lo = min(float(a.min()) for a in finite)
                hi = max(float(a.max()) for a in finite)
        if not hi > lo:
            pad = max(abs(lo), 1.0) * 1e-6
            lo, hi = lo - pad, hi + pad
        return lo, hi

    def limits_of(self, ranges) -> tuple[float, float]:
        """The colour range from per-array (finite min, finite max) pairs (None: no finite
        value), under the current mode; the same answer as `limits` on the arrays."""
        if self.mode == "fixed":
            return self.limits()
        got = [r for r in ranges if r is not None]
        if not got:
            return (0.0, 1.0)
        lo, hi = min(r[0] for r in got), max(r[1] for r in got)
        if self.mode == "symmetric":
            m = max(abs(lo), abs(hi))
            lo, hi = -m, m
        if not hi > lo:
            pad = max(abs(lo), 1.0) * 1e-6
            lo, hi = lo - pad, hi + pad
        return lo, hi

    def rgba(self, values: np.ndarray, limits: tuple[float, float]) -> np.ndarray:
        """RGBA float32 colours of `values` (any shape -> shape + (4,))."""
        lo, hi = limits
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            idx = (np.asarray(values, dtype=np.float64) - lo) * ((LUT_SIZE - 1) / (hi - lo))
        idx = np.nan_to_num(idx, nan=0.0, posinf=LUT_SIZE - 1, neginf=0.0)
        idx = np.clip(idx, 0, LUT_SIZE - 1).astype(np.intp)
        return lut(self.cmap)[idx]


def finite_range(a) -> tuple[float, float] | None:
    """(min, max) of the finite values of a NumPy array; None when there is none. Two plain
    reductions when the data is finite (the usual case), a masked pass only otherwise."""
    a = np.asarray(a)
    if a.size == 0:
        return None
    lo, hi = float(a.min()), float(a.max())
    if np.isfinite(lo) and np.isfinite(hi):
        return lo, hi
    f = a[np.isfinite(a)]
    return (float(f.min()), float(f.max())) if f.size else None


def decimate(n: int, limit: int) -> int:
    """The stride that brings n samples down to at most `limit`."""
    return max(1, -(-n // limit))


def ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """'Nice' values (1, 2, 2.5 or 5 times a power of ten apart) inside [lo, hi], at most
    `most` of them and at least two where the range allows."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or not hi > lo:
        return [lo] if np.isfinite(lo) else []
    raw = (hi - lo) / max(most - 1, 1)
    mag = 10.0 ** np.floor(np.log10(raw))
    steps = [m * mag for m in (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0)]
    k = next(i for i, st in enumerate(steps) if st >= raw)
    while True:  # the coarsest nice step at least `raw`, finer while it gives fewer than two
        step = steps[k]
        first = np.ceil(lo / step - 1e-9) * step
        out = [first + j * step for j in range(int((hi - first) / step + 1e-9) + 1)]
        out = [0.0 if abs(v) < 1e-12 * step else float(v) for v in out
               if lo - 1e-9 * step <= v <= hi + 1e-9 * step]
        if len(out) >= 2 or k == 0:
            return out
        k -= 1


def compact(v: float, digits: int = 3) -> str:
    """A short label: 3 significant digits, exponents without '+' or leading zeros
    (5.88e+27 -> '5.88e27', 1.5e-05 -> '1.5e-5')."""
    if not np.isfinite(v):
        return str(v)
    s = f"{v:.{digits}g}"
    if "e" in s:
        mant, exp = s.split("e")
        s = f"{mant}e{int(exp)}"
    return s


def end_label(v: float, tick_texts) -> str:
    """The label of a colour bar's end: `compact`, with more digits while it would read like
    one of the ticks' labels (an end at 1.0802 beside a tick at 1.08: '1.0802')."""
    s = compact(v)
    for digits in range(4, 13):
        if s not in tick_texts:
            break
        s = compact(v, digits)
    return s


def tick_labels(values) -> list[str]:
    """Labels of evenly spaced tick values with just enough digits to tell them apart (at
    least three significant), each as short as `compact` makes it."""
    values = [float(v) for v in values]
    digits = 3
    if len(values) > 1:
        step = min(abs(b - a) for a, b in zip(values, values[1:])) or 1.0
        big = max(abs(v) for v in values) or step
        digits = min(12, max(3, int(np.floor(np.log10(big))) - int(np.floor(np.log10(step))) + 1))
    return [compact(v, digits) for v in values]
