"""The scheme protocol: what advances a simulation's state.

A model (`Simulation` subclass) holds parameters, scenarios, the mesh and the state; a *scheme*
holds the discretisation and advances that state. Every family has a `reference` scheme written
once with `xp` array code (the float64 reference, the CPU backend and the GPU "array" path) and,
where it has CUDA kernels, a `fused` scheme. `Simulation` picks the fused scheme on the GPU unless
the `kernel` parameter says "array" (that parameter exists only where a family has both).

    scheme = SchemeClass(sim)          built after sim._setup(): reads sim.params, sim.state,
                                       sim.mesh, sim.xp, sim.dtype (and may keep references)
    dt = scheme.step(t, dt_limit)      ONE accepted step from time t of at most dt_limit
                                       (None: no limit); updates sim.state in place or by
                                       rebinding its entries; returns the step taken (> 0);
                                       never changes sim.t or sim.steps
    k, t = scheme.run(count, t, t_end) optional, batched: up to `count` accepted steps from t
                                       without passing t_end (None: no end), keeping time with
                                       core.clock (or kernels/clock.cuh on the device) exactly as
                                       step-by-step stepping would; returns (steps taken, new t).
                                       Deterministic: the divergence replay re-runs a chunk.
    scheme.invalidate()                the state or a live parameter changed outside stepping:
                                       drop what was derived from them (cached Δt, graphs, ...)

Every model declares its schemes in one table, `schemes = SchemeTable(key, {name: SchemeEntry(
reference, fused, options)})`: `key` is the parameter whose value picks the entry (None: one
entry), `reference` the xp class, `fused` the CUDA class (None: none), `options` the parameter sets
that choose variants inside the same classes (e.g. the order of accuracy); the generic test that
every fused scheme equals its float64 reference walks the registry's tables
(`SchemeTable.cases()`), so a new model or scheme is covered without editing the test.

`Simulation.scheme` is public for tests and benchmarks: replacing it between steps with another
scheme of the same family (a kernel variant, or a wrapper injecting a fault) is supported; a
scheme without `run` is stepped one step at a time by the base class.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Protocol, runtime_checkable


@runtime_checkable
class Scheme(Protocol):
    def step(self, t: float, dt_limit: float | None) -> float: ...

    def invalidate(self) -> None: ...


class SchemeBase:
    """Convenience base: keeps the simulation and has nothing to invalidate."""

    def __init__(self, sim: Any):
        self.sim = sim

    def step(self, t: float, dt_limit: float | None) -> float:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.step")

    def invalidate(self) -> None:
        pass


@dataclass(frozen=True)
class SchemeEntry:
    """One scheme of a model: its xp class (the float64 reference, the CPU backend and the GPU
    array path), its CUDA class (None: the array path alone on the GPU) and the parameter sets
    that pick variants inside these classes (each is checked against the reference)."""

    reference: Any
    fused: Any = None
    options: tuple[Mapping[str, Any], ...] = ({},)


class SchemeTable:
    """name -> SchemeEntry, picked by the value of the parameter `key` (None: a single entry)."""

    def __init__(self, key: str | None, entries: Mapping[str, SchemeEntry]):
        if not entries:
            raise TypeError("a scheme table needs at least one entry")
        if key is None and len(entries) != 1:
            raise TypeError("a scheme table without a key has exactly one entry")
        self.key, self.entries = key, dict(entries)

    @property
    def has_fused(self) -> bool:
        return any(e.fused is not None for e in self.entries.values())

    def name(self, params: Mapping[str, Any]) -> str:
        return next(iter(self.entries)) if self.key is None else params[self.key]

    def entry(self, params: Mapping[str, Any]) -> SchemeEntry:
        return self.entries[self.name(params)]

    def cases(self) -> Iterator[tuple[str, dict]]:
        """(name, parameters) for every entry and option set: what selects each variant."""
        for name, e in self.entries.items():
            for opt in e.options:
                params = {} if self.key is None else {self.key: name}
                label = name + "".join(f",{k}={v}" for k, v in opt.items())
                yield label, {**params, **opt}

    def __repr__(self) -> str:
        return f"SchemeTable({self.key!r}, {list(self.entries)})"


__all__ = ["Scheme", "SchemeBase", "SchemeEntry", "SchemeTable"]
