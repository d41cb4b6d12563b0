"""The fused CUDA scheme of the surface reaction–diffusion models: one kernel launch per explicit
Euler step (kernels/chemotaxis.cu), double-buffered (a step writes the other pair of state
arrays and rebinds `sim.state`; the arrays it read are the next step's output).

    FusedChemotaxis   rd_step_vec: the Laplacian and vertex-gradient coefficients of the one-ring
                      stencil (reference.SurfaceOperators.stencil) in column-major tables padded
                      to a warp, the 4 coefficients of a slot interleaved and read as one vector
                      (the fastest rung of the optimisation ladder at 1M vertices,
                      benchmarks/surface_rd/ladder.py)
    FusedGrayScott    gs_step_padded: the same padded tables, Laplacian coefficients only

`FusedEuler` is their base: it compiles the kernel file, keeps the buffers and the model's kernel
arguments, and implements the scheme protocol (core/scheme.py) including the batched `run`;
a subclass builds its device tables in `prepare` and launches its kernel in `launch`. `block`
(threads per block) is a constructor argument.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core import clock
from ..core.backend import load_kernels
from ..core.scheme import SchemeBase
from ..mesh.triangles import padded

CU_FILE = Path(__file__).parent / "kernels" / "chemotaxis.cu"
KERNELS = ("rd_step_vec", "gs_step_padded")  # one compilation of the file per real type
BLOCK = 256


class FusedEuler(SchemeBase):
    """Explicit Euler with the fixed δt `sim.dt`, one launch of a fused kernel per step, on the
    renumbered mesh `sim.imesh` and its operators `sim.ops`."""

    cu_file: Path = CU_FILE
    kernel_names: tuple[str, ...] = KERNELS
    include_dirs: tuple[Path, ...] = ()

    def __init__(self, sim, block: int = BLOCK):
        import cupy as cp
        super().__init__(sim)
        self.cp, self.block = cp, block
        self.real = sim.real
        self.n = sim.imesh.n_vertices
        self.k = load_kernels(self.cu_file, sim.dtype, list(self.kernel_names),
                              include_dirs=self.include_dirs)
        self.prepare()
        self.args = self.model_args()
        self._out = None

    # ---- subclass hooks -----------------------------------------------------------------
    def prepare(self) -> None:
        """Upload the device tables the kernel reads."""
        raise NotImplementedError

    def model_args(self) -> tuple:
        """The model parameters the kernel takes, in the real type."""
        raise NotImplementedError

    def launch(self, u, v, u_out, v_out, dt) -> None:
        raise NotImplementedError

    # ---- tables -------------------------------------------------------------------------
    def dev(self, a, dtype):
        return self.cp.asarray(np.ascontiguousarray(a, dtype=dtype))

    def grid(self, n: int) -> tuple[int]:
        return ((n + self.block - 1) // self.block,)

    def padded_ring(self):
        """The one-ring stencil with its neighbours in a column-major table padded to a warp:
        sets deg, nbr (K slots × P vertices), K and P; returns the stencil."""
        st = self.sim.ops.stencil
        self.deg = self.dev(np.diff(st.indptr), np.int32)
        nbr = padded(st.indptr, st.nbr, fill=0, dtype=np.int32)
        self.K, self.P = nbr.shape
        self.nbr = self.dev(nbr, np.int32)
        return st

    @staticmethod
    def coefficient_planes(st) -> list[np.ndarray]:
        """The padded (K, P) planes of the Laplacian and the three gradient coefficients."""
        return [padded(st.indptr, st.lap, fill=0.0)] + \
               [padded(st.indptr, st.grad[:, d], fill=0.0) for d in range(3)]

    # ---- the scheme protocol ------------------------------------------------------------
    def step(self, t, dt_limit):
        dt = self.sim.dt if dt_limit is None else min(self.sim.dt, dt_limit)
        self.advance(dt)
        return dt

    def run(self, count, t, t_end):
        """Up to `count` steps from t without passing t_end: the whole steps first, then the
        shortened one that lands (core/clock.py), exactly as step-by-step stepping."""
        dt = self.sim.dt
        k = clock.full_steps(t, dt, count, t_end)
        for _ in range(k):
            self.advance(dt)
            t += dt
        if k < count and not clock.landed(t, t_end):
            last = min(dt, clock.limit(t, t_end))
            self.advance(last)
            t = clock.after_step(t, last, t_end)
            k += 1
        return k, t

    def invalidate(self):
        self.args = self.model_args()

    def advance(self, dt: float) -> None:
        """One explicit Euler step of dt into the other buffers; rebinds sim.state."""
        state = self.sim.state
        a, b = self.sim.species
        u, v = state[a], state[b]
        if self._out is None or self._out[0] is u or self._out[0].shape != u.shape:
            self._out = (self.cp.empty_like(u), self.cp.empty_like(v))
        uo, vo = self._out
        self.launch(u, v, uo, vo, self.real(dt))
        self._out = (u, v)
        state[a], state[b] = uo, vo


class FusedChemotaxis(FusedEuler):
    def prepare(self):
        st = self.padded_ring()
        self.coef = self.dev(np.stack(self.coefficient_planes(st), axis=-1), self.real)  # K,P,4

    def model_args(self):
        p, r = self.sim.params, self.real
        return (r(p["D"]), r(p["alpha"]), r(p["s"] * p["r"]), r(p["N"]), r(p["s"]))

    def launch(self, u, v, uo, vo, dt):
        self.k["rd_step_vec"](self.grid(self.n), (self.block,),
                              (u, v, uo, vo, self.deg, self.nbr, self.coef, np.int32(self.n),
                               np.int32(self.P), *self.args, dt))


class FusedGrayScott(FusedEuler):
    def prepare(self):
        st = self.padded_ring()
        self.coef = self.dev(padded(st.indptr, st.lap, fill=0.0), self.real)

    def model_args(self):
        p, r = self.sim.params, self.real
        return (r(p["Du"]), r(p["Dv"]), r(p["F"]), r(p["k"]))

    def launch(self, u, v, uo, vo, dt):
        self.k["gs_step_padded"](self.grid(self.n), (self.block,),
                                 (u, v, uo, vo, self.deg, self.nbr, self.coef, np.int32(self.n),
                                  np.int32(self.P), *self.args, dt))
