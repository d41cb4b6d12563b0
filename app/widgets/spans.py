"""The span of a numeric parameter's slider (Qt-free: the window's sliders, widgets/slider.py, and
the notebook's, app/notebook/, both use it): the parameter's schema range (`describe()`
"range"/"open"; an open-ended range becomes a span around the default), on a log scale where the
range covers more than two decades of positive values."""
from __future__ import annotations

STEPS = 1000


def span(d: dict, value) -> tuple[float, float, bool] | None:
    """(lo, hi, log) of the slider for a parameter description, or None for no slider."""
    if d.get("type") not in ("int", "float") or d.get("choices"):
        return None
    lo, hi = (d.get("range") or [None, None])
    lo_open, hi_open = (d.get("open") or [False, False])
    ref = value if value is not None else d.get("default")
    ref = float(ref) if ref is not None else 1.0
    if hi is None and ref > 0 and (lo is None or lo >= 0):
        # open above: two decades either side of the value, on a log scale
        lo2 = ref / 100 if lo is None else max(float(lo), ref / 100)
        if lo2 <= 0 or (lo is not None and lo_open and lo2 == lo):
            lo2 = ref / 100
        return lo2, ref * 100, True
    if lo is None and hi is None:
        w = max(abs(ref), 1.0)
        lo, hi = ref - w, ref + w
    elif hi is None:
        hi = max(float(lo) + 1.0, 10 * abs(float(lo)))
    elif lo is None:
        lo = min(float(hi) - 1.0, -10 * abs(ref), -10 * abs(float(hi)))
    lo, hi = float(lo), float(hi)
    if not hi > lo:
        return None
    log = lo > 0 and hi / lo > 100
    if lo_open and not log:
        lo += (hi - lo) / STEPS
    if hi_open:
        hi -= (hi - lo) / STEPS
    if d.get("type") == "int" and hi - lo < 1:
        return None
    return lo, hi, log
