"""Shared machinery of the two-species reaction–diffusion models on triangulated surfaces.

A `SurfaceRD` model builds its mesh from the scenario (`rectangle`, `tube`, or `file` with the
`mesh` parameter), renumbers the vertices for memory locality (`renumber`, RCM by default; fields
are always returned in the mesh's own numbering), builds the float64 operators, fixes the explicit
Euler step δt (SPEC §2.3) and refuses one above the model's stability bound, and dispatches each
step to NumPy/CuPy array code (`numpy`, `array`) or to the fused CUDA kernels (`fused`).

A subclass supplies `species` (the two state names), `rhs(u, v, ops, xp)` (array code),
`stability_bound(lambda_max)`, `initial_state(mesh, rng)` and `fused_args()` (its kernel's model
parameters).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..core.errors import ParameterError
from ..core.params import Param, Scenario
from ..core.simulation import Simulation
from ..mesh import generators
from ..mesh.io import read_mesh
from ..mesh.renumber import inverse, vertex_order
from .operators import ArrayOperators, SurfaceOperators

SCENARIOS = (
    Scenario("rectangle", "A regular triangulated rectangle 32 × 16 (square cells cut by one "
             "diagonal), as the paper's test meshes R1/R2; zero-flux boundary."),
    Scenario("tube", "A long curved open tube standing for the paper's snake Kaa: 60 long, "
             "radius up to 2, tapered, irregular valence (4–8); zero-flux at the ends.",
             {"vertices": 48_000}),
    Scenario("file", "Any triangulated surface meshio reads (OBJ, PLY, STL, OFF, VTK/VTU, Gmsh): "
             "give its path as the `mesh` parameter (--mesh FILE)."),
)

MESH_PARAMS = (
    Param("vertices", "int", 20_000, "Target number of vertices of the generated mesh "
          "(rectangle, tube; ignored for a mesh file).", lo=64, hi=2**26),
    Param("mesh", "str", None, "Path of a surface mesh file (scenario 'file').", nullable=True),
    Param("renumber", "str", "rcm", "Vertex order in memory: reverse Cuthill–McKee, Morton "
          "(Z-order) or as given. Fields are returned in the mesh's own numbering.",
          choices=("rcm", "morton", "none")),
)

STEP_PARAMS = (
    Param("C", "float", None, "Step factor: δt = C·dx², dx the mean edge length. Empty: half "
          "the stability bound.", lo=0, lo_open=True, nullable=True),
    Param("dt", "float", None, "Fixed time step δt (instead of C); must not exceed the "
          "stability bound.", lo=0, lo_open=True, nullable=True),
)


def linear_euler_bound(jacobian, lam_max: float, samples: int = 4001) -> float:
    """The largest δt for which explicit Euler damps every decaying mode of a linearised
    two-species system: a Laplacian eigenmode with eigenvalue −λ, λ in [0, λ_max], evolves by
    the 2×2 matrix `jacobian(λ)` (shape (len(λ), 2, 2)); an eigenvalue μ with Re μ < 0 needs
    |1 + δt μ| ≤ 1, i.e. δt ≤ −2 Re μ / |μ|². Growing modes (Re μ ≥ 0, the Turing band) grow in
    the PDE too and set no limit."""
    lam = np.linspace(0.0, lam_max, samples)
    mu = np.linalg.eigvals(jacobian(lam))
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(mu.real < 0, -2 * mu.real / np.abs(mu) ** 2, np.inf)
    return float(b.min())


class SurfaceRD(Simulation):
    species: ClassVar[tuple[str, str]] = ("u", "v")
    scenarios = SCENARIOS
    size_param = "vertices"
    bench_sizes = (20_000, 1_000_000)
    contract_params = {"vertices": 300}
    default_field: ClassVar[str | None] = None
    # The fused rung used by kernel='fused' (the ladder benchmark sets others per instance).
    fused_rung: ClassVar[str] = "vec"

    # ---- subclass hooks -----------------------------------------------------------------
    def stability_bound(self, lambda_max: float) -> tuple[float, str]:
        """The largest stable δt and the formula it comes from (for messages)."""
        raise NotImplementedError

    def initial_state(self, mesh, rng) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def rhs(self, u, v, ops: ArrayOperators, xp):
        raise NotImplementedError

    # ---- set-up -------------------------------------------------------------------------
    @classmethod
    def _check_params(cls, p: dict) -> None:
        if p["C"] is not None and p["dt"] is not None:
            raise ParameterError(f"{cls.model}: parameters 'C' = {p['C']} and 'dt' = {p['dt']} "
                                 "are both given; allowed: at most one of them")

    def build_mesh(self):
        p = self.params
        sc = self.scenario_name
        if sc == "file":
            if not p["mesh"]:
                raise ParameterError(f"{self.model}: scenario 'file' needs parameter 'mesh' (a "
                                     "mesh file path, --mesh FILE); allowed: a path to a "
                                     "surface mesh meshio reads")
            return read_mesh(p["mesh"])
        if p["mesh"]:
            raise ParameterError(f"{self.model}: parameter 'mesh' is used only by scenario "
                                 f"'file', not '{sc}'; allowed: scenario 'file' with a mesh")
        if sc == "tube":
            return generators.tube(p["vertices"])
        return generators.rectangle(p["vertices"])

    def _setup(self) -> None:
        p = self.params
        mesh = self.build_mesh()
        self.mesh = mesh  # public, in the mesh's own numbering
        order = vertex_order(mesh, p["renumber"])
        self._order = order
        self._inverse = None if order is None else inverse(order)
        self.imesh = mesh if order is None else mesh.permuted(vertex_order=order)
        self.ops = SurfaceOperators(self.imesh)
        self.dx = self.imesh.mean_edge_length
        self.dt_max, formula = self.stability_bound(self.ops.lambda_max)
        self.dt = self._choose_dt(formula)
        u0, v0 = self.initial_state(mesh, np.random.default_rng(p["seed"]))
        xp = self.xp
        a, b = self.species
        self.state[a] = xp.asarray(self._internal(u0), dtype=self.dtype)
        self.state[b] = xp.asarray(self._internal(v0), dtype=self.dtype)
        if self.kernel == "fused":
            from .kernels import FusedStepper
            self._fused = FusedStepper(self, self.fused_rung)
        else:
            self._arrays = ArrayOperators(self.ops, xp, self.real)

    def _choose_dt(self, formula: str) -> float:
        p, bound = self.params, self.dt_max
        c_max = bound / self.dx**2
        if p["dt"] is not None:
            dt, name, val = p["dt"], "dt", p["dt"]
        elif p["C"] is not None:
            dt, name, val = p["C"] * self.dx**2, "C", p["C"]
        else:
            return 0.5 * bound
        if dt > bound:
            allowed = (f"dt <= {bound:.6g}" if name == "dt" else f"C <= {c_max:.6g}")
            raise ParameterError(
                f"{self.model}: parameter '{name}' = {val:g} gives δt = {dt:.6g} above the "
                f"explicit-Euler stability bound {bound:.6g} = {formula} on this mesh "
                f"(dx = {self.dx:.4g}, λ_max = {self.ops.lambda_max:.6g}); allowed: {allowed}")
        return float(dt)

    # ---- numbering ----------------------------------------------------------------------
    def _internal(self, a: np.ndarray) -> np.ndarray:
        return a if self._order is None else a[self._order]

    def _external(self, a):
        return a if self._inverse is None else a[self._inverse_xp()]

    def _inverse_xp(self):
        if not hasattr(self, "_inv_dev"):
            self._inv_dev = self.xp.asarray(self._inverse)
        return self._inv_dev

    def _fields(self) -> dict:
        return {k: self._external(v) for k, v in self.state.items()}

    def _set_field(self, name: str, arr: np.ndarray) -> None:
        self._assign_state(name, self.xp.asarray(self._internal(arr), dtype=self.dtype))

    # ---- stepping -----------------------------------------------------------------------
    def _step(self, dt_limit):
        dt = self.dt if dt_limit is None else min(self.dt, dt_limit)
        a, b = self.species
        u, v = self.state[a], self.state[b]
        if self.kernel == "fused":
            self.state[a], self.state[b] = self._fused.step(u, v, dt)
        else:
            du, dv = self.rhs(u, v, self._arrays, self.xp)
            self.state[a] = u + self.real(dt) * du
            self.state[b] = v + self.real(dt) * dv
        return dt

    def work(self):
        """Vertices updated per step, and the compulsory traffic of a step: both species read
        and written once, plus the mesh itself read once (one int32 per directed edge of the
        1-ring and the float64 coordinates)."""
        n = self.imesh.n_vertices
        item = np.dtype(self.dtype).itemsize
        nnz = 2 * self.imesh.n_edges
        return n, 4 * n * item + 4 * nnz + 24 * n
