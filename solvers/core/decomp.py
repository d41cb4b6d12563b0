"""Domain decomposition of structured-grid models over ranks (docs/DISTRIBUTED.md).

One simulation runs as N processes (MPI ranks). The grid of ny × nx cells is split along y into N
strips of consecutive rows (`split_rows`: the first ny mod N strips one row longer); each rank
holds its strip of every state array and steps it. The layer does everything a rank needs beyond
the model's own scheme:

- halos: whenever the scheme pads its arrays with ghost cells (walls), `Strip.padder` pads the
  strip with the model's own wall padding, then overwrites the ghost rows at the strip's inner
  edges with the neighbours' rows (one message each way per pad, i.e. per stage). Boundary
  conditions therefore act only at the physical edges, and a padded strip holds exactly the
  rows of the one-process padded array: the update is the same arithmetic on the same numbers;
- the time step: `Strip.min(x)` is the exact minimum over the ranks of the float each computes
  (the minimum commutes, so Δt equals the one-process Δt bit for bit);
- the checks between chunks of steps (finite, bounds) agree on every rank, so a divergence is
  replayed by all ranks together and reported the same everywhere;
- gathering (`gather_fields`, `gathered`: a one-process simulation holding the whole state on
  rank 0, for checkpoints and exports) and scattering a checkpoint over the ranks (`load`).

A grid model opts in by declaring `decomposition = GridSplit(shape, halo, refuse)` and by letting
its scheme pad through `sim.domain.padder(...)` and reduce through `sim.domain.min(...)` (the
single-process `WHOLE` domain does plain padding and no reduction). Its `_setup` may build only
its own rows (`sim.domain.rows`, what matters for grids too large for one process); a state array
it builds whole is cut to the strip here. Nothing here names a model.

The state is split along axis 0 (rows, y); x (axis 1) is never split.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .decomp_comm import Communicator, launched_by_mpi, mpi_world, use_local_gpu, wrap
from .errors import ParameterError, SimulationDiverged

__all__ = ["GridSplit", "Strip", "WHOLE", "split_rows", "create", "load", "launched_by_mpi",
           "mpi_world", "Communicator"]


def split_rows(n: int, parts: int) -> list[tuple[int, int]]:
    """[start, stop) of `parts` strips of n rows: sizes differ by at most one, longer first."""
    q, r = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + q + (1 if i < r else 0)
        out.append((start, stop))
        start = stop
    return out


@dataclass(frozen=True)
class GridSplit:
    """What a grid model declares to run decomposed.

    shape(params) -> (ny, nx)   the global grid (rows are split)
    halo(params)  -> int        ghost rows the stencil reads per pad (order 1: 1, CWENO3: 2)
    refuse(params) -> str|None  why these parameters cannot run decomposed (None: they can)
    findings                    attributes the model's `_judge_checks` sets that hold a flat
                                cell index of a state array (moved to the rank that found it)
    fused(sim) -> scheme|str    on the GPU: the model's fused scheme of a strip (it exchanges
                                its own halos on the device), or why not (a string: the
                                reference scheme runs, on the array path); None: no such scheme
    """

    shape: Callable[[Mapping[str, Any]], tuple[int, int]]
    halo: Callable[[Mapping[str, Any]], int]
    refuse: Callable[[Mapping[str, Any]], str | None] = lambda p: None
    findings: tuple[str, ...] = ()
    fused: Callable[[Any], Any] | None = None
    resize: Callable[[Mapping[str, Any], int, int], dict] | None = None  # params of an ny × nx
    #                                 grid (the decimated copy of `gathered(every=k)`)


class _Whole:
    """The one-process domain: the model's padding as it is, no reduction."""

    rows = slice(None)
    comm = None

    @staticmethod
    def padder(wall_pad):
        return wall_pad

    @staticmethod
    def min(x):
        return x

    @staticmethod
    def max(x):
        return x


WHOLE = _Whole()


