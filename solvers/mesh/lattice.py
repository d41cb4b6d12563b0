"""Fast implicit diffusion on lattice meshes (docs/EQUATIONS.md, "IMEX"): a planar mesh whose
vertices are an nx × ny tensor lattice of spacing hx × hy, each cell cut into two right
triangles (generators.rectangle, in any vertex order), has as its cotangent Laplacian the
5-point Laplacian with mirrored (zero-flux) ends,

    (L f)_ij = (f_i−1,j − 2 f_ij + f_i+1,j)/hx² + (f_i,j−1 − 2 f_ij + f_i,j+1)/hy²,
    f_−1,j = f_1,j,   f_nx,j = f_nx−2,j   (and the same in y),

because the diagonal edges' opposite angles are right angles (cot = 0) and the mixed areas are
hx·hy·w_i·w_j with w = 1/2 at the ends. The type-I cosine transform in both axes diagonalises
it, eigenvalues −(2 − 2 cos(πk/(n − 1)))/h², so the implicit solve of an IMEX stage,

    (A + δ·K) x = A·b   ⇔   (I − δ·L) x = b,   K = −A·L the cotangent stiffness,

costs two transforms instead of a sparse factorisation or a Krylov iteration. `find_lattice`
recognises such a mesh from its coordinates and accepts it only where the mesh's own operator
(L and the mixed areas) equals the 5-point form on random vectors to rounding; any other mesh
(curved, irregular, a file) keeps the general solvers.

On the GPU the cosine transform of type I is the real FFT of the even extension (2nx − 2) ×
(2ny − 2) (cupyx has types II and III only): `LatticeSolver` packs each right-hand side into
its extension, transforms all species in one batched plan, scales and transforms back.
`LatticeTransform` is the fused kernels' form (the model files' IMEX, the built-in chemotaxis
IMEX): cuFFT along one axis (`transform_axis`: a length cuFFT does fast), and per cosine mode the
tridiagonal system along the other by kernels/lattice_solve.cu's lat_rec, between the kernels of
a family that pack the extension (kernels/lattice_tile.cuh) and read it back.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# the operator check: |L r − L_5pt r| ≤ RTOL·|L_5pt r| (max norms) on random vectors
RTOL = 1e-9
KERNELS = Path(__file__).resolve().parent / "kernels"  # lattice_solve.cu, lattice_tile.cuh
MAX_WIDTH = 6000  # rows of a tridiagonal system: its two extensions fit a block's shared memory


@dataclass(frozen=True)
class Lattice:
    nx: int
    ny: int
    hx: float
    hy: float
    order: np.ndarray  # order[j·nx + i]: the mesh's vertex at lattice node (i, j)

    def lam(self, axis: str) -> np.ndarray:
        """Eigenvalues of −L along an axis: (2 − 2cos(πk/(n − 1)))/h², k = 0 … n − 1."""
        n, h = (self.nx, self.hx) if axis == "x" else (self.ny, self.hy)
        return (2.0 - 2.0 * np.cos(np.pi * np.arange(n) / (n - 1))) / h**2

    def lap5(self, f: np.ndarray) -> np.ndarray:
        """The 5-point Laplacian with mirrored ends of f in the mesh's vertex order."""
        g = np.asarray(f, dtype=np.float64)[self.order].reshape(self.ny, self.nx)
        p = np.pad(g, 1, mode="reflect")
        out = ((p[1:-1, :-2] - 2 * g + p[1:-1, 2:]) / self.hx**2
               + (p[:-2, 1:-1] - 2 * g + p[2:, 1:-1]) / self.hy**2)
        res = np.empty(len(self.order))
        res[self.order] = out.ravel()
        return res


def _axis(values: np.ndarray, scale: float):
    """(distinct values, index of each, spacing) where the values are a uniform 1D lattice of
    at least 3 nodes, else None."""
    uniq, inv = np.unique(np.round(values / scale, 9), return_inverse=True)
    if len(uniq) < 3:
        return None
    d = np.diff(uniq)
    if np.ptp(d) > 1e-6 * d.mean():
        return None
    return len(uniq), inv.ravel(), float((values.max() - values.min()) / (len(uniq) - 1))


