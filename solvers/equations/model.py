"""Models defined by model files (docs/EQUATIONS.md): `define(path_or_dict)` reads and validates
the file (spec.py), builds a `Simulation` subclass for it and registers it under its name.

Its parameters are the file's own (floats with their ranges, units and `live` flags; live by
default: they are kernel scalars), the geometry's (kind, nx, ny, L, Lx, Ly, grid, boundary, mesh,
surface, vertices: defaults from [domain]) and the numerics' (integrator, dt, cfl, seed: defaults
from [numerics]). The state is one array per species (grids: shape (nx,) or (ny, nx); meshes: one
value per vertex); the fields are the species and the algebraic species.

Time step: the explicit integrators are stable for dt·max|D|·λ_max ≤ R (R = 2 for Euler, 2.51
SSP-RK3, 2.785 RK4; λ_max = Σ 4/h² on grids, the Gershgorin bound of the cotangent Laplacian on
meshes; max|D| the largest row sum over the species of |c·K| of the operator terms, evaluated on
the current state). dt = cfl·bound unless `dt` is given; a dt above the bound is refused. With
integrator=imex the bound leaves out the implicit terms, and an empty dt is at most
cfl·IMEX_FACTOR times the all-explicit Euler bound.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..core.errors import ParameterError
from ..core.memory import BASE, BASE_DEVICE
from ..core.params import Param, Scenario
from ..core.registry import model_class, register, set_definer
from ..core.simulation import FieldInfo, Simulation
from . import scenarios, spec
from .bc import parse_boundary
from .expr import ModelError, names_in
from .reference import IMEX, STABILITY, Evaluator, ExplicitReference, Rates
from .system import split, transport

GEOMETRY_PARAMS = {
    "kind": Param("kind", "str", "rectangle", "Geometry: a 1D interval (nx, L), a rectangle "
                  "(nx, ny, Lx, Ly) or a triangulated surface (mesh or surface, vertices).",
                  choices=("interval", "rectangle", "mesh")),
    "nx": Param("nx", "int", 128, "Grid points along x.", lo=3, hi=2**24),
    "ny": Param("ny", "int", None, "Grid points along y (empty: square cells).", lo=3,
                hi=2**14, nullable=True),
    "L": Param("L", "float", 100.0, "Length of the interval (and of the rectangle's side "
               "Lx when empty).", lo=0, lo_open=True),
    "Lx": Param("Lx", "float", None, "Width of the rectangle (empty: L).", lo=0, lo_open=True,
                nullable=True),
    "Ly": Param("Ly", "float", None, "Height of the rectangle (empty: Lx).", lo=0, lo_open=True,
                nullable=True),
    "grid": Param("grid", "str", "cell", "Grid points at cell centres ((i + 1/2)·dx) or on "
                  "vertices (i·dx, both ends included).", choices=("cell", "vertex")),
    "boundary": Param("boundary", "str", "periodic", "Boundary of every species: periodic, "
                      "neumann[: g], dirichlet: g, robin: g (∂s/∂n = g(s)), or per side "
                      "'left=...; right=...; bottom=...; top=...'; on meshes natural or "
                      "dirichlet: g."),
    "mesh": Param("mesh", "str", None, "Surface mesh file (kind = mesh; instead of surface).",
                  nullable=True),
    "surface": Param("surface", "str", "sphere", "Generated surface (kind = mesh).",
                     choices=("sphere", "torus", "tube", "rectangle")),
    "vertices": Param("vertices", "int", 10_000, "Vertices of the generated surface.", lo=64,
                      hi=2**26),
}
NUMERIC_PARAMS = {
    "integrator": Param("integrator", "str", "euler", "Time integrator: explicit Euler, SSP-RK3, "
                        "RK4, or IMEX (constant-coefficient lap terms implicit): imex is "
                        "second order (ARS(2,2,2)), imex1 semi-implicit Euler, imex3 third "
                        "order (ARS(3,4,3), three solves a step), imex443 third order "
                        "(ARS(4,4,3), four).",
                        choices=("euler", "ssprk3", "rk4", "imex", "imex1", "imex3", "imex443")),
    "dt": Param("dt", "float", None, "Time step (empty: cfl × the stable step).", lo=0,
                lo_open=True, nullable=True, live=True),
    "cfl": Param("cfl", "float", 0.5, "Fraction of the stable step used when dt is empty.",
                 lo=0, hi=1, lo_open=True, live=True),
    "seed": Param("seed", "int", 0, "Seed of `noise` in the initial conditions.", lo=0,
                  hi=2**32 - 1),
}


# model files' `kernel`: unlike the built-in models', it picks the CPU path too (cpu.py)
MODEL_KERNEL = Param("kernel", "str", "fused", "fused: the kernels generated from the model "
                     "(CUDA on the GPU; on the CPU built by the C++ compiler where there is "
                     "one), or array: NumPy / CuPy array code (the float64 reference).",
                     choices=("fused", "array"))
IMEX_FACTOR = 10.0  # integrator=imex, dt empty: cfl × 10 × the all-explicit Euler bound


class EquationModel(Simulation):
    """The base of every model defined from a file; `define` sets the class attributes."""

    definition: ClassVar = None
    definition_source: ClassVar = None
    scenarios = (Scenario("default", "The model file's domain and initial conditions."),)
    contract_params = {"nx": 16, "vertices": 200}
    check_interval = 32

    @classmethod
    def memory_estimate(cls, p):
        if p["kind"] == "mesh":
            n = 0 if p["mesh"] else p["vertices"]
        elif p["kind"] == "interval":
            n = p["nx"]
        else:
            ny = p["ny"] if p["ny"] is not None else p["nx"]
            n = p["nx"] * ny
        k = len(cls.definition.species) + len(cls.definition.algebraic)
        per = 160 + 96 * k  # state, stage copies, operator temporaries (float64)
        return BASE + per * n, BASE_DEVICE + per * n

    @classmethod
    def ensemble(cls, members, **kw):
        from .ensemble import EquationEnsemble
        return EquationEnsemble(cls, members, **kw)

    @classmethod
    def _check_params(cls, p):
        if p["mesh"]:  # a mesh file (--mesh FILE) makes the geometry a mesh
            p["kind"] = "mesh"

    @classmethod
    def describe(cls) -> dict:
        """The schema, plus the model file's own content (`definition`), citation and what to
        look for."""
        return {**super().describe(), "definition": cls.definition_source,
                "citation": cls.citation, "look_for": cls.look_for}

    # ---- schemes ------------------------------------------------------------------------
    cpu_reason = ""  # on the CPU: which path runs and why (cpu.py)

    def _make_scheme(self):
        """On the CPU with kernel=fused, the generated kernels compiled for the CPU (cpu.py)
        where a compiler builds them, else (and with kernel=array) the NumPy reference."""
        if not self._be.is_gpu:
            if self.params.get("kernel", "fused") == "fused":
                from .cpu import compiled_scheme
                scheme = compiled_scheme(self)
                if scheme is not None:
                    return scheme
            else:
                self.cpu_reason = "NumPy array path: kernel=array"
        return super()._make_scheme()

    @property
    def kernel(self) -> str:
        """'fused' or 'array' on the GPU; on the CPU 'compiled' (the generated kernels built
        by the C++ compiler) or 'numpy' (the array path)."""
        if not self._be.is_gpu:
            from .fused import FusedEquations
            return ("compiled" if isinstance(getattr(self, "scheme", None), FusedEquations)
                    else "numpy")
        return super().kernel

    def notes(self) -> list[str]:
        """How the GPU's fused path runs the steps, where it is not one launch a stage: the
        tiled grid path (fused.py `tile_plan`; docs/EQUATIONS.md, "GPU"), or why it is off."""
        scheme = getattr(self, "scheme", None)
        tiles = getattr(scheme, "tiles", None)
        out = []
        if tiles is not None:
            size = f"{tiles.tile}²" if tiles.two else f"{tiles.tile}"
            from .fused import GRAPH_STEPS
            out.append(f"fixed steps run {tiles.steps} at a time in shared memory (tiles of "
                       f"{size} nodes with a halo of {tiles.halo}), in CUDA graphs of "
                       f"{GRAPH_STEPS} steps")
        failed = getattr(scheme, "tile_failed", None)
        if failed:
            out.append(f"the tiled kernel did not build ({failed}); one launch a stage")
        return out

    # ---- set-up -------------------------------------------------------------------------
    def _setup(self):
        d = self.definition
        p = self.params
        self.user_params = {k: float(p[k]) for k in d.parameters}
        self.species = d.species
        on_mesh = p["kind"] == "mesh"
        axes = 0 if on_mesh else (1 if p["kind"] == "interval" else 2)
        bnames = {**{k: "param" for k in d.parameters}, "x": "coord", "y": "coord",
                  "z": "coord", "t": "time", "pi": "const"}
        try:
            self.sides = {s: parse_boundary(d.boundary.get(s, p["boundary"]), s, axes, bnames,
                                            "boundary" if s in d.boundary else "domain",
                                            s if s in d.boundary else "boundary")
                          for s in d.species}
        except ModelError as e:
            raise ParameterError(f"{self.model}: {e}") from None
        periodic = [all(self.sides[s][side].kind == "periodic" for s in d.species)
                    for side in ("left", "bottom")[:axes]]
        mixed = [any(self.sides[s][side].kind == "periodic" for s in d.species)
                 for side in ("left", "bottom")[:axes]]
        if periodic != mixed:
            raise ParameterError(f"{self.model}: boundary: an axis is periodic for some species "
                                 "only; allowed: periodic for all species or none")
        from .bc import Side
        for a in d.algebraic:  # an algebraic operand of lap/div: zero flux or periodic
            self.sides[a] = ({"all": Side("neumann", ("num", 0.0))} if on_mesh else
                             {side: Side("periodic" if periodic[i // 2] else "neumann",
                                         ("num", 0.0))
                              for i, side in enumerate(("left", "right", "bottom",
                                                        "top")[:2 * axes])})
        geo = scenarios.build(self.model, p, periodic + [False, False])
        self.mesh, self.coords, self.shape, self.spacing = (geo["mesh"], geo["coords"],
                                                            geo["shape"], geo["spacing"])
        loc = "vertex" if on_mesh else "node"
        self.field_infos = {**{s: FieldInfo(loc, "", f"species {s}") for s in d.species},
                            **{a: FieldInfo(loc, "", f"algebraic species {a}", settable=False)
                               for a in d.algebraic}}
        self.splits = {s: split(d.equations[s], f"the equation of {s}") for s in d.species}
        species_like = set(d.species) | set(d.algebraic)
        self.transports, self.central_terms = {}, {}
        for s in d.species:
            tr, rest = (transport(s, self.splits[s], species_like) if on_mesh
                        else (None, self.splits[s].terms))
            if tr is not None and p["integrator"] in IMEX and tr.D != ("num", 0.0):
                # IMEX: the species' own diffusion implicit, the transport explicit with the
                # upwind (D -> 0) limit of the positive flux (solvers/surface_rd/imex.py)
                from .system import OpTerm, Transport
                rest = (OpTerm("lap", tr.D, None, s),) + tuple(rest)
                tr = Transport(("num", 0.0), tr.alpha, tr.v)
            if tr is not None:
                self.transports[s] = tr
            self.central_terms[s] = rest
        self._ops_cache = {}
        ev = Evaluator(np, np.float64)
        init = scenarios.initial_state(d, self.user_params, self.coords, self.shape, p["seed"],
                                       ev, scenarios.geometry_numbers(p))
        for s in d.species:
            self.state[s] = self.xp.asarray(init[s], dtype=self.dtype)
        self._params_changed()

    def make_ops(self, xp, dtype):
        """The operators (ops.py) on backend `xp` in real type `dtype` (cached)."""
        from .ops import GridOps, MeshOps
        key = (xp.__name__, np.dtype(dtype).name)
        if key not in self._ops_cache:
            coords = {k: xp.asarray(v, dtype=dtype) for k, v in self.coords.items()}
            if self.params["kind"] == "mesh":
                ops = MeshOps(self.mesh, xp, dtype, coords, self.sides)
            else:
                ops = GridOps(self.shape, self.spacing, self.params["grid"] == "vertex", xp,
                              dtype, coords, self.sides)
            self._ops_cache[key] = ops
        return self._ops_cache[key]

    # ---- the time step ------------------------------------------------------------------
    def implicit_terms(self):
        """(species, OpTerm) of the constant-coefficient lap terms of a species' own equation
        (treated implicitly by integrator=imex)."""
        if self.params["integrator"] not in IMEX:
            return ()
        from .system import constant
        like = set(self.species) | set(self.definition.algebraic)
        return tuple((s, t) for s in self.species for t in self.central_terms[s]
                     if t.kind == "lap" and t.operand == s and constant(t.coef, like)
                     and "t" not in names_in(t.coef))

    def diffusion_bound(self, with_implicit: bool = False) -> tuple[float, float, float]:
        """(stable step, max|D|, λ_max) of the explicit part (module docstring); with
        `with_implicit`, as if every term were explicit (Euler)."""
        ops = self.make_ops(np, np.float64)
        rates = Rates(self, ops, np, np.float64)
        host = {s: np.asarray(self._be.asnumpy(a), dtype=np.float64)
                for s, a in self.state.items()}
        env = rates.env(host, self.t)
        implicit = set() if with_implicit else set(self.implicit_terms())
        worst = 0.0
        for s in self.species:
            total = 0.0
            for t in self.central_terms[s]:
                if (s, t) in implicit:
                    continue
                c = np.abs(np.asarray(rates.ev(t.coef, env), dtype=np.float64)).max()
                if t.kind == "divgrad":
                    c = c * np.abs(np.asarray(rates.ev(t.K, env), dtype=np.float64)).max()
                total += float(c)
            tr = self.transports.get(s)
            if tr is not None:
                total += abs(float(rates.ev(tr.D, env)))
            worst = max(worst, total)
        lam = ops.lambda_max
        r = STABILITY[self.params["integrator"]]
        if with_implicit:
            r = STABILITY["euler"]
        bound = r / (worst * lam) if worst * lam > 0 else float("inf")
        return bound, worst, lam

    def _params_changed(self):
        p = self.params
        self.user_params = {k: float(p[k]) for k in self.definition.parameters}
        bound, D, lam = self.diffusion_bound()
        self.dt_max = bound
        integ = p["integrator"]
        if p["dt"] is not None:
            if p["dt"] > bound:
                raise ParameterError(
                    f"{self.model}: parameter 'dt' = {p['dt']:g} is above the stable step "
                    f"{bound:.6g} = {STABILITY[integ]}/(max|D|·λ_max) of {integ} (max|D| = "
                    f"{D:.6g}, λ_max = {lam:.6g}); allowed: dt <= {bound:.6g}")
            self.dt = float(p["dt"])
        elif integ in IMEX:  # the implicit terms set no limit: IMEX_FACTOR explicit steps
            full = self.diffusion_bound(with_implicit=True)[0]
            self.dt = min(p["cfl"] * bound, p["cfl"] * IMEX_FACTOR * full)
            if self.dt == float("inf"):
                raise ParameterError(f"{self.model}: no diffusion bounds the step; parameter "
                                     "'dt' is needed; allowed: a number > 0")
        elif bound == float("inf"):
            raise ParameterError(f"{self.model}: no explicit diffusion bounds the step; "
                                 "parameter 'dt' is needed; allowed: a number > 0")
        else:
            self.dt = p["cfl"] * bound

    # ---- fields -------------------------------------------------------------------------
    def _fields(self):
        out = dict(self.state)
        if self.definition.algebraic:
            state, t, memo = dict(self.state), self.t, {}

            def algebraic(name):  # every algebraic species at once, when one is asked for
                if not memo:
                    ops = self.make_ops(self.xp, self.real)
                    memo.update(Rates(self, ops, self.xp, self.real).env(state, t))
                return memo[name]
            out.update({a: (lambda a=a: algebraic(a)) for a in self.definition.algebraic})
        return out

    def work(self):
        n = int(np.prod(self.shape))
        item = np.dtype(self.dtype).itemsize
        return n, 2 * n * item * len(self.species)


def _make_class(d: spec.Definition) -> type:
    params = []
    for name, q in d.parameters.items():
        params.append(Param(name, "float", q["value"], q["help"] or f"Parameter {name}.",
                            unit=q["unit"], lo=q["min"], hi=q["max"], live=q["live"]))
    for section, table, src in (("domain", GEOMETRY_PARAMS, d.domain),
                                ("numerics", NUMERIC_PARAMS, d.numerics)):
        for name, base in table.items():
            if name in src:
                try:
                    base = base.with_default(base.validate(src[name], d.name))
                except ParameterError as e:
                    raise ModelError(str(e), section, name) from None
            params.append(base)
    params.append(MODEL_KERNEL)
    from .fused import fused_scheme
    from .imex import ImexReference
    attrs = {
        "model": d.name, "title": d.info["title"] or d.name,
        "description": " ".join(x for x in (d.info["description"], d.info["citation"] and
                                            f"({d.info['citation']})") if x)
        or f"Model file {d.name}.",
        "parameters": tuple(params), "definition": d, "definition_source": d.source,
        "field_infos": {**{s: FieldInfo("node", "", f"species {s}") for s in d.species},
                        **{a: FieldInfo("node", "", f"algebraic species {a}", settable=False)
                           for a in d.algebraic}},
        "default_field": d.species[0], "size_param": "nx",
        "reference_scheme": staticmethod(lambda sim: (
            ImexReference if sim.params["integrator"] in IMEX else ExplicitReference)(sim)),
        "fused_scheme": staticmethod(fused_scheme),
        "look_for": d.info["look_for"], "citation": d.info["citation"],
        # what may differ between the members of an ensemble (ensemble.py)
        "ensemble_params": tuple(d.parameters) + ("seed", "dt", "cfl"),
    }
    return type(f"Model_{d.digest[:12]}", (EquationModel,), attrs)


def define(path_or_dict) -> str:
    """Read, check and register a model file (module docstring); returns its model id. The same
    name defined again replaces the earlier definition; a built-in model's name is refused."""
    d = spec.read(path_or_dict)
    try:
        old = model_class(d.name)
    except ParameterError:
        old = None
    if old is not None and not issubclass(old, EquationModel):
        raise ModelError(f"[model] name '{d.name}' is a built-in model; allowed: another name",
                         "model", "name")
    if old is not None and old.definition.source == d.source:
        return d.name
    cls = _make_class(d)
    for s in d.species:  # every operator term has the shape the schemes need
        try:
            split(d.equations[s], f"the equation of {s}")
        except ModelError as e:
            raise ModelError(str(e), "equations", s) from None
    register(cls, replace=True)
    return d.name


set_definer(define)
