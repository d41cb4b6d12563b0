"""Colour scales shared by the window, the headless renderer and the software fallback.

A `ColorScale` is a colormap name plus a range mode: 'auto' (the data's min..max each frame),
'fixed' (lo..hi as given) or 'symmetric' (−m..m with m = max |data|). Colours come from a
256-entry lookup table of VisPy's colormap, so the GPU image shader, the per-vertex colours of
surfaces and meshes, and the software renderer all show the same colours.
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


@functools.lru_cache(maxsize=None)
def lut(name: str) -> np.ndarray:
    """(256, 4) float32 RGBA table of a VisPy colormap."""
    s = np.linspace(0.0, 1.0, LUT_SIZE)
    try:
        from vispy.color import get_colormap
        return np.asarray(get_colormap(name).map(s), dtype=np.float32).reshape(LUT_SIZE, 4)
    except (ImportError, OSError):
        a = np.asarray(_VIRIDIS)
        knots = np.linspace(0.0, 1.0, len(a))
        rgb = np.column_stack([np.interp(s, knots, a[:, k]) for k in range(3)])
        return np.column_stack([rgb, np.ones(LUT_SIZE)]).astype(np.float32)


@dataclass
class ColorScale:
    cmap: str = "viridis"
    mode: str = "auto"
    lo: float = 0.0
    hi: float = 1.0

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

    def rgba(self, values: np.ndarray, limits: tuple[float, float]) -> np.ndarray:
        """RGBA float32 colours of `values` (any shape -> shape + (4,))."""
        lo, hi = limits
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            idx = (np.asarray(values, dtype=np.float64) - lo) * ((LUT_SIZE - 1) / (hi - lo))
        idx = np.nan_to_num(idx, nan=0.0, posinf=LUT_SIZE - 1, neginf=0.0)
        idx = np.clip(idx, 0, LUT_SIZE - 1).astype(np.intp)
        return lut(self.cmap)[idx]


def decimate(n: int, limit: int) -> int:
    """The stride that brings n samples down to at most `limit`."""
    return max(1, -(-n // limit))
