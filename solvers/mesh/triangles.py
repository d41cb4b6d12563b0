"""Triangle meshes: topology and geometry shared by every model on triangulated surfaces.

`TriangleMesh(points, cells)` holds the vertex coordinates `points` (N, 3) float64 and the faces
`cells` (M, 3) int64 (vertex indices; any orientation). Everything else is derived lazily and
cached (the arrays are read-only):

Topology
    edges (E, 2)            undirected edges, i < j, sorted lexicographically
    cell_edges (M, 3)       edge of cell c opposite its local corner k (edge (v[k+1], v[k+2]))
    edge_cells (E, 2)       the (at most two) cells of an edge; -1 where there is none
                            (edge_cells[:, 0] is the "left" cell, edge_cells[:, 1] the "right" one)
    boundary_edges (E,) bool, boundary_vertices (N,) bool
    vertex_vertex           CSR (indptr, indices): the 1-ring of each vertex, sorted
    vertex_face             CSR (indptr, indices, corner): incident cells and the vertex's local
                            corner (0, 1, 2) in each
    cell_neighbours (M, 3)  the cell across each edge (-1 on the boundary), for finite volumes
Geometry
    cell_areas (M,), cell_normals (M, 3) unit (orientation of the vertex order)
    corner_angles (M, 3)    interior angle at each corner
    corner_cotangents (M, 3)
    cotangent_weights (E,)  cot α + cot β of the two angles opposite each edge (one on the boundary)
    mixed_areas (N,)        Meyer et al.'s mixed Voronoi area of each vertex (docs/MODELS.md §2.2)
    edge_lengths (E,), mean_edge_length
    edge_normals_2d (E, 2)  unit normal of each edge in the xy-plane, pointing from the left cell
                            to the right cell (planar meshes; finite volumes)
GPU layouts
    padded(indptr, values, fill)   any CSR table as a (K, Npad) column-major array: row k holds the
                            k-th entry of every vertex, Npad a multiple of 32, so that a warp of
                            consecutive vertices reads consecutive words (coalesced)

A mesh built here is assumed valid; `solvers.mesh.io.validate` checks untrusted input and raises
MeshError naming the problem.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..core.errors import MeshError

ALIGN = 32  # padding of column-major tables (a warp)


def _ro(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def csr_from_pairs(rows: np.ndarray, cols: np.ndarray, n: int, *extra: np.ndarray):
    """CSR (indptr, indices, *extra) of the pairs (rows[k], cols[k]), sorted by row then column."""
    order = np.lexsort((cols, rows))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return (indptr, cols[order]) + tuple(e[order] for e in extra)


def padded(indptr: np.ndarray, values: np.ndarray, fill=-1, align: int = ALIGN,
           dtype=None) -> np.ndarray:
    """A CSR table as a column-major padded array of shape (K, Npad), K = the largest row length,
    Npad = N rounded up to `align`: out[k, i] = values[indptr[i] + k] for k < row length, `fill`
    elsewhere. In C order, entry k of all vertices is contiguous (coalesced GPU reads)."""
    n = len(indptr) - 1
    deg = np.diff(indptr)
    k_max = int(deg.max()) if n else 0
    npad = -(-max(n, 1) // align) * align
    out = np.full((k_max, npad), fill, dtype=dtype or values.dtype)
    row = np.repeat(np.arange(n), deg)
    slot = np.arange(len(values)) - np.repeat(indptr[:-1], deg)
    out[slot, row] = values
    return out


class TriangleMesh:
    """A triangulated surface in 3D (see the module docstring for what it offers)."""

    kind = "triangles"

    def __init__(self, points, cells, name: str = ""):
        pts = np.asarray(points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3):
            raise MeshError(f"mesh points have shape {pts.shape}; allowed: (N, 2) or (N, 3)")
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        cls_ = np.asarray(cells)
        if cls_.ndim != 2 or cls_.shape[1] != 3 or (cls_.size and cls_.dtype.kind not in "iu"):
            raise MeshError(f"mesh cells have shape {cls_.shape} and dtype {cls_.dtype}; "
                            "allowed: (M, 3) integers")
        self.points = _ro(np.ascontiguousarray(pts))
        self.cells = _ro(np.ascontiguousarray(cls_, dtype=np.int64))
        self.name = name

    def __repr__(self) -> str:
        return (f"<TriangleMesh {self.name or ''} {self.n_vertices} vertices, "
                f"{self.n_cells} triangles>")

    @property
    def n_vertices(self) -> int:
        return len(self.points)

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    @cached_property
    def kdtree(self):
        """A k-d tree of the points (scipy's cKDTree) for neighbourhood queries."""
        from scipy.spatial import cKDTree
        return cKDTree(self.points)

    # ---- topology -----------------------------------------------------------------------
    @cached_property
    def _half_edges(self):
        """Directed half-edges (cell c, local corner k): the edge opposite corner k, as the
        sorted pair (a, b) with a < b, and its index in `edges`."""
        c = self.cells
        a = c[:, [1, 2, 0]].ravel()
        b = c[:, [2, 0, 1]].ravel()
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        key = lo * np.int64(self.n_vertices) + hi
        uniq, inv = np.unique(key, return_inverse=True)
        return uniq, inv.reshape(-1, 3)

    @cached_property
    def edges(self) -> np.ndarray:
        uniq, _ = self._half_edges
        n = np.int64(self.n_vertices)
        return _ro(np.column_stack([uniq // n, uniq % n]))

    @cached_property
    def cell_edges(self) -> np.ndarray:
        return _ro(self._half_edges[1].astype(np.int64))

    @cached_property
    def edge_valence(self) -> np.ndarray:
        """Number of cells sharing each edge (1 boundary, 2 interior, > 2 non-manifold)."""
        return _ro(np.bincount(self.cell_edges.ravel(), minlength=self.n_edges))

    @cached_property
    def edge_cells(self) -> np.ndarray:
        """(E, 2): the cells on each side of an edge, -1 where there is none. Requires a
        manifold mesh (no edge in more than two cells)."""
        if self.edge_valence.max(initial=0) > 2:
            raise MeshError("edge_cells: the mesh has non-manifold edges (in more than 2 cells)")
        e = self.cell_edges.ravel()
        cell = np.repeat(np.arange(self.n_cells), 3)
        order = np.argsort(e, kind="stable")
        e_s, c_s = e[order], cell[order]
        out = np.full((self.n_edges, 2), -1, dtype=np.int64)
        first = np.ones(len(e_s), dtype=bool)
        first[1:] = e_s[1:] != e_s[:-1]
        out[e_s[first], 0] = c_s[first]
        out[e_s[~first], 1] = c_s[~first]
        return _ro(out)

    @cached_property
    def cell_neighbours(self) -> np.ndarray:
        """(M, 3): the cell across the edge opposite each corner, -1 on the boundary."""
        ec = self.edge_cells[self.cell_edges]  # (M, 3, 2)
        me = np.arange(self.n_cells)[:, None]
        return _ro(np.where(ec[..., 0] == me, ec[..., 1], ec[..., 0]))

    @cached_property
    def boundary_edges(self) -> np.ndarray:
        return _ro(self.edge_valence == 1)

    @cached_property
    def boundary_vertices(self) -> np.ndarray:
        out = np.zeros(self.n_vertices, dtype=bool)
        out[self.edges[self.boundary_edges].ravel()] = True
        return _ro(out)

    @property
    def is_closed(self) -> bool:
        return not self.boundary_edges.any()

    @cached_property
    def vertex_vertex(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR (indptr, indices) of the 1-ring of each vertex, neighbours sorted."""
        e = self.edges
        rows = np.concatenate([e[:, 0], e[:, 1]])
        cols = np.concatenate([e[:, 1], e[:, 0]])
        indptr, indices = csr_from_pairs(rows, cols, self.n_vertices)
        return _ro(indptr), _ro(indices)

    @cached_property
    def vertex_face(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR (indptr, cells, corner) of the cells incident to each vertex and the vertex's
        local corner index in each."""
        rows = self.cells.ravel()
        cols = np.repeat(np.arange(self.n_cells), 3)
        corner = np.tile(np.arange(3), self.n_cells)
        indptr, cells, corner = csr_from_pairs(rows, cols, self.n_vertices, corner)
        return _ro(indptr), _ro(cells), _ro(corner)

    @cached_property
    def vertex_fans(self):
        """The 1-ring of each vertex ordered around it (see the module docstring), found by
        linking each incident cell (i, a, b) to the one starting at b and ranking the links by
        pointer doubling; None if some vertex has several fans or orientations disagree."""
        indptr, cells, corner = self.vertex_face
        n, nn = self.n_vertices, len(cells)
        tri = self.cells[cells]
        a = tri[np.arange(nn), (corner + 1) % 3]
        b = tri[np.arange(nn), (corner + 2) % 3]
        deg = np.diff(indptr)
        owner = np.repeat(np.arange(n), deg)
        key_a = owner * np.int64(n) + a
        order = np.argsort(key_a, kind="stable")
        sk = key_a[order]
        if nn == 0 or (np.diff(sk) == 0).any():  # two cells leave i along the same edge
            return None
        key_b = owner * np.int64(n) + b
        pos = np.minimum(np.searchsorted(sk, key_b), nn - 1)
        succ = np.where(sk[pos] == key_b, order[pos], -1)
        pred = np.full(nn, -1)
        pred[succ[succ >= 0]] = np.nonzero(succ >= 0)[0]
        starts = np.bincount(owner, weights=(pred < 0), minlength=n)
        pred[indptr[:-1][(starts == 0) & (deg > 0)]] = -1  # open closed fans at a cell
        rank, p = (pred >= 0).astype(np.int64), pred.copy()
        for _ in range(int(np.log2(max(deg.max(), 1))) + 2):
            m = p >= 0
            if not m.any():
                break
            rank2 = rank.copy()
            rank2[m] += rank[p[m]]
            p2 = p.copy()
            p2[m] = p[p[m]]
            rank, p = rank2, p2
        if (p >= 0).any() or (rank >= deg[owner]).any():
            return None  # a cycle left: several fans at a vertex
        hit = np.zeros(nn, dtype=bool)
        hit[indptr[owner] + rank] = True
        if not hit.all():
            return None
        ring_ptr = indptr + np.arange(n + 1)
        ring = np.empty(ring_ptr[-1], dtype=np.int64)
        ring[ring_ptr[owner] + rank] = a
        last = rank == deg[owner] - 1
        ring[ring_ptr[owner[last]] + deg[owner[last]]] = b[last]
        return _ro(ring_ptr), _ro(ring)

    @cached_property
    def valence(self) -> np.ndarray:
        return _ro(np.diff(self.vertex_vertex[0]))

    # ---- geometry -----------------------------------------------------------------------
    @cached_property
    def _corner_vectors(self):
        """For each corner k of each cell: the vectors to the next and the previous vertex."""
        p = self.points[self.cells]  # (M, 3, 3)
        to_next = np.roll(p, -1, axis=1) - p
        to_prev = np.roll(p, 1, axis=1) - p
        return to_next, to_prev

    @cached_property
    def _cell_cross(self) -> np.ndarray:
        p = self.points[self.cells]
        return np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])

    @cached_property
    def cell_areas(self) -> np.ndarray:
        return _ro(0.5 * np.linalg.norm(self._cell_cross, axis=1))

    @cached_property
    def cell_normals(self) -> np.ndarray:
        """Unit normals, oriented by the vertex order (right-hand rule)."""
        cr = self._cell_cross
        return _ro(cr / np.linalg.norm(cr, axis=1, keepdims=True))

    @cached_property
    def cell_centroids(self) -> np.ndarray:
        return _ro(self.points[self.cells].mean(axis=1))

    @cached_property
    def vertex_normals(self) -> np.ndarray:
        """Area-weighted mean of the incident cell normals (unit length); assumes a consistent
        orientation."""
        acc = np.zeros((self.n_vertices, 3))
        for k in range(3):
            np.add.at(acc, self.cells[:, k], self._cell_cross)
        return _ro(acc / np.maximum(np.linalg.norm(acc, axis=1, keepdims=True), 1e-300))

    @cached_property
    def corner_cotangents(self) -> np.ndarray:
        """(M, 3) cotangent of the interior angle at each corner: cot = (u·v) / |u × v|."""
        u, v = self._corner_vectors
        dot = np.einsum("mkd,mkd->mk", u, v)
        two_area = (2.0 * self.cell_areas)[:, None]
        return _ro(dot / two_area)

    @cached_property
    def corner_angles(self) -> np.ndarray:
        u, v = self._corner_vectors
        dot = np.einsum("mkd,mkd->mk", u, v)
        return _ro(np.arctan2((2.0 * self.cell_areas)[:, None], dot))

    @cached_property
    def cotangent_weights(self) -> np.ndarray:
        """(E,) cot α + cot β: the cotangents of the angles opposite each edge (one term on the
        boundary), the weights of the cotangent Laplace–Beltrami operator (docs/MODELS.md §2.2)."""
        return _ro(np.bincount(self.cell_edges.ravel(), weights=self.corner_cotangents.ravel(),
                               minlength=self.n_edges))

    @cached_property
    def edge_lengths(self) -> np.ndarray:
        e = self.edges
        return _ro(np.linalg.norm(self.points[e[:, 1]] - self.points[e[:, 0]], axis=1))

    @property
    def mean_edge_length(self) -> float:
        return float(self.edge_lengths.mean())

    @cached_property
    def mixed_areas(self) -> np.ndarray:
        """Meyer et al.'s mixed area of each vertex: the Voronoi area inside each non-obtuse
        incident triangle, (1/8) Σ (cot of the opposite angle) |edge|² over its two edges at the
        vertex; a triangle obtuse at the vertex gives A_T/2, one obtuse elsewhere A_T/4."""
        cot = self.corner_cotangents
        u, v = self._corner_vectors  # to next, to previous
        lu = np.einsum("mkd,mkd->mk", u, u)
        lv = np.einsum("mkd,mkd->mk", v, v)
        # corner k: edge to next (k+1) is opposite corner k+2; edge to prev (k+2) opposite k+1
        vor = (lu * np.roll(cot, -2, axis=1) + lv * np.roll(cot, -1, axis=1)) / 8.0
        area = self.cell_areas[:, None]
        obtuse_here = cot < 0
        obtuse_any = obtuse_here.any(axis=1, keepdims=True)
        part = np.where(obtuse_any, np.where(obtuse_here, area / 2, area / 4), vor)
        return _ro(np.bincount(self.cells.ravel(), weights=part.ravel(),
                               minlength=self.n_vertices))

    @cached_property
    def edge_normals_2d(self) -> np.ndarray:
        """(E, 2) unit normals of the edges in the xy-plane, pointing out of the left cell
        (edge_cells[:, 0]) towards the right one; for planar meshes (finite volumes)."""
        e = self.edges
        d = self.points[e[:, 1], :2] - self.points[e[:, 0], :2]
        nrm = np.column_stack([d[:, 1], -d[:, 0]]) / np.linalg.norm(d, axis=1, keepdims=True)
        left = self.cell_centroids[self.edge_cells[:, 0], :2]
        mid = 0.5 * (self.points[e[:, 0], :2] + self.points[e[:, 1], :2])
        flip = np.einsum("ed,ed->e", nrm, mid - left) < 0
        nrm[flip] *= -1
        return _ro(nrm)

    # ---- derived meshes -----------------------------------------------------------------
    def permuted(self, vertex_order=None, cell_order=None) -> "TriangleMesh":
        """The same mesh with vertices (and/or cells) stored in a new order: new vertex k is old
        vertex vertex_order[k]; likewise for cells."""
        pts, cells = self.points, self.cells
        if vertex_order is not None:
            vertex_order = np.asarray(vertex_order)
            inv = np.empty_like(vertex_order)
            inv[vertex_order] = np.arange(len(vertex_order))
            pts = pts[vertex_order]
            cells = inv[cells]
        if cell_order is not None:
            cells = cells[np.asarray(cell_order)]
        return TriangleMesh(pts, cells, self.name)

    def bandwidth(self) -> int:
        """Largest |i − j| over the edges (the matrix bandwidth of the vertex adjacency)."""
        e = self.edges
        return int(np.abs(e[:, 1] - e[:, 0]).max(initial=0))

    def summary(self) -> dict:
        val = self.valence
        return {"vertices": self.n_vertices, "triangles": self.n_cells, "edges": self.n_edges,
                "boundary_edges": int(self.boundary_edges.sum()),
                "valence_min": int(val.min()), "valence_max": int(val.max()),
                "valence_var": float(val.var()), "mean_edge_length": self.mean_edge_length,
                "area": float(self.cell_areas.sum())}