class Strip:
    """This rank's strip of rows [r0, r1) of an ny × nx grid, halo rows wide."""

    def __init__(self, comm: Communicator, ny: int, nx: int, halo: int):
        self.comm, self.ny, self.nx, self.halo = comm, ny, nx, halo
        self.bounds = split_rows(ny, comm.size)
        self.r0, self.r1 = self.bounds[comm.rank]
        self.rows = slice(self.r0, self.r1)
        self.lo = comm.rank - 1 if comm.rank > 0 else None
        self.hi = comm.rank + 1 if comm.rank < comm.size - 1 else None

    @property
    def counts(self) -> list[int]:
        return [b - a for a, b in self.bounds]

    def padder(self, wall_pad):
        """wall_pad(*arrays, w, xp) -> padded arrays (walls on every side), made to take the
        neighbours' rows at this strip's inner edges: one exchange per call."""
        def pad(*args):
            *arrays, w, xp = args
            padded = wall_pad(*arrays, w, xp)
            if self.lo is None and self.hi is None:
                return padded
            send_lo = xp.stack([a[w:2 * w] for a in padded])
            send_hi = xp.stack([a[-2 * w:-w] for a in padded])
            got_lo, got_hi = self.comm.exchange(send_lo, send_hi, self.lo, self.hi)
            for i, a in enumerate(padded):
                if got_lo is not None:
                    a[:w] = got_lo[i]
                if got_hi is not None:
                    a[-w:] = got_hi[i]
            return padded
        return pad

    def min(self, x):
        return self.comm.allreduce_min(x)

    def max(self, x):
        """The exact maximum over the ranks of the float each computes (an error estimate's
        max |…|); NaN counts as +inf, so a non-finite value on any rank is one everywhere (MPI's
        MAX does not propagate NaN)."""
        x = float(x)
        return self.comm.allreduce_max(x if x == x else float("inf"))

    def describe(self) -> dict:
        return {"ranks": self.comm.size, "split": "rows (y)", "rows": self.counts,
                "halo": self.halo, "halos": self.comm.name, "halo_s": self.comm.halo_s}


def collectively(comm: Communicator, fn):
    """fn() on every rank; if it raised on any rank, every rank raises the first failure (same
    type where it is one of ours, its message), so no rank is left waiting in a collective."""
    try:
        out, err = fn(), None
    except (ParameterError, SimulationDiverged, MemoryError) as e:
        out, err = None, e
    except Exception as e:  # noqa: BLE001 - re-raised below, on every rank
        out, err = None, e
    errs = comm.allgather(None if err is None else (type(err).__name__, str(err)))
    first = next((e for e in errs if e is not None), None)
    if first is None:
        return out
    if err is not None:
        raise err
    kind, msg = first
    raise (ParameterError if kind == "ParameterError" else
           MemoryError if kind == "MemoryError" else RuntimeError)(msg)