def find_lattice(mesh, L=None, seed: int = 0) -> Lattice | None:
    """The lattice of a planar right-triangle lattice mesh (module docstring), or None.
    L: the mesh's cotangent Laplacian (scipy.sparse, float64; made here if not given)."""
    pts = np.asarray(mesh.points, dtype=np.float64)
    n = len(pts)
    if n < 9:
        return None
    scale = float(np.abs(pts).max()) or 1.0
    if np.ptp(pts[:, 2]) > 1e-12 * scale:
        return None
    ax, ay = _axis(pts[:, 0], scale), _axis(pts[:, 1], scale)
    if ax is None or ay is None or ax[0] * ay[0] != n:
        return None
    (nx, i, hx), (ny, j, hy) = ax, ay
    code = j * nx + i
    order = np.full(n, -1, dtype=np.int64)
    order[code] = np.arange(n)
    if (order < 0).any():  # two vertices on one node
        return None
    lat = Lattice(nx, ny, hx, hy, order)
    if L is None:
        from .operators import cotan_laplacian
        L = cotan_laplacian(mesh)
    w = lambda k, m: np.where((k == 0) | (k == m - 1), 0.5, 1.0)  # noqa: E731
    area = hx * hy * w(i, nx) * w(j, ny)
    if np.abs(np.asarray(mesh.mixed_areas) - area).max() > RTOL * area.max():
        return None
    rng = np.random.default_rng(seed)
    for _ in range(2):
        r = rng.standard_normal(n)
        ref = lat.lap5(r)
        if np.abs(L @ r - ref).max() > RTOL * np.abs(ref).max():
            return None
    return lat


class LatticeSolver:
    """x with (I − δ_s·L) x = b for several right-hand sides b_s (one δ_s each) on a lattice
    mesh, in the backend xp (NumPy: scipy.fft's DCT-I; CuPy: the FFT of the even extension).
    Vectors are in the mesh's vertex order."""

    def __init__(self, lattice: Lattice, xp, dtype):
        self.lat, self.xp, self.dtype = lattice, xp, np.dtype(dtype)
        nx, ny = lattice.nx, lattice.ny
        self.order = xp.asarray(lattice.order)
        if xp is np:
            self.lam = (lattice.lam("y")[:, None] + lattice.lam("x")[None, :])
        else:  # the extension's rFFT modes: (2ny − 2) × nx
            Nx, Ny = 2 * nx - 2, 2 * ny - 2
            ly = (2 - 2 * np.cos(2 * np.pi * np.arange(Ny) / Ny)) / lattice.hy**2
            lx = (2 - 2 * np.cos(2 * np.pi * np.arange(nx) / Nx)) / lattice.hx**2
            self.lam = xp.asarray(ly[:, None] + lx[None, :], dtype=self.dtype)

    def grid(self, f):
        """f (vertex order) as the ny × nx lattice array."""
        return f[self.order].reshape(self.lat.ny, self.lat.nx)

    def solve(self, bs, deltas):
        """[x_s] for the right-hand sides bs and the δ_s."""
        xp, lat = self.xp, self.lat
        G = xp.stack([self.grid(b) for b in bs])
        if xp is np:
            import scipy.fft as fft
            d = np.asarray(deltas, dtype=np.float64)[:, None, None]
            X = fft.idctn(fft.dctn(G.astype(np.float64), type=1, axes=(1, 2))
                          / (1.0 + d * self.lam), type=1, axes=(1, 2))
        else:
            ext = xp.concatenate([G, G[:, :, -2:0:-1]], axis=2)
            ext = xp.concatenate([ext, ext[:, -2:0:-1, :]], axis=1)
            S = xp.fft.rfft2(ext, axes=(1, 2))
            d = xp.asarray(np.asarray(deltas, dtype=np.float64), dtype=self.dtype)[:, None, None]
            S *= self.dtype.type(1.0) / (1.0 + d * self.lam)
            X = xp.fft.irfft2(S, s=ext.shape[1:], axes=(1, 2))[:, :lat.ny, :lat.nx]
        out = []
        for s in range(len(bs)):
            x = xp.empty(len(lat.order), dtype=self.dtype)
            x[self.order] = X[s].ravel().astype(self.dtype)
            out.append(x)
        return out


