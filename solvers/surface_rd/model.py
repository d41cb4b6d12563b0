"""The two-species reaction–diffusion models on triangulated surfaces ([P1], docs/MODELS.md §2):
parameters, scenarios, fields and the registered classes. The numerics live in reference.py (the
operators, the explicit-Euler `xp` scheme, the stability bounds) and fused.py (the CUDA scheme).

A `SurfaceRD` model builds its mesh from the scenario (`rectangle`, `tube`, or `file` with the
`mesh` parameter; scenarios.py), renumbers the vertices for memory locality (`renumber`, RCM by
default; fields are always returned in the mesh's own numbering), builds the float64 operators,
fixes the explicit Euler step δt (docs/MODELS.md §2.3) and refuses one above the model's stability bound.
`dt` (the step in use; chemotaxis' positive scheme takes min(dt, its positivity bound) each step),
`dt_max` (the bound), `dx` (the mean edge length), `imesh` (the
renumbered mesh) and `ops` (its float64 operators) are public attributes; the schemes read them.

chemotaxis: Murray & Myerscough's cell–chemotaxis model of snake-skin pigmentation (docs/MODELS.md [P1]
eq. (1); docs/MODELS.md §2.1):

    ∂n/∂t = D Δn − α n Δc − α ∇n·∇c + s r n (N − n)
    ∂c/∂t = Δc + s ( n/(1+n) − c )

n = `cells` (cell density f_n), c = `chemo` (chemoattractant f_c), zero flux on open boundaries
(built into the cotangent operator), explicit Euler with δt = C·dx². `scheme` picks the
discretisation of the cell flux: `positive` (default; reference.py) writes it as ∇·(D∇n − α n∇c)
with Scharfetter–Gummel fluxes on the cotangent dual, conservative and n ≥ 0 on any mesh, each step
min(δt, 0.9/max_i λ_i) with λ_i the vertex's loss rate; `paper` is docs/MODELS.md [P1]'s −α n Δc − α ∇n·∇c
with averaged vertex gradients (fixed δt), which goes negative and diverges on coarse or
irregular meshes. The stability bound and the Turing threshold come from the linearisation about the
uniform state (reference.py): with the paper's D, r, s, N the threshold is α > 12.023, so the
paper's α = 12.02 sits on it (the uniform state is neutrally stable and perturbations decay). The
default here is α = 13 (growth rate ≈ 0.108·s at wavelength ≈ 3.8/√s; the spots need ≳ 12 mesh
points per wavelength, e.g. the default 20,000-vertex rectangle); the paper's value is one `--set
alpha=12.02` away.

gray-scott: the Gray–Scott system on the same operators (an extra of docs/MODELS.md §2):

    ∂u/∂t = Du Δu − u v² + F (1 − u)
    ∂v/∂t = Dv Δv + u v² − (F + k) v

explicit Euler with δt = C·dx² below the bound 2 / (max(Du, Dv) λ_max + 3 + F + k).
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..core.errors import ParameterError
from ..core.params import SEED, Param, Scenario
from ..core.registry import register
from ..core.scheme import SchemeEntry, SchemeTable
from ..core.simulation import FieldInfo, QuantityInfo, Simulation
from . import scenarios
from .fused import FusedChemotaxis, FusedGrayScott, FusedPositiveChemotaxis
from .imex import ChemotaxisImex, GrayScottImex, by_integrator, linear_imex_bound
from .lattice_imex import FusedChemotaxisImex
from .meshes import mesh_setup
from .reference import ChemotaxisEuler, GrayScottEuler, PositiveChemotaxisEuler

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

INTEGRATOR = Param(
    "integrator", "str", "euler", "Time integrator: explicit Euler, or imex (the Laplacian "
    "terms implicit by preconditioned CG on the cotangent stiffness with the lumped mass, or by "
    "cosine transforms on the generated rectangle, the rest explicit: steps far above the "
    "explicit bound on fine meshes; on the GPU chemotaxis with scheme=positive on the rectangle "
    "runs the whole step fused, anything else on the array path).", choices=("euler", "imex"))

STEP_PARAMS = (
    Param("C", "float", None, "Step factor: δt = C·dx², dx the mean edge length. Empty: half "
          "the stability bound.", lo=0, lo_open=True, nullable=True, live=True),
    Param("dt", "float", None, "Fixed time step δt (instead of C); must not exceed the "
          "stability bound.", lo=0, lo_open=True, nullable=True, live=True),
)



def choose_dt(model: str, p, bound: float, formula: str, dx: float, lam_max: float) -> float:
    """δt of a member: `dt`, or C·dx², or half the stability bound; refused above the bound."""
    c_max = bound / dx**2
    if p["dt"] is not None:
        dt, name, val = p["dt"], "dt", p["dt"]
    elif p["C"] is not None:
        dt, name, val = p["C"] * dx**2, "C", p["C"]
    else:
        return 0.5 * bound
    if dt > bound:
        allowed = (f"dt <= {bound:.6g}" if name == "dt" else f"C <= {c_max:.6g}")
        which = "IMEX" if p.get("integrator") == "imex" else "explicit-Euler"
        raise ParameterError(
            f"{model}: parameter '{name}' = {val:g} gives δt = {dt:.6g} above the "
            f"{which} stability bound {bound:.6g} = {formula} on this mesh "
            f"(dx = {dx:.4g}, λ_max = {lam_max:.6g}); allowed: {allowed}")
    return float(dt)


def chemotaxis_bound(p, lam_max: float) -> tuple[float, str]:
    if p.get("integrator") == "imex":
        return (linear_imex_bound(p, lam_max), "the largest δt with spectral radius ≤ 1 of the "
                "IMEX step of every decaying mode of the linearisation, λ ≤ λ_max")
    return ChemotaxisEuler.stability_bound(p, lam_max)


def gray_scott_bound(p, lam_max: float) -> tuple[float, str]:
    if p.get("integrator") == "imex":
        return 2.0 / (3 + p["F"] + p["k"]), "2/(3 + F + k) (the explicit reaction of IMEX)"
    return GrayScottEuler.stability_bound(p, lam_max)


class SurfaceRD(Simulation):
    """A subclass declares `species` (the two state names), its parameters and fields, its
    `initial_condition(mesh, params, rng)` (scenarios.py), its two schemes and
    `stability_bound(params, lambda_max) -> (δt bound, formula)` (reference.py)."""

    species: ClassVar[tuple[str, str]] = ("u", "v")
    scenarios = SCENARIOS
    size_param = "vertices"
    bench_sizes = (20_000, 1_000_000)
    contract_params = {"vertices": 300}
    default_field: ClassVar[str | None] = None
    initial_condition: ClassVar[Any] = None
    # the parameters initial_condition reads (besides the mesh, and the seed of its generator):
    # ensemble members that agree on them share one initial state; None: each computes its own
    initial_params: ClassVar[tuple[str, ...] | None] = None
    stability_bound: ClassVar[Any] = None

    @classmethod
    def ensemble(cls, members, **kw):
        from .ensemble import SurfaceEnsemble
        return SurfaceEnsemble(cls, members, **kw)

    # ---- set-up -------------------------------------------------------------------------
    @classmethod
    def _check_params(cls, p: dict) -> None:
        if p["C"] is not None and p["dt"] is not None:
            raise ParameterError(f"{cls.model}: parameters 'C' = {p['C']} and 'dt' = {p['dt']} "
                                 "are both given; allowed: at most one of them")

    def _setup(self) -> None:
        p = self.params
        # (kept for the next simulation on the same mesh in this process: meshes.py)
        s = mesh_setup(self.model, self.scenario_name, p)
        mesh = self.mesh = s.mesh  # public, in the mesh's own numbering
        self._order, self._inverse = s.order, s.inverse
        self.imesh, self.ops = s.imesh, s.ops
        self.dx = self.imesh.mean_edge_length
        self.dt_max, formula = self.stability_bound(p, self.ops.lambda_max)
        self.dt = self._choose_dt(formula)
        u0, v0 = self.initial_condition(mesh, p, np.random.default_rng(p["seed"]))
        xp = self.xp
        a, b = self.species
        self.state[a] = xp.asarray(self._internal(u0), dtype=self.dtype)
        self.state[b] = xp.asarray(self._internal(v0), dtype=self.dtype)

    def _params_changed(self) -> None:
        """Live coefficients and step factors: the stability bound and δt again (refused above
        the bound)."""
        self.dt_max, formula = self.stability_bound(self.params, self.ops.lambda_max)
        self.dt = self._choose_dt(formula)

    def _choose_dt(self, formula: str) -> float:
        return choose_dt(self.model, self.params, self.dt_max, formula, self.dx,
                         self.ops.lambda_max)

    # ---- quantities ---------------------------------------------------------------------
    @classmethod
    def _quantity_infos(cls):
        a, b = cls.species
        d = cls.default_field or a
        return {f"mass {a}": QuantityInfo("", f"∫ {a} dA (mixed vertex areas)"),
                f"mass {b}": QuantityInfo("", f"∫ {b} dA (mixed vertex areas)"),
                f"max {d}": QuantityInfo("", f"largest {d}"),
                f"min {d}": QuantityInfo("", f"smallest {d}")}

    def _quantities(self, state=None) -> dict:
        """Of the state, or of `state` (an ensemble member's rows, the same numbers)."""
        a, b = self.species
        d = self.default_field or a
        s = self.state if state is None else state
        if getattr(self, "_area_dev", None) is None:
            self._area_dev = self.xp.asarray(self.imesh.mixed_areas, dtype=self.dtype)
        A = self._area_dev
        return {f"mass {a}": (A * s[a]).sum(), f"mass {b}": (A * s[b]).sum(),
                f"max {d}": s[d].max(), f"min {d}": s[d].min()}

    # ---- numbering ----------------------------------------------------------------------
    def _internal(self, a: np.ndarray) -> np.ndarray:
        return a if self._order is None else a[self._order]

    def _external(self, a):
        return a if self._inverse is None else a[self._inverse_xp()]

    def _inverse_xp(self):
        if not hasattr(self, "_inv_dev"):
            self._inv_dev = self.xp.asarray(self._inverse)
        return self._inv_dev

    def _fields(self) -> dict:  # (renumbered only when asked for)
        return {k: (lambda v=v: self._external(v)) for k, v in self.state.items()}

    def _internal_index(self, field, ext):
        return ext if self._inverse is None else np.asarray(self._inverse)[ext]

    def _set_field(self, name: str, arr: np.ndarray) -> None:
        self._assign_state(name, self.xp.asarray(self._internal(arr), dtype=self.dtype))

    def work(self):
        """Vertices updated per step, and the compulsory traffic of a step: both species read
        and written once, plus the mesh itself read once (one int32 per directed edge of the
        1-ring and the float64 coordinates)."""
        n = self.imesh.n_vertices
        item = np.dtype(self.dtype).itemsize
        nnz = 2 * self.imesh.n_edges
        return n, 4 * n * item + 4 * nnz + 24 * n

    memory_per_cell = 2560  # peak host bytes per cell, float64 (core/memory.py)


@register
class Chemotaxis(SurfaceRD):
    model = "chemotaxis"
    title = "Chemotaxis on surfaces"
    description = ("Murray–Myerscough cell–chemotaxis reaction–diffusion on a triangulated "
                   "surface: cotangent Laplace–Beltrami, face and vertex gradients, explicit "
                   "Euler ([P1], docs/MODELS.md, Descombes, Dhillon & Zwicker).")
    species = ("cells", "chemo")
    ensemble_params = ("D", "r", "alpha", "s", "N", "perturbation", "seed", "C", "dt")
    parameters = MESH_PARAMS + (
        Param("D", "float", 0.25, "Cell diffusion rate D.", lo=0, lo_open=True, live=True),
        Param("r", "float", 1.522, "Cell growth rate r.", lo=0, live=True),
        Param("alpha", "float", 13.0, "Chemotactic rate α (the paper's 12.02 sits just below "
              "the Turing threshold 12.023; above it patterns grow).", lo=0, live=True),
        Param("s", "float", 1.0, "Scale factor s (patterns shrink as 1/√s).", lo=0,
              lo_open=True, live=True),
        Param("N", "float", 1.0, "Maximum cell density (carrying capacity) N (also the "
              "initial density: not live).", lo=0,
              lo_open=True),
        Param("scheme", "str", "positive", "Discretisation of the cell flux: 'positive' "
              "(conservative upwind fluxes on the cotangent dual, n ≥ 0 on any mesh, adaptive "
              "step) or 'paper' (−α n Δc − α ∇n·∇c with averaged vertex gradients, [P1], docs/MODELS.md; "
              "not positivity-preserving).", choices=("positive", "paper")),
        Param("perturbation", "float", 0.01, "Relative amplitude of the seeded random "
              "perturbation of the uniform initial state.", lo=0, hi=1),
    ) + STEP_PARAMS + (INTEGRATOR, SEED)
    field_infos = {
        "cells": FieldInfo("vertex", "", "cell density f_n", (0.0, 2.0), lo=0.0),
        "chemo": FieldInfo("vertex", "", "chemoattractant density f_c", (0.0, 1.0), lo=0.0),
    }
    default_field = "cells"
    initial_condition = staticmethod(scenarios.chemotaxis_initial)
    initial_params = ("N", "perturbation")
    stability_bound = staticmethod(chemotaxis_bound)
    # scheme=positive (default) or paper; the paper's classes are also the ladder's base;
    # integrator=imex takes imex.ChemotaxisImex; on the GPU FusedChemotaxisImex (lattice_imex.py:
    # the whole step on the device on a lattice mesh with scheme=positive, else ChemotaxisImex)
    schemes = SchemeTable("scheme", {
        "positive": SchemeEntry(by_integrator(PositiveChemotaxisEuler, ChemotaxisImex),
                                by_integrator(FusedPositiveChemotaxis, FusedChemotaxisImex)),
        "paper": SchemeEntry(by_integrator(ChemotaxisEuler, ChemotaxisImex),
                             by_integrator(FusedChemotaxis, FusedChemotaxisImex))})
    check_params = {"vertices": 1500}

    def divergence_advice(self) -> str:
        if self.params["scheme"] == "paper":
            return ("scheme=paper (the paper's −α n Δc − α ∇n·∇c with averaged vertex gradients) "
                    "is not positivity-preserving: on coarse or irregular meshes the cell density "
                    "goes negative and the chemotaxis term blows up whatever the time step. Use "
                    "scheme=positive (the default): conservative upwind fluxes, n ≥ 0 on any "
                    "mesh.")
        return ("The positive scheme keeps n ≥ 0 and shortens its steps by itself, so a smaller "
                "dt or C will not help: look at the mesh (slivers or near-zero mixed areas make "
                "the Laplacian's λ_max and the rates huge; remesh or clean the file) and at the "
                "parameters (alpha far above the Turing threshold, very large s).")


@register
class GrayScott(SurfaceRD):
    model = "gray-scott"
    title = "Gray–Scott on surfaces"
    description = ("Gray–Scott reaction–diffusion on a triangulated surface with the cotangent "
                   "Laplace–Beltrami operator and explicit Euler (same machinery as chemotaxis).")
    species = ("u", "v")
    ensemble_params = ("Du", "Dv", "F", "k", "spots", "seed", "C", "dt")
    parameters = MESH_PARAMS + (
        Param("Du", "float", 0.02, "Diffusion rate of u.", lo=0, lo_open=True, live=True),
        Param("Dv", "float", 0.01, "Diffusion rate of v.", lo=0, lo_open=True, live=True),
        Param("F", "float", 0.037, "Feed rate F.", lo=0, hi=1, live=True),
        Param("k", "float", 0.06, "Kill rate k.", lo=0, hi=1, live=True),
        Param("spots", "int", 12, "Number of seeded initial spots of v.", lo=0, hi=10_000),
    ) + STEP_PARAMS + (INTEGRATOR, SEED)
    field_infos = {
        # the linear scheme is not positivity-preserving where cotan weights are negative: on
        # the 800-vertex tube v undershoots to -6e-4 over t = 5e4 and stays bounded
        "u": FieldInfo("vertex", "", "substrate u", (0.0, 1.0), lo=0.0, undershoot=1e-2),
        "v": FieldInfo("vertex", "", "activator v", (0.0, 0.5), lo=0.0, undershoot=1e-2),
    }
    default_field = "v"
    initial_condition = staticmethod(scenarios.gray_scott_initial)
    initial_params = ("spots",)
    stability_bound = staticmethod(gray_scott_bound)
    schemes = SchemeTable(None, {"euler": SchemeEntry(
        by_integrator(GrayScottEuler, GrayScottImex),
        by_integrator(FusedGrayScott, GrayScottImex))})
    check_params = {"vertices": 1500}
