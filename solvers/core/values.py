"""Arrays from outside (set_field, initial conditions, painted regions) checked before they touch
a simulation: a real-valued array of the field's shape, finite, and representable in the
simulation's real type. Every refusal is one line naming the field and the expected shape."""
from __future__ import annotations

import numpy as np

from .errors import ParameterError

REAL_KINDS = "biuf"  # bool, integers, floats; not complex, datetime, object, text, records
KIND_NAMES = {"c": "complex numbers", "M": "dates", "m": "time spans", "O": "Python objects",
              "U": "text", "S": "bytes", "V": "records"}


def real_array(values, shape: tuple, where: str, dtype: str = "float64") -> np.ndarray:
    """`values` as a new float64 array of `shape`, or ParameterError: `where` names the field
    (e.g. "heat-1d: field 'T'"); `dtype` is the simulation's real type (its range is checked)."""
    allowed = f"allowed: real numbers (bool, int, float) of shape {shape}"
    if type(values).__module__.split(".")[0] == "cupy":
        values = values.get()
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError, OverflowError, RecursionError) as e:
        why = str(e).splitlines()[0][:80] if str(e) else type(e).__name__
        raise ParameterError(f"{where} got values that are not an array of numbers ({why}); "
                             f"{allowed}") from None
    if arr.dtype.kind not in REAL_KINDS:
        what = KIND_NAMES.get(arr.dtype.kind, str(arr.dtype))
        raise ParameterError(f"{where} got an array of {what} (dtype {arr.dtype}); {allowed}")
    if arr.shape != tuple(shape):
        raise ParameterError(f"{where} got an array of shape {arr.shape}; {allowed}")
    out = arr.astype(np.float64)  # a copy: the caller's array is never shared
    bad = ~np.isfinite(out)
    if bad.any():
        i = np.unravel_index(int(np.argmax(bad)), out.shape)
        raise ParameterError(f"{where} has non-finite values ({int(bad.sum())}, the first "
                             f"{out[i]} at index {tuple(int(k) for k in i)}); allowed: finite "
                             f"numbers, shape {shape}")
    top = float(np.finfo(dtype).max)
    if out.size and np.abs(out).max() > top:
        raise ParameterError(f"{where} has values up to {np.abs(out).max():.3g}, beyond the "
                             f"range of {dtype}; allowed: |values| <= {top:.3g}")
    return out


__all__ = ["real_array"]