# ---- the distributed simulation -----------------------------------------------------------------
class _Distributed:
    """Mixed in before a grid model class (see `create`): the model's own code on one strip."""

    _ranks = 1

    def __init__(self, *, comm: Communicator, **kw):
        self.comm = comm
        collectively(comm, lambda: super(_Distributed, self).__init__(**kw))

    @classmethod
    def memory_estimate(cls, params):
        from . import memory
        host, dev = super().memory_estimate(params)
        n = cls._ranks
        return (memory.BASE + (host - memory.BASE) // n,
                memory.BASE_DEVICE + (dev - memory.BASE_DEVICE) // n)

    def _setup(self):
        split = self.decomposition
        why = split.refuse(self.params)
        if why:
            raise ParameterError(f"{self.model}: cannot run decomposed with these parameters: "
                                 f"{why}")
        ny, nx = split.shape(self.params)
        halo = split.halo(self.params)
        self.domain = Strip(self.comm, ny, nx, halo)
        if min(self.domain.counts) < halo:
            raise ParameterError(
                f"{self.model}: {self.comm.size} ranks split ny = {ny} rows into strips of "
                f"{min(self.domain.counts)}; this scheme reads {halo} rows across a strip's edge; "
                f"allowed: at most {ny // halo} ranks for ny = {ny}, or a larger ny")
        super()._setup()
        for k, a in self.state.items():  # a model that built the whole grid: cut to the strip
            if a.shape[0] == ny and self.domain.r1 - self.domain.r0 != ny:
                self.state[k] = a[self.domain.rows].copy()

    _why_array = "the model has no fused scheme for strips"

    def _make_scheme(self):
        """On the GPU the model's fused strip scheme where it declares one and it can run these
        parameters (GridSplit.fused), else the reference (xp) scheme: NumPy or the array path."""
        make = self.decomposition.fused
        if self._be.is_gpu and make is not None and self.params.get("kernel") != "array":
            got = make(self)
            if not isinstance(got, str):
                return got
            self._why_array = got
        return self.schemes.entry(self.params).reference(self)

    @property
    def kernel(self) -> str:
        if not self._be.is_gpu:
            return "numpy"
        return "array" if self.scheme is None or isinstance(self.scheme, self.schemes.entry(self.params).reference) \
            else "fused"

    def notes(self):
        d = self.domain
        out = [f"decomposed over {d.comm.size} ranks: strips of {min(d.counts)}–{max(d.counts)} "
               f"rows of {d.nx} cells, halos of {d.halo} row{'s' if d.halo > 1 else ''} "
               f"through {d.comm.name}"]
        if self._be.is_gpu and self.kernel == "array":
            out.append(f"distributed on the GPU: the array path ({self._why_array})")
        return out + list(super().notes())

    # ---- checks agree on every rank --------------------------------------------------------
    def _judge_checks(self, vals):
        bad = super()._judge_checks(vals)
        found = self.comm.allgather(None if bad is None else (bad, {
            k: getattr(self, k, None) for k in ("_violation",) + self.decomposition.findings}))
        first = next(((r, f) for r, f in enumerate(found) if f is not None), None)
        if first is None:
            return None
        r, (name, attrs) = first
        for k, v in attrs.items():
            setattr(self, k, v)
        self._finding_rank = r
        return name

    def _cell_xy(self, i):
        r = getattr(self, "_finding_rank", self.comm.rank)
        return super()._cell_xy(int(i) + self.domain.bounds[r][0] * self.domain.nx)

    # ---- fields: set whole, read per strip or gathered ---------------------------------------
    def field_shape(self, name):
        self.field_info(name)
        return (self.domain.ny, self.domain.nx)

    def _set_field(self, name, arr):
        super()._set_field(name, arr[self.domain.rows])

    def paint(self, *a, **k):
        raise ParameterError(f"{self.model}: painting is not available on a distributed "
                             "simulation; set the whole field with set_field")

    def gather_fields(self, names=None, root: int = 0):
        """{name: whole field} on `root` (host arrays), None on the other ranks. Collective."""
        local = self.device_fields(names)
        out = {k: self.comm.gather_rows(v, root) for k, v in local.items()}
        return out if self.comm.rank == root else None

    def gathered(self, root: int = 0):
        """A one-process NumPy simulation of the same model holding the whole state, t and step
        count, on `root`; None on the other ranks. Collective. For checkpoints and exports."""
        state = {k: self.comm.gather_rows(v, root) for k, v in self.state.items()}

        def build():
            if self.comm.rank != root:
                return None
            sim = self._model_class(backend="numpy", dtype=self.dtype,
                                    scenario=self.scenario_name, **dict(self.params))
            sim._restore_state(state, self.t, self.steps, self._aux_state())
            return sim
        return collectively(self.comm, build)

    def gathered_state(self, root: int = 0):
        """What a checkpoint holds, gathered on `root` without building a whole-grid simulation
        (no set-up of the whole grid: for grids that rank 0 can hold but not set up twice);
        `.save(path)` writes the same checkpoint as `gathered().save(path)`. None elsewhere.
        Collective."""
        state = {k: self.comm.gather_rows(v, root) for k, v in self.state.items()}
        if self.comm.rank != root:
            return None
        return _GatheredState(self, state)

    def decimated(self, every: int, root: int = 0):
        """Like `gathered`, but of every `every`-th row and column (a copy of ceil(ny/every) ×
        ceil(nx/every) cells, for pictures of grids too large to gather whole; the model's
        GridSplit.resize gives its parameters). Collective."""
        split, d = self.decomposition, self.domain
        if every <= 1:
            return self.gathered(root)
        if split.resize is None:
            raise ParameterError(f"{self.model}: no decimated copy (its GridSplit has no resize)")
        first = (-d.r0) % every  # this strip's first row on the decimated grid
        state = {k: self.comm.gather_rows(self.xp.ascontiguousarray(v[first::every, ::every]),
                                          root)
                 for k, v in self.state.items()}
        ny, nx = -(-d.ny // every), -(-d.nx // every)

        def build():
            if self.comm.rank != root:
                return None
            params = {**dict(self.params), **split.resize(self.params, ny, nx)}
            sim = self._model_class(backend="numpy", dtype=self.dtype,
                                    scenario=self.scenario_name, **params)
            sim._restore_state(state, self.t, self.steps, self._aux_state())
            return sim
        return collectively(self.comm, build)

    def on_gathered(self, fn):
        """fn(the gathered one-process simulation) computed on rank 0 and returned on every rank:
        a sum over the grid in the one-process order, bit for bit. Collective."""
        g = self.gathered()
        return self.comm.bcast(collectively(self.comm, lambda: fn(g) if g is not None else None))

    def quantities(self):
        return self.on_gathered(lambda g: g.quantities())

    def save(self, path, include_fields: bool = False) -> None:
        """The whole state in one checkpoint, written by rank 0 (loads on any number of ranks,
        one included). Collective."""
        g = self.gathered() if include_fields else self.gathered_state()
        collectively(self.comm, lambda: g.save(path, include_fields) if g is not None else None)


class _GatheredState:
    """A decomposed simulation's whole state on rank 0, as core/checkpoint.py writes it."""

    backend = "numpy"

    def __init__(self, sim, state):
        from .backend import resolve
        self.model, self.scenario_name, self.dtype = sim.model, sim.scenario_name, sim.dtype
        self.params, self.t, self.steps, self.state = sim.params, sim.t, sim.steps, state
        self._aux = sim._aux_state()
        self._be = resolve("numpy")
        src = getattr(sim, "definition_source", None)
        if src is not None:
            self.definition_source = src

    def _aux_state(self):
        return self._aux

    def save(self, path, include_fields: bool = False) -> None:
        from . import checkpoint
        if include_fields:
            raise ValueError("a gathered state holds no fields: use gathered()")
        checkpoint.write(self, path)


_classes: dict = {}


def decomposable(cls) -> GridSplit:
    split = getattr(cls, "decomposition", None)
    if not isinstance(split, GridSplit):
        from .registry import available_models, model_class
        ok = [m for m in available_models()
              if isinstance(getattr(model_class(m), "decomposition", None), GridSplit)]
        raise ParameterError(f"model '{cls.model}' cannot run decomposed (distributed); models "
                             f"that can: {', '.join(ok) or 'none'}")
    return split


def distributed_class(cls, ranks: int):
    decomposable(cls)
    key = (cls, ranks)
    if key not in _classes:
        _classes[key] = type(f"Distributed{cls.__name__}", (_Distributed, cls),
                             {"_ranks": ranks, "_model_class": cls})
    return _classes[key]


def create(cls, comm, *, backend: str = "auto", dtype: str = "float64",
           scenario: str | None = None, **params):
    """A simulation of model class `cls` decomposed over the ranks of `comm` (an mpi4py
    communicator or a Communicator); every rank of comm calls this. On the GPU each rank takes
    the GPU of its local rank first."""
    cls_d = distributed_class(cls, _size(comm))
    gpu = backend != "numpy" and _device_count() > 0
    if gpu and not isinstance(comm, Communicator):
        use_local_gpu(comm)  # before anything touches a device (it would take GPU 0)
    c = wrap(comm, gpu)
    return cls_d(comm=c, backend=backend, dtype=dtype, scenario=scenario, **params)


def load(path, comm, backend: str = "auto", model: str | None = None):
    """A checkpoint (written by any number of ranks) continued decomposed over comm: rank 0
    reads and checks it, every rank builds its strip, rank 0 sends each its rows."""
    from . import checkpoint
    c = wrap(comm, False) if not isinstance(comm, Communicator) else comm
    whole = collectively(c, lambda: checkpoint.load(path, backend="numpy", model=model)
                         if c.rank == 0 else None)
    head = c.bcast(None if whole is None else (whole.model, whole.scenario_name, whole.dtype,
                                               dict(whole.params), whole.t, whole.steps,
                                               whole._aux_state()))
    model_id, scenario, dtype, params, t, steps, aux = head
    from .registry import model_class
    sim = create(model_class(model_id), comm, backend=backend, dtype=dtype, scenario=scenario,
                 **params)
    counts = sim.domain.counts
    state = {k: c.scatter_rows(None if whole is None else whole.state[k], counts)
             for k in sim.state}
    sim._restore_state(state, t, steps, aux)
    return sim


def _size(comm) -> int:
    return comm.size if isinstance(comm, Communicator) else comm.Get_size()


def _device_count() -> int:
    """GPUs visible (no CUDA context made: that would land on GPU 0 in every rank)."""
    import os
    if os.environ.get("PDESTUDIO_NO_GPU"):
        return 0
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device
        return 0