def smooth(n: int) -> bool:
    """Whether n has no prime factor above 7 (cuFFT's fast radices)."""
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
    return n == 1


def transform_axis(lat) -> str:
    """The axis of the cosine transform: x (no transposes) unless its extension 2nx − 2 has a
    prime factor above 7 and y's does not, or the other axis is too long for a block of lat_rec
    (PDESTUDIO_LATTICE_AXIS = x or y overrides, for the tests and benchmarks)."""
    forced = os.environ.get("PDESTUDIO_LATTICE_AXIS", "")
    if forced in ("x", "y"):
        return forced
    fits = {"x": lat.ny <= MAX_WIDTH, "y": lat.nx <= MAX_WIDTH}
    candidates = [a for a in ("x", "y") if fits[a]] or ["x"]
    for a in candidates:
        if smooth(2 * (lat.nx if a == "x" else lat.ny) - 2):
            return a
    return candidates[0]


class LatticeTransform:
    """The implicit solves (I − δ_s·L) x = b of S species on a lattice between the kernels that
    pack their right-hand sides into the even extension `ext` and read the solutions back from
    it: the batched cuFFT plans of the transform's axis (`axis`, transform_axis), the spectrum,
    and lat_rec (or lat_rec_clk) along the other axis. Also used by the chemotaxis IMEX
    (solvers/surface_rd/lattice_imex.py)."""

    def __init__(self, lat, real, S: int, *recs):
        import cupy as cp
        from cupy.cuda import cufft
        self.real, self.S = real, S
        self.axis = transform_axis(lat)
        # the transform's axis (n, spacing) and the rows' axis (the tridiagonal systems)
        (nt, ht), (nr, hr) = (((lat.nx, lat.hx), (lat.ny, lat.hy)) if self.axis == "x"
                              else ((lat.ny, lat.hy), (lat.nx, lat.hx)))
        self.nt, self.nr, self.hr = nt, nr, hr
        rows, Nt = S * nr, 2 * nt - 2
        double = np.dtype(real) == np.float64
        self.ext = cp.empty((rows, Nt), dtype=real)
        self.spec = cp.empty((rows, nt), dtype=np.complex128 if double else np.complex64)
        self.fwd = cufft.PlanNd([Nt], [Nt], 1, Nt, [nt], 1, nt,
                                cufft.CUFFT_D2Z if double else cufft.CUFFT_R2C, rows, "C", -1,
                                None)
        self.inv = cufft.PlanNd([Nt], [nt], 1, nt, [Nt], 1, Nt,
                                cufft.CUFFT_Z2D if double else cufft.CUFFT_C2R, rows, "C", -1,
                                None)
        self.direction = (cufft.CUFFT_FORWARD, cufft.CUFFT_INVERSE)
        lt = (2 - 2 * np.cos(np.pi * np.arange(nt) / (nt - 1))) / ht**2
        self.lam = cp.asarray(lt, dtype=real)
        self.threads = 256  # per two modes (kernels/lattice_solve.cu, LAT_REC_THREADS)
        self.smem = 2 * (2 * nr - 2) * np.dtype(real).itemsize  # two extensions
        for rec in recs:
            if self.smem > 48 * 1024:
                rec.max_dynamic_shared_size_bytes = self.smem

    def solve(self, rec, deltas) -> None:
        """ext's rows → the solutions there: forward cuFFT, `rec` (lat_rec with the δ_s, or
        lat_rec_clk with its step pointer and factors: `deltas` its arguments between 1/h² and
        the scale), inverse cuFFT."""
        self.fwd.fft(self.ext, self.spec, self.direction[0])
        rec(((self.nt + 1) // 2, self.S), (self.threads,), (
            self.spec, np.int32(self.nt), np.int32(self.nr), np.int32(self.S), self.lam,
            self.real(1 / self.hr**2), *deltas, self.real(1.0 / (2 * self.nt - 2))),
            shared_mem=self.smem)
        self.inv.fft(self.spec, self.ext, self.direction[1])
