"""The `Simulation` base class: the stepping, field, checkpoint and error contract of docs/MODELS.md §0.

A model subclass declares its parameters, scenarios and fields, names its schemes (core/scheme.py)
and implements:

    _setup()                 build the mesh (self.mesh) and the state (self.state: name -> xp array)
    schemes                  the scheme table (core/scheme.py: name -> xp reference class, CUDA
                             class, options; picked by a parameter)
    _fields() -> dict        every displayable field as xp arrays (default: the state), or
                             callables computing a derived one when asked (`device_fields`)
    work() -> (cells, bytes) cells updated per step and compulsory bytes moved per step (benchmarks)

and optionally `_check_params` (cross-parameter constraints), `_check_field` (value ranges of a
field given to set_field), `_aux_state`/`_set_aux_state` (scalars a checkpoint needs, e.g. the
adaptive step). After `_setup` the base class builds `self.scheme`: the fused scheme on the GPU
unless `kernel=array`, else the reference scheme. Everything else (time bookkeeping with the
landing rule of core/clock.py, divergence detection with the state kept, statistics, checkpoints)
lives here once.
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, ClassVar, Mapping

import numpy as np

from . import backend as _backend
from . import checkpoint, checks, clock, memory
from .errors import NonFiniteStep, ParameterError, SimulationDiverged
from .params import KERNEL, Param, Scenario, frozen, validate_all
from .fields import BoundViolated, FieldInfo, QuantityInfo, Snapshot  # noqa: F401  (re-exported)
from .scheme import SchemeEntry, SchemeTable
from .values import real_array

CHECKPOINT_VERSION = checkpoint.VERSION
# A closed lower bound (lo, e.g. a density >= 0) tolerates undershoots of round-off size, at most
# BOUND_SLACK x max(1, |lo|); an open one (a depth, a pressure > 0) none.
BOUND_SLACK = 1e-9


class Simulation:
    model: ClassVar[str] = ""
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[tuple[Param, ...]] = ()
    scenarios: ClassVar[tuple[Scenario, ...]] = ()
    field_infos: ClassVar[Mapping[str, FieldInfo]] = {}
    # Scalars the model declares (mass, energy, an error against the exact solution, the step
    # size): `quantities()` computes them, `_quantities()` is the model's hook. Empty: the
    # minimum, maximum and mean of the default field.
    quantity_infos: ClassVar[Mapping[str, QuantityInfo]] = {}
    # Parameters that may differ between the members of an ensemble (`ensemble`); empty: the
    # model has no ensembles.
    ensemble_params: ClassVar[tuple[str, ...]] = ()
    # How many steps run between two finiteness checks (one device reduction and sync each).
    check_interval: ClassVar[int] = 64
    # Benchmarks: the size parameter and the sizes `pdestudio bench` runs by default.
    size_param: ClassVar[str] = "nx"
    bench_sizes: ClassVar[tuple[int, ...]] = ()
    bench_scenario: ClassVar[str | None] = None
    bench_params: ClassVar[Mapping[str, Any]] = {}
    bench_variants: ClassVar[tuple[Mapping[str, Any], ...]] = ({},)
    bench_t_end: ClassVar[float | None] = None
    # Display hints for the app (which chooses views by mesh kind and field location, never by
    # model name): the field shown first, and fields drawn together as surfaces (e.g. the free
    # surface over the bottom).
    default_field: ClassVar[str | None] = None
    surfaces: ClassVar[tuple[str, ...]] = ()
    # The schemes (core/scheme.py): a SchemeTable of classes taking the simulation. Without a
    # fused class anywhere the family has no `kernel` parameter. (A model may instead name one
    # `reference_scheme` and optionally `fused_scheme`: they become a one-entry table.)
    schemes: ClassVar[SchemeTable] = None
    reference_scheme: ClassVar[Any] = None
    fused_scheme: ClassVar[Any] = None
    # Small, non-trivial parameters for the registry-driven check that every fused scheme equals
    # its float64 reference (tests/solvers/test_fused_matches_reference.py): sizes that are not
    # multiples of the kernels' blocks and tiles, quick on the GPU and on NumPy.
    check_params: ClassVar[Mapping[str, Any]] = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "schemes" not in cls.__dict__ and "reference_scheme" in cls.__dict__:
            cls.schemes = SchemeTable(None, {"default": SchemeEntry(cls.reference_scheme,
                                                                    cls.fused_scheme)})
    # Memory (core/memory.py): peak host bytes per cell in float64 (a number, or a mapping
    # geometry -> bytes), and on the GPU (None: the same).
    memory_per_cell: ClassVar[Any] = memory.DEFAULT_PER_CELL
    device_memory_per_cell: ClassVar[Any] = None

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def schema(cls, scenario: str | None = None) -> dict[str, Param]:
        """Parameter declarations with the scenario's defaults applied."""
        s = {p.name: p for p in cls.parameters}
        if cls.schemes is not None and cls.schemes.has_fused:
            s.setdefault("kernel", KERNEL)
        if scenario is not None:
            for k, v in cls.scenario(scenario).defaults.items():
                s[k] = s[k].with_default(v)
        return s

    @classmethod
    def scenario(cls, name: str | None) -> Scenario:
        if name is None:
            return cls.scenarios[0]
        for sc in cls.scenarios:
            if sc.name == name:
                return sc
        raise ParameterError(f"{cls.model}: unknown scenario '{name}'; allowed: "
                             + ", ".join(s.name for s in cls.scenarios))

    @classmethod
    def _check_params(cls, p: dict) -> None:
        """Cross-parameter constraints; raise ParameterError naming the parameters."""

    @classmethod
    def memory_estimate(cls, params: Mapping[str, Any]) -> tuple[int, int]:
        """(host, device) bytes a run with these validated parameters needs at its peak,
        estimated before anything is allocated (core/memory.py)."""
        return memory.estimate(cls, params)

    @classmethod
    def describe(cls) -> dict:
        return {
            "model": cls.model, "title": cls.title, "description": cls.description,
            "parameters": [p.describe() for p in cls.schema().values()],
            "scenarios": [{"name": s.name, "help": s.help, "defaults": dict(s.defaults)}
                          for s in cls.scenarios],
            "fields": [fi.describe(n) for n, fi in cls.field_infos.items()],
            "default_field": cls.default_field or next(iter(cls.field_infos), None),
            "surfaces": list(cls.surfaces),
            "size_param": cls.size_param,
            "quantities": [q.describe(n) for n, q in cls._quantity_infos().items()],
            "ensemble": list(cls.ensemble_params),
        }

    @classmethod
    def ensemble(cls, members, **kw):
        """E simulations of this model on one mesh advanced together (solvers.create_ensemble)."""
        raise ParameterError(f"{cls.model}: no ensembles for this model; models with "
                             "ensembles: those whose describe() lists 'ensemble' parameters")

    def __init__(self, *, backend: str = "auto", dtype: str = "float64",
                 scenario: str | None = None, **params):
        sc = self.scenario(scenario)
        dtype = _backend.check_dtype(dtype)
        be = _backend.resolve(backend)
        p = validate_all(self.schema(sc.name), params, self.model)
        self._check_params(p)
        # before anything is allocated; the estimate may depend on the dtype and the device
        memory.check(type(self), {**p, "_dtype": dtype, "_gpu": be.is_gpu}, be.is_gpu)
        self._be = be
        self.xp = be.xp
        self.backend = be.name
        self.backend_reason = _backend.gpu_status()[1] if backend == "auto" else "asked for"
        self.dtype = dtype
        self.real = np.dtype(dtype).type
        self.scenario_name = sc.name
        self.params: Mapping[str, Any] = frozen(p)
        self.t = 0.0
        self.steps = 0
        self.stats: dict[str, float] = {"kernel_s": 0.0, "transfer_s": 0.0, "wall_s": 0.0,
                                        "steps": 0, "cell_updates_per_s": 0.0,
                                        "steps_per_s": 0.0}
        self.state: dict[str, Any] = {}
        self.mesh = None
        self.scheme = None
        self._setup()
        self.scheme = self._make_scheme()

    def _make_scheme(self):
        """The table's entry for the parameters: its fused class on the GPU (unless
        kernel=array, or the entry has none), else its reference class."""
        entry = self.schemes.entry(self.params)
        if self.kernel == "fused" and entry.fused is not None:
            return entry.fused(self)
        return entry.reference(self)

    @property
    def kernel(self) -> str:
        """The GPU path in use: 'fused', 'array', or 'numpy' on the CPU."""
        if not self._be.is_gpu:
            return "numpy"
        return self.params.get("kernel", "array")

    # ---- hooks --------------------------------------------------------------------------
    def _setup(self) -> None:
        raise NotImplementedError(f"{type(self).__name__}._setup")

    def _fields(self) -> dict:
        return dict(self.state)

    def work(self) -> tuple[int, float]:
        raise NotImplementedError(f"{type(self).__name__}.work")

    def notes(self) -> list[str]:
        """What the user should know about how this run is carried out (e.g. a tolerance raised
        to what the dtype resolves); printed by `pdestudio run`."""
        return []

    def divergence_advice(self) -> str | None:
        """The advice a SimulationDiverged of this simulation gives (None: the generic one)."""
        return None

    def _diverged(self, field: str) -> SimulationDiverged:
        v = getattr(self, "_violation", None)
        if v is not None and v[0] == field:
            return BoundViolated(self.model, self.t, self.steps, *v, self.divergence_advice())
        return SimulationDiverged(self.model, self.t, self.steps, field, self.divergence_advice())

    def _check_field(self, name: str, values: np.ndarray) -> None:
        """Model-specific checks of a field given to set_field (beyond shape, finiteness, lo)."""

    def _aux_state(self) -> dict:
        return {}

    def _set_aux_state(self, aux: dict) -> None:
        pass

    # ---- stepping -----------------------------------------------------------------------
    def step(self, n: int = 1, ahead: int = 0) -> None:
        """Advance n accepted time steps. `ahead` (a live view's loop): where the scheme can
        (`runs_ahead`: docs/MODELS.md §0), also start the next `ahead`
        steps (their first chunk of `check_interval`) on the device before this call's wait,
        so the GPU works on while the caller hands a frame over; the next `step(ahead, ...)`
        takes them. They change nothing until then: any other call, a new field, a parameter
        or `settle()` leaves them unused."""
        n = Param("n", "int", 1, "steps", lo=0).validate(n, f"{self.model}.step")
        ahead = Param("ahead", "int", 0, "steps", lo=0).validate(ahead, f"{self.model}.step")
        self._run(n=n, t_end=None, ahead=ahead)

    @property
    def runs_ahead(self) -> bool:
        """Whether `step(n, ahead=m)` starts steps ahead here (else `ahead` is ignored)."""
        return bool(getattr(self.scheme, "runs_ahead", False))

    def settle(self) -> None:
        """Wait for steps started ahead (`step(n, ahead=m)`) to finish on the device; they are
        then not used. The state, t and steps are those of the last call either way."""
        settle = getattr(self.scheme, "settle", None)
        if settle is not None:
            settle()

    def advance(self, t_end: float, max_steps: int | None = None) -> None:
        """Advance until t == t_end exactly (the last step is shortened to land on it), or stop
        earlier after `max_steps` accepted steps (for progress reports on long runs)."""
        t_end = Param("t_end", "float", 0.0, "end time", lo=self.t).validate(
            t_end, f"{self.model}.advance")
        if max_steps is not None:
            max_steps = Param("max_steps", "int", 1, "steps", lo=0).validate(max_steps)
        self._run(n=max_steps, t_end=t_end)

    def _run(self, n: int | None, t_end: float | None, ahead: int = 0) -> None:
        wall0 = time.perf_counter()
        steps0 = self.steps
        kernel_s = 0.0
        done = 0
        dt = self._next_dt()
        if n != 0 and not clock.landed(self.t, t_end) and dt is not None and not clock.moves(
                self.t, min(dt, clock.limit(self.t, t_end) or dt)):
            raise clock.stuck(self.model, self.t, dt)
        snap = None
        marks = checks.Marks(self.xp) if self._be.is_gpu and checks.AHEAD else None
        while True:
            remaining = None if n is None else n - done
            if remaining == 0 or clock.landed(self.t, t_end):
                break
            chunk = self.check_interval if remaining is None else min(remaining, self.check_interval)
            snap = snap or self._snapshot()
            last = remaining is not None and remaining <= chunk  # no snapshot after it
            # the steps after this chunk, queued before its wait where the scheme runs ahead:
            # the next call's first (`ahead`), or the next chunk of this call where the scheme
            # runs chunks ahead (a run queued ahead is taken up only by a run of the same count
            # from the same time)
            runs_ahead = getattr(self.scheme, "runs_ahead", False)
            chunks = getattr(self.scheme, "AHEAD_CHUNKS", False)
            after = 0 if t_end is not None or remaining is None else (
                ahead if last else (remaining - chunk if chunks else 0))
            if after > 0 and runs_ahead:
                self.scheme.ahead = min(after, self.check_interval)
            try:
                k, bad, seconds, nxt = checks.run_chunk(self, chunk, t_end, marks, last)
            finally:
                if runs_ahead:
                    self.scheme.ahead = 0
            kernel_s += seconds
            if bad is not None:
                self._restore(snap)
                checks.replay_to_failure(self, k, t_end)
            if k > 0 and self.t == snap[1]:  # steps that left the clock where it was
                self._restore(snap)
                raise clock.stuck(self.model, self.t, self._next_dt())
            done += k
            snap = nxt.snapshot() if nxt is not None else None
        kernel_s += marks.seconds() if marks is not None else 0.0
        wall = time.perf_counter() - wall0
        steps = self.steps - steps0
        cells = self.work()[0]
        self.stats.update(kernel_s=kernel_s, wall_s=wall, steps=steps,
                          steps_per_s=steps / wall if wall > 0 else 0.0,
                          cell_updates_per_s=steps * cells / wall if wall > 0 else 0.0)

    def _next_dt(self) -> float | None:
        """The size of the next step where the model holds it before stepping (its `dt` or the
        adaptive `tau`), else None: a run refuses at once when it cannot move the clock."""
        for name in ("dt", "tau"):
            v = getattr(self, name, None)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
                    and v > 0:
                return float(v)
        return None

    def _steps_unchecked(self, count: int, t_end: float | None) -> int:
        """Up to `count` accepted steps without passing t_end, no finiteness check; returns the
        number taken. A scheme with `run` batches them; otherwise one `step` at a time."""
        run = getattr(self.scheme, "run", None)
        if run is not None:
            if clock.landed(self.t, t_end):
                return 0
            try:
                k, t = run(count, self.t, t_end)
            except NonFiniteStep:
                raise self._diverged(self._worst_field()) from None
            self.t = float(t)
            self.steps += k
            return k
        with checks.hooks_off():  # (a scheme's step may be a run of one: checked after them all)
            return self._steps_one_by_one(count, t_end)

    def _steps_one_by_one(self, count: int, t_end: float | None) -> int:
        k = 0
        while k < count and not clock.landed(self.t, t_end):
            limit = clock.limit(self.t, t_end)
            try:
                with np.errstate(all="ignore"):  # a diverging step: the checks report it
                    dt = self.scheme.step(self.t, limit)
            except NonFiniteStep:
                dt = math.nan
            if not math.isfinite(dt) or dt <= 0:
                raise self._diverged(self._worst_field())
            self.t = clock.after_step(self.t, dt, t_end)
            self.steps += 1
            k += 1
        return k

    def _first_nonfinite(self) -> str | None:
        """The first state field that is not finite, or that broke a lower bound (`_bounded`):
        one reduction per field and per bound, one host sync for all. A bound's finding is kept
        in `_violation` for `_diverged`. (Stepping on the GPU queues the same checks before a
        chunk's wait instead: core/checks.py.)"""
        return self._judge_checks(checks.read(self, self._check_arrays()))

    def _check_arrays(self) -> list:
        """The checks of the state as 0-d arrays, no host sync: whether each state field is
        finite, then the minimum of each bounded quantity (`_bounded`)."""
        return checks.state_checks(self)

    def _judge_checks(self, vals) -> str | None:
        """`_first_nonfinite`'s answer from the host values of `_check_arrays`."""
        return checks.judge_state_checks(self, vals)

    # Whether stepping checks the physical lower bounds (kernel tests on random, unphysical data
    # turn it off for their simulation; a run never should).
    check_bounds = True

    def _bounded(self) -> list:
        """(name, array, lo, lo_open) of what must stay above a bound while stepping: each state
        field whose FieldInfo declares `lo`, and what the model adds (`_derived_bounds`, e.g. the
        pressure of a gas)."""
        if not self.check_bounds:
            return []
        out = [(k, v, fi.lo - fi.undershoot, fi.lo_open) for k, v in self.state.items()
               if (fi := self.field_infos.get(k)) is not None and fi.lo is not None]
        return out + self._derived_bounds()

    def _derived_bounds(self) -> list:
        """(name, xp array, lo, lo_open) of derived quantities with a physical lower bound."""
        return []

    def _worst_field(self) -> str:
        return self._first_nonfinite() or next(iter(self.state), "?")

    def _snapshot(self, copies=None):
        """(state copies, t, steps, aux) to restore; `copies`: made already (core/checks.py)."""
        return (copies if copies is not None else {k: v.copy() for k, v in self.state.items()},
                self.t, self.steps, json.dumps(self._aux_state()))

    def _restore(self, snap) -> None:
        self.settle()
        state, self.t, self.steps, aux = snap
        for k, v in state.items():
            self._assign_state(k, v)
        self._set_aux_state(json.loads(aux))

    def _assign_state(self, name: str, values) -> None:
        """Replace a state array's contents (in place where the shapes allow). Every replacement
        of state from outside the stepping (set_field, checkpoint load, divergence restore) comes
        through here, so a model that caches values derived from the state (e.g. the next step's
        Δt) may override this to drop them, calling super()."""
        self.settle()  # a run queued ahead reads the state as it starts
        cur = self.state[name]
        if cur.shape == values.shape:
            cur[...] = values
        else:
            self.state[name] = values
        if self.scheme is not None:
            self.scheme.invalidate()

    # ---- live parameters ----------------------------------------------------------------
    def set_param(self, name: str, value) -> None:
        """Change a `live` parameter of this simulation (validated like at creation; a parameter
        that is not live applies only to a new simulation). Nothing changes if it is refused."""
        schema = self.schema(self.scenario_name)
        if name not in schema:
            raise ParameterError(f"{self.model}: unknown parameter '{name}'; known parameters: "
                                 + ", ".join(schema))
        p = schema[name]
        if not p.live:
            raise ParameterError(f"{self.model}: parameter '{name}' is not live; it applies to "
                                 "a new simulation (reset); live parameters: "
                                 + (", ".join(k for k, q in schema.items() if q.live) or "none"))
        new = dict(self.params)
        new[name] = p.validate(value, self.model)
        self._check_params(new)
        self.settle()
        old, self.params = self.params, frozen(new)
        try:
            self._params_changed()
            self.scheme.invalidate()
        except Exception:
            self.params = old
            self._params_changed()
            self.scheme.invalidate()
            raise

    def _params_changed(self) -> None:
        """Recompute what the model derived from live parameters (e.g. a stable step size);
        raise ParameterError to refuse the new values (they are then rolled back)."""

    # ---- fields -------------------------------------------------------------------------
    def fields(self) -> dict[str, np.ndarray]:
        """Host copies of every displayable field (original numbering)."""
        t0 = time.perf_counter()
        out = {k: np.ascontiguousarray(self._be.asnumpy(v))
               for k, v in self.device_fields().items()}
        self.stats["transfer_s"] = time.perf_counter() - t0
        return out

    def device_fields(self, names=None) -> dict:
        """The displayable fields as arrays of the simulation's backend (CuPy arrays on the GPU,
        no copy to the host), in the original numbering: what the app's transfer path reads.
        `names`: a subset (default all; derived fields not named are not computed). Valid
        until the next step."""
        out = self._fields()
        for n in names or ():
            self.field_info(n)
        out = out if names is None else {n: out[n] for n in names}
        return {k: v() if callable(v) else v for k, v in out.items()}

    def field_info(self, name: str) -> dict:
        if name not in self.field_infos:
            raise ParameterError(f"{self.model}: unknown field '{name}'; fields: "
                                 + ", ".join(self.field_infos))
        return self.field_infos[name].describe(name)

    def settable_fields(self) -> list[str]:
        return [n for n, fi in self.field_infos.items() if fi.settable]

    def field_shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.device_fields([name])[name].shape)

    def set_field(self, name: str, values) -> None:
        """Replace a field (an initial condition, a painted region), validated like a parameter:
        real numbers (bool, int, float; no complex, dates, objects or text) of the field's shape,
        finite and within the range of the simulation's dtype (core/values.py), then the field's
        lower bound and the model's checks. Nothing changes if it is refused; the simulation
        keeps a copy, never the caller's array."""
        self.field_info(name)  # unknown -> ParameterError
        fi = self.field_infos[name]
        if not fi.settable:
            raise ParameterError(f"{self.model}: field '{name}' is derived and cannot be set; "
                                 "settable fields: " + ", ".join(self.settable_fields()))
        arr = real_array(values, self.field_shape(name), f"{self.model}: field '{name}'",
                         self.dtype)
        self._check_field(name, arr)  # first: the model's own words for its bounds
        if fi.lo is not None:
            low = arr.min()
            if low < fi.lo or (fi.lo_open and low <= fi.lo):
                rel = ">" if fi.lo_open else ">="
                raise ParameterError(f"{self.model}: field '{name}' has minimum {low:g}; "
                                     f"allowed: values {rel} {fi.lo:g}")
        self._set_field(name, arr)

    def _set_field(self, name: str, arr: np.ndarray) -> None:
        self._assign_state(name, self.xp.asarray(arr, dtype=self.dtype))

    # ---- quantities -----------------------------------------------------------------------
    @classmethod
    def _quantity_infos(cls) -> Mapping[str, QuantityInfo]:
        if cls.quantity_infos:
            return cls.quantity_infos
        f = cls.default_field or next(iter(cls.field_infos), "?")
        unit = cls.field_infos[f].unit if f in cls.field_infos else ""
        return {f"min {f}": QuantityInfo(unit, f"smallest value of {f}"),
                f"max {f}": QuantityInfo(unit, f"largest value of {f}"),
                f"mean {f}": QuantityInfo(unit, f"mean of {f} over the nodes or cells")}

    def _quantities(self) -> dict:
        """The declared quantities as backend scalars (0-d arrays or floats); overridden by
        models that declare `quantity_infos`."""
        f = self.default_field or next(iter(self.field_infos))
        a = self.device_fields([f])[f]
        return {f"min {f}": a.min(), f"max {f}": a.max(), f"mean {f}": a.mean()}

    def quantities(self) -> dict[str, float]:
        """The model's declared scalars now (describe()['quantities']) as floats: one sync."""
        return self._quantity_floats(self._quantities())

    def _quantity_floats(self, q: dict) -> dict[str, float]:  # (also an ensemble member's)
        names = list(self._quantity_infos())
        xp = self.xp
        vals = self._be.asnumpy(xp.stack([xp.asarray(q[n], dtype=xp.float64).reshape(())
                                          for n in names])) if names else []
        return {n: float(v) for n, v in zip(names, vals)}

    # ---- timeline -----------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The whole state now (copies kept on the device on the GPU). Stepping on after
        `restore(snap)` is bit-identical to stepping on from here: the scheme's cached values
        (e.g. the next step size) are dropped here as they are on a restore."""
        self.scheme.invalidate()
        state, t, steps, aux = self._snapshot()
        return Snapshot(self.model, self.backend, self.dtype, state, t, steps, aux,
                        dict(self.params))

    def restore(self, snap: Snapshot, keep_params: bool = False) -> None:
        """Go back to `snap` (from this simulation, or from another of the same model whose state
        has the same names and shapes: a fork with other parameters, dtype or backend). The live
        parameters return to their values at the snapshot unless `keep_params`; parameters that
        are not live stay this simulation's. Refused (ParameterError) without any change when
        the snapshot does not fit."""
        if not isinstance(snap, Snapshot):
            raise ParameterError(f"{self.model}: restore needs a Snapshot from sim.snapshot(), "
                                 f"not {type(snap).__name__}")
        state = snap.state_for(self)
        self.settle()
        if not keep_params:
            schema = self.schema(self.scenario_name)
            new = dict(self.params)
            new.update({k: v for k, v in snap.params.items() if k in schema and schema[k].live})
            self._check_params(new)
            self.params = frozen(new)
            self._params_changed()
        self._restore((state, snap.t, snap.steps, snap.aux))
        if any(self.params.get(k) != v for k, v in snap.params.items()):
            # a fork with other parameters: what the model derives from them follows them, not
            # the snapshot's values (e.g. a step size fixed from the state and cfl)
            self._params_changed()

    # ---- the brush ----------------------------------------------------------------------
    def paint(self, field: str, center, radius: float, value: float, mode: str = "set") -> int:
        """Set (mode "set") or add to (mode "add") `field` at every node or cell within `radius`
        of `center` (Euclidean on grids, geodesic along triangulated surfaces: core/paint.py);
        returns how many changed. On the GPU the change is made on the device. Checked like
        set_field; nothing changes if it is refused."""
        from .paint import paint
        return paint(self, field, center, radius, value, mode)

    def _internal_index(self, field: str, ext: np.ndarray) -> np.ndarray:
        """Positions in the state array of the entries `ext` of the field in the original
        numbering (models that reorder their mesh override this)."""
        return ext

    # ---- checkpoints --------------------------------------------------------------------
    def save(self, path: str | Path, include_fields: bool = False) -> None:
        """Write a checkpoint (.npz, format of core/checkpoint.py): parameters, time, step count,
        the exact state arrays and a SHA-256 of each. With `include_fields` the displayable
        fields (host copies, original numbering; prefix `field/`) and the mesh coordinates
        (prefix `mesh/`) are stored too, so the file is also a data export that `solvers.load`
        reads back. Written atomically: a kill or a full disk leaves the previous file intact
        (an OSError becomes a ParameterError naming the file)."""
        checkpoint.write(self, path, include_fields)

    def _restore_state(self, state: Mapping[str, np.ndarray], t: float, steps: int,
                       aux: dict) -> None:
        """Install a checkpoint's validated state (core/checkpoint.py checked names, shapes,
        dtypes, finiteness and the clock)."""
        for k, a in state.items():
            self._assign_state(k, self.xp.asarray(a))
        self.t = float(t)
        self.steps = int(steps)
        self._set_aux_state(dict(aux))

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.model}/{self.scenario_name} {self.backend} "
                f"{self.dtype} t={self.t:.6g} steps={self.steps}>")

