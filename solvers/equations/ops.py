"""The discrete operators of model files as `xp` array code (NumPy float64 reference, CPU backend,
GPU array path), docs/EQUATIONS.md:

Grids (interval, rectangle; x along the last axis), cell-centred (x_i = (i + 1/2) dx, dx = L/n)
or vertex (x_i = i dx, dx = L/(n − 1); periodic: L/n). One ghost value per side from the
boundary condition:
    periodic   the opposite end
    neumann g  cell: f_b + dx g      vertex: f_{b±1} + 2 dx g     (∂f/∂n = g, outward normal)
    robin g    the same with g evaluated on the boundary value f_b
    dirichlet  cell: 2g − f_b        vertex: the boundary node is pinned to g
    lap f          = Σ_axes (f₋ − 2f + f₊)/h²
    div(K grad f)  = Σ_axes (K₊½ (f₊ − f) − K₋½ (f − f₋))/h², K±½ the mean of the two nodes'
                     K (the ghost's K is the boundary node's)
Meshes: lap is the cotangent Laplace–Beltrami operator (solvers/mesh/operators.py), and
div(K grad f)_i = Σ_j h_ij (K_i + K_j)/2 (f_j − f_i) / A_i with the same dual weights h and
mixed areas A. Dirichlet pins the boundary vertices.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..mesh.operators import cotan_laplacian


def _conv(a, xp, dtype):
    if xp is np:
        return a.astype(dtype).tocsr()
    import cupyx.scipy.sparse as csp
    return csp.csr_matrix(a.astype(dtype).tocsr())


class GridOps:
    """Grid operators; `sides[s]` is the boundary of species s ({side: bc.Side}),
    `evaluate(tree, env)` the evaluator of the boundary values."""

    def __init__(self, shape, spacing, vertex: bool, xp, dtype, coords, sides):
        self.shape, self.h, self.vertex, self.xp = tuple(shape), tuple(spacing), vertex, xp
        self.dtype, self.coords, self.sides = dtype, coords, sides
        self.axes = len(self.shape)
        n = 1
        for s in self.shape:
            n *= s
        self.size = n
        # the boundary faces' coordinates, per side: (axis, end, {x, y, ...})
        self.faces = {}
        names = ("left", "right", "bottom", "top")
        for a in range(self.axes):
            ax = self.axes - 1 - a  # x is the last axis
            for end in (0, 1):
                sl = [slice(None)] * self.axes
                sl[ax] = slice(-1, None) if end else slice(0, 1)
                face = {k: v[tuple(sl)] for k, v in coords.items()}
                key = "x" if a == 0 else "y"
                if not vertex:  # the face lies half a cell outside the centre
                    face[key] = face[key] + (0.5 if end else -0.5) * self.h[a]
                self.faces[names[2 * a + end]] = (ax, end, face)

    @property
    def lambda_max(self) -> float:
        """The spectral radius bound of lap: Σ 4/h²."""
        return sum(4.0 / h**2 for h in self.h)

    def ghosts(self, f, species, env, evaluate):
        """f padded with one ghost layer along each axis (the corners are never read)."""
        xp = self.xp
        out = f
        names = ("left", "right", "bottom", "top")
        for a in range(self.axes):
            ax = self.axes - 1 - a
            lo_side, hi_side = self.sides[species][names[2 * a]], self.sides[species][names[2 * a + 1]]
            if lo_side.kind == "periodic":
                lo = xp.take(out, [-1], axis=ax)
                hi = xp.take(out, [0], axis=ax)
            else:
                lo = self._ghost(out, ax, 0, lo_side, names[2 * a], a, species, env, evaluate)
                hi = self._ghost(out, ax, 1, hi_side, names[2 * a + 1], a, species, env,
                                 evaluate)
            out = xp.concatenate([lo, out, hi], axis=ax)
        return out

    def _ghost(self, f, ax, end, side, name, a, species, env, evaluate):
        xp = self.xp
        n = f.shape[ax]
        b = xp.take(f, [n - 1 if end else 0], axis=ax)
        inner = xp.take(f, [n - 2 if end else 1], axis=ax) if self.vertex else b
        h = self.h[a]
        if side.kind == "dirichlet":
            g = self._value(side, name, env, evaluate, species, b)
            return 2 * g - inner if self.vertex else 2 * g - b
        g = self._value(side, name, env, evaluate, species, b)
        return inner + (2 * h if self.vertex else h) * g

    def _value(self, side, name, env, evaluate, species, b):
        if side.value[0] == "num":
            return side.value[1]
        face = dict(self.faces[name][2])
        local = {**env, **face, species: b}
        return evaluate(side.value, local)

    def lap(self, f, species, env, evaluate):
        if all(self.sides[species][n].kind == "periodic" for n in self.sides[species]):
            return self._lap_periodic(f)
        g = self.ghosts(f, species, env, evaluate)
        out = None
        for a in range(self.axes):
            ax = self.axes - 1 - a
            c = self._inner(g, ax)
            # (c0 - 2 c1 + c2) / h², evaluated in this order in place (fewer temporaries)
            term = 2 * self._shift(c, ax, 1)
            self.xp.subtract(self._shift(c, ax, 0), term, out=term)
            term += self._shift(c, ax, 2)
            term /= self.h[a] ** 2
            if out is None:
                out = term
            else:
                out += term
        return out

    def _lap_periodic(self, f):
        """lap on a periodic grid without ghost copies: per axis (c0 - 2 c1 + c2) / h² built in
        place from wrapped slices, the same roundings in the same order as the ghost path
        ((-2 c1 + c0) is c0 - 2 c1 exactly)."""
        xp = self.xp
        out = None
        for a in range(self.axes):
            ax = self.axes - 1 - a
            term = -2 * f
            lo, hi = [slice(None)] * f.ndim, [slice(None)] * f.ndim

            def part(k0, k1):
                lo[ax], hi[ax] = k0, k1
                return tuple(lo), tuple(hi)

            dst, src = part(slice(1, None), slice(None, -1))   # c0: the neighbour below
            xp.add(term[dst], f[src], out=term[dst])
            dst, src = part(slice(0, 1), slice(-1, None))
            xp.add(term[dst], f[src], out=term[dst])
            dst, src = part(slice(None, -1), slice(1, None))   # c2: the neighbour above
            xp.add(term[dst], f[src], out=term[dst])
            dst, src = part(slice(-1, None), slice(0, 1))
            xp.add(term[dst], f[src], out=term[dst])
            term /= self.h[a] ** 2
            if out is None:
                out = term
            else:
                out += term
        return out

    def divgrad(self, K, f, species, env, evaluate):
        xp = self.xp
        g = self.ghosts(f, species, env, evaluate)
        K = xp.broadcast_to(xp.asarray(K, dtype=f.dtype), f.shape)
        Kg = K
        names = ("left", "right", "bottom", "top")
        for a in range(self.axes):
            ax = self.axes - 1 - a
            if self.sides[species][names[2 * a]].kind == "periodic":
                lo, hi = xp.take(Kg, [-1], axis=ax), xp.take(Kg, [0], axis=ax)
            else:
                lo, hi = xp.take(Kg, [0], axis=ax), xp.take(Kg, [Kg.shape[ax] - 1], axis=ax)
            Kg = xp.concatenate([lo, Kg, hi], axis=ax)
        out = 0
        for a in range(self.axes):
            ax = self.axes - 1 - a
            c, kc = self._inner(g, ax), self._inner(Kg, ax)
            f0, f1, f2 = (self._shift(c, ax, k) for k in range(3))
            k0, k1, k2 = (self._shift(kc, ax, k) for k in range(3))
            out = out + (0.5 * (k1 + k2) * (f2 - f1) - 0.5 * (k0 + k1) * (f1 - f0)) / self.h[a]**2
        return out

    def _inner(self, g, ax):
        """g with the ghost layers of every axis but `ax` removed."""
        sl = [slice(1, -1)] * self.axes
        sl[ax] = slice(None)
        return g[tuple(sl)]

    def _shift(self, c, ax, k):
        sl = [slice(None)] * self.axes
        n = c.shape[ax]
        sl[ax] = slice(k, n - 2 + k)
        return c[tuple(sl)]

    def pinned(self, species):
        """[(index tuple, side name)] of the nodes a Dirichlet side pins (vertex grids)."""
        if not self.vertex:
            return []
        out = []
        for name, (ax, end, _face) in self.faces.items():
            if name in self.sides[species] and self.sides[species][name].kind == "dirichlet":
                sl = [slice(None)] * self.axes
                sl[ax] = slice(-1, None) if end else slice(0, 1)
                out.append((tuple(sl), name))
        return out

    def pin_values(self, f, species, env, evaluate):
        """f with its Dirichlet nodes (vertex grids) set to their values."""
        for sl, name in self.pinned(species):
            side = self.sides[species][name]
            g = self._value(side, name, env, evaluate, species, f[sl])
            f[sl] = g
        return f


class MeshOps:
    """Surface operators on a triangle mesh (module docstring) in the backend's real type."""

    def __init__(self, mesh, xp, dtype, coords, sides):
        self.mesh, self.xp, self.dtype, self.coords, self.sides = mesh, xp, dtype, coords, sides
        self.L64 = cotan_laplacian(mesh)
        self.L = _conv(self.L64, xp, dtype)
        e = mesh.edges
        n, ne = mesh.n_vertices, len(e)
        self.size = n
        h = 0.5 * np.asarray(mesh.cotangent_weights)
        rows = np.concatenate([e[:, 0], e[:, 1]])
        cols = np.concatenate([np.arange(ne), np.arange(ne)])
        B = sp.csr_matrix((np.concatenate([np.ones(ne), -np.ones(ne)]), (rows, cols)),
                          shape=(n, ne))
        P = sp.csr_matrix((np.ones(2 * ne), (rows, np.arange(2 * ne))), shape=(n, 2 * ne))
        arr = lambda a, t=dtype: xp.asarray(np.ascontiguousarray(a), dtype=t)  # noqa: E731
        self.i, self.j = arr(e[:, 0], np.int64), arr(e[:, 1], np.int64)
        self.h, self.neg = arr(h), arr(h < 0, bool)
        self.area = arr(mesh.mixed_areas)
        self.B, self.P = _conv(B, xp, dtype), _conv(P, xp, dtype)
        self.boundary = np.asarray(mesh.boundary_vertices)

    @property
    def lambda_max(self) -> float:
        return float(abs(self.L64).sum(axis=1).max())

    def lap(self, f, species, env, evaluate):
        return self.L @ f

    def divgrad(self, K, f, species, env, evaluate):
        xp = self.xp
        K = xp.broadcast_to(xp.asarray(K, dtype=f.dtype), f.shape)
        flux = self.h * (0.5 * (K[self.i] + K[self.j])) * (f[self.j] - f[self.i])
        return (self.B @ flux) / self.area

    def positive(self, n, v, D: float, alpha: float):
        """(rate of n, loss rate λ per vertex) of div(D grad n − α n grad v) with the
        Scharfetter–Gummel edge flux of chemotaxis' positive scheme (docs/MODELS.md,
        chemotaxis): F_ij = h D (B(P) n_j − B(−P) n_i), P = α (v_j − v_i)/D, capped at
        μ n_donor on edges of negative weight; D = 0 gives the upwind flux."""
        xp = self.xp
        ni, nj = n[self.i], n[self.j]
        dv = v[self.j] - v[self.i]
        if D > 0:
            q = xp.abs(dv) * (abs(alpha) / D)
            safe = xp.where(q > 0, q, 1)
            b = xp.where(q > 0, safe / xp.expm1(safe), 1)
            bq = b + q
            hD = self.h * D
        else:  # the limit D -> 0: B(P) D -> 0, B(-P) D -> |α dv|
            b, bq = xp.zeros_like(dv), xp.abs(dv) * abs(alpha)
            hD = self.h
        up = dv >= 0 if alpha >= 0 else dv <= 0  # the transport velocity points from i to j
        kj, ki = xp.where(up, b, bq), xp.where(up, bq, b)
        flux = hD * (kj * nj - ki * ni)
        mu = xp.abs(hD) * bq
        flux = xp.where(self.neg, xp.minimum(xp.maximum(flux, -mu * ni), mu * nj), flux)
        rate = (self.B @ flux) / self.area
        loss = self.P @ xp.concatenate([xp.where(self.neg, mu, hD * ki),
                                        xp.where(self.neg, mu, hD * kj)])
        return rate, loss / self.area

    def pinned(self, species):
        side = self.sides[species]["all"]
        return [(self.boundary, "all")] if side.kind == "dirichlet" and len(self.boundary) else []

    def pin_values(self, f, species, env, evaluate):
        for idx, name in self.pinned(species):
            side = self.sides[species][name]
            if side.value[0] == "num":
                f[idx] = side.value[1]
            else:
                local = {k: (v[idx] if hasattr(v, "shape") and v.shape == f.shape else v)
                         for k, v in env.items()}
                f[idx] = evaluate(side.value, local)
        return f
