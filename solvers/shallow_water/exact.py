"""Exact solutions of the 1D shallow-water equations over a flat bottom, for the strip tests."""
import numpy as np

G = 9.81


def stoker(x, t, hl, hr, g=G):
    """Dam break over a wet bed (Stoker): depth h(x, t) for h = hl (x < 0), hr (x > 0), u = 0."""
    cl = np.sqrt(g * hl)

    def f(hm):  # rarefaction (left) velocity minus shock (right) velocity at the middle depth
        return 2 * (cl - np.sqrt(g * hm)) - (hm - hr) * np.sqrt(0.5 * g * (hm + hr) / (hm * hr))

    lo, hi = hr, hl
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    hm = 0.5 * (lo + hi)
    um, cm = 2 * (cl - np.sqrt(g * hm)), np.sqrt(g * hm)
    s = hm * um / (hm - hr)  # shock speed from the mass jump
    xi = x / t
    c_fan = (2 * cl - xi) / 3
    return np.select([xi <= -cl, xi <= um - cm, xi <= s], [hl, c_fan**2 / g, hm], hr)


def simple_wave(x, t, h0, g=G, h_inf=1.0):
    """Right-going simple wave (u − 2c = −2c∞ everywhere) with initial depth h0(x): before it
    breaks, c(x, t) = c0(ξ) with x = ξ + (3 c0(ξ) − 2 c∞) t. Returns (h, q)."""
    c_inf = np.sqrt(g * h_inf)
    xi = np.array(x, dtype=float)
    for _ in range(100):  # Newton on F(ξ) = ξ + (3 c0(ξ) − 2c∞) t − x
        e = 1e-7
        c0 = np.sqrt(g * h0(xi))
        F = xi + (3 * c0 - 2 * c_inf) * t - x
        dF = 1 + 3 * t * (np.sqrt(g * h0(xi + e)) - np.sqrt(g * h0(xi - e))) / (2 * e)
        xi = xi - F / dF
    h = h0(xi)
    u = 2 * (np.sqrt(g * h) - c_inf)
    return h, h * u


GAUSS3 = (np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)]) / 2, np.array([5, 8, 5]) / 18)


def cell_average(f, x, dx):
    """Cell averages of f over [x − dx/2, x + dx/2] by 3-point Gauss (f returns a tuple)."""
    pts, w = GAUSS3
    vals = [f(x + p * dx) for p in pts]
    return tuple(sum(wk * v[m] for wk, v in zip(w, vals)) for m in range(len(vals[0])))
