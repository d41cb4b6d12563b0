"""solvers.float32_frame: a live-view frame in one launch a field (float32 copy and finite
range) equals NumPy's float32 cast and finite min/max, on random data with NaN, ±inf, -0 and
negative values, for float32 and float64 fields, contiguous or not, across repeated frames (the
kernel's scratch must come back to its resting state) and grids of more blocks than it launches."""
import numpy as np
import pytest

from pdestudio import solvers


def _reference(a: np.ndarray):
    f = a.astype(np.float32)
    fin = f[np.isfinite(f)]
    return f, ((float(fin.min()), float(fin.max())) if fin.size else (np.inf, -np.inf))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frames_equal_numpy_cast_and_finite_range(dtype):
    import cupy as cp
    rng = np.random.default_rng(7)
    sizes = {"big": (700, 1300), "odd": (3, 5), "one": (1,), "line": (1 << 20,)}
    into, scratch = {}, solvers.frame_scratch(len(sizes) + 3)
    ranges = cp.empty(2 * (len(sizes) + 3), cp.float32)
    for frame in range(4):  # the scratch is reused: every frame must start from rest
        host = {k: (rng.standard_normal(s) * 10.0 ** rng.integers(-3, 30)).astype(dtype)
                for k, s in sizes.items()}
        host["big"].flat[rng.integers(0, host["big"].size, 50)] = np.nan
        host["big"].flat[rng.integers(0, host["big"].size, 5)] = np.inf
        host["odd"][1, 2] = -np.inf
        host["one"][0] = -0.0 if frame % 2 else 3.0
        host["allnan"] = np.full(17, np.nan, dtype)
        host["negative"] = -np.abs(rng.standard_normal(5000)).astype(dtype) - 1
        host["strided"] = rng.standard_normal((64, 96)).astype(dtype)
        dev = {k: cp.asarray(v) for k, v in host.items()}
        dev["strided"] = cp.asarray(host["strided"])[:, ::3]  # not contiguous
        host["strided"] = host["strided"][:, ::3]
        if dtype == "float64":  # values beyond float32: the cast overflows to inf, not counted
            host["line"][:3] = [1e300, -1e300, 5e-300]
            dev["line"] = cp.asarray(host["line"])
        out = solvers.float32_frame(dev, into, ranges, scratch)
        got = cp.asnumpy(ranges)
        assert list(out) == list(host)
        for k, (name, a) in enumerate(host.items()):
            ref, (lo, hi) = _reference(a)
            np.testing.assert_array_equal(cp.asnumpy(out[name]), ref, err_msg=name)
            assert out[name].dtype == cp.float32 and out[name].shape == a.shape
            assert (got[2 * k], got[2 * k + 1]) == (np.float32(lo), np.float32(hi)), name
        np.testing.assert_array_equal(
            cp.asnumpy(scratch), [2**31 - 1, -2**31, 0] * (len(sizes) + 3))
