"""The node rows a process of a decomposed curvature flow works on (core/decomp.py;
docs/DISTRIBUTED.md, "Mean curvature").

The state φ lives on the (N2+1) × (N1+1) nodes, boundary nodes included. A rank owns the node
rows [r0, r1) of its strip. Its right-hand side needs `halo` more rows on each side (mean
curvature: 1, the 3 × 3 stencil of scheme (17); Willmore: 2, the stencil of w applied to w):
`extend` returns the rows [r0 − halo, r1 + halo) — the neighbours' rows exchanged through the
layer's padder at the strip's inner edges, nothing beyond a physical edge — on which the
one-process code runs unchanged; `own` cuts its result back to [r0, r1). A fill of boundary rows
(Neumann copies, Dirichlet data) acts on the extended array's first and last rows: at a physical
edge these are the boundary nodes, as on one process; at an inner edge they are halo rows whose
results are discarded, except for φ's own Neumann fill, which must keep the neighbours' rows:
it fills rows only where `top` / `bottom` are physical edges.

On one process (`WHOLE`) `extend` and `own` return their argument.
"""
from __future__ import annotations

from ..core.decomp import WHOLE


def _rows_pad(u, w, xp):
    """The padder's wall padding for node grids: w rows of room on each side (filled with the
    neighbours' rows at inner edges; cut off again at physical edges, so never read)."""
    out = xp.empty((u.shape[0] + 2 * w,) + u.shape[1:], dtype=u.dtype)
    out[w:-w] = u
    return (out,)


class NodeRows:
    def __init__(self, domain=WHOLE):
        self.whole = domain is WHOLE
        self.top = self.bottom = True  # whether the first / last row is a physical edge
        self.ext = self.own = slice(None)
        if self.whole:
            return
        self.halo = h = domain.halo
        self.top, self.bottom = domain.lo is None, domain.hi is None
        a = domain.r0 if self.top else domain.r0 - h
        b = domain.r1 if self.bottom else domain.r1 + h
        self.ext = slice(a, b)                           # global node rows of `extend`
        self.own = slice(domain.r0 - a, domain.r1 - a)   # the owned rows within them
        self._pad = domain.padder(_rows_pad)

    def extend(self, u, xp):
        """u (the owned rows) with the neighbours' `halo` rows at the inner edges. Collective
        on a strip (one exchange with each neighbour)."""
        if self.whole:
            return u
        h = self.halo
        (p,) = self._pad(u, h, xp)
        return p[(h if self.top else 0):p.shape[0] - (h if self.bottom else 0)]

    def cut(self, a):
        """The owned rows of an array over the extended rows."""
        return a if self.whole else a[self.own]
