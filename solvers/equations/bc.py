"""Boundary conditions of model files (docs/EQUATIONS.md): the text of the `boundary` parameter
(or of a species' entry in [boundary]) -> one `Side` per side of the domain.

    periodic                       both sides of every axis (grids)
    neumann | neumann: g           ∂s/∂n = g (outward normal; g an expression of x, y, t)
    dirichlet: g                   s = g
    robin: g                       ∂s/∂n = g where g may also use the species s itself
    natural                        zero flux (the same as neumann)
    left=...; right=...; bottom=...; top=...    per side (sides not named: neumann)

On a mesh only `natural`/`neumann` (zero flux) and `dirichlet: g` (on every boundary vertex,
g an expression of x, y, z, t) apply; `periodic` (a grid's default carried over by
`--set kind=mesh`) counts as natural.
"""
from __future__ import annotations

from dataclasses import dataclass

from .expr import Context, ModelError, parse
from .spec import SIDES

KINDS = ("periodic", "neumann", "natural", "dirichlet", "robin")


@dataclass(frozen=True)
class Side:
    kind: str           # periodic | neumann | dirichlet | robin
    value: tuple        # tree (("num", 0.0) when none)


def _one(text: str, species: str, names: dict, where: str, key: str) -> Side:
    head, _, rest = text.partition(":")
    kind = head.strip().lower()
    if kind not in KINDS:
        raise ModelError(f"boundary '{text[:60]}' of {species}: unknown kind '{kind[:20]}' "
                         "(allowed: " + ", ".join(KINDS) + ")", where, key)
    if kind == "natural":
        kind = "neumann"
    if kind == "periodic":
        if rest.strip():
            raise ModelError(f"boundary '{text[:60]}' of {species}: periodic takes no value",
                             where, key)
        return Side("periodic", ("num", 0.0))
    if not rest.strip():
        if kind in ("dirichlet", "robin"):
            raise ModelError(f"boundary '{text[:60]}' of {species}: {kind} needs a value "
                             f"('{kind}: 0')", where, key)
        return Side(kind, ("num", 0.0))
    allowed = dict(names)
    if kind == "robin":
        allowed[species] = "species"
    ctx = Context(f"the boundary value of {species}", where, key, allowed,
                  listing="names: " + ", ".join(sorted(allowed)))
    return Side(kind, parse(rest.strip(), ctx))


def parse_boundary(text: str, species: str, axes: int, names: dict, where: str = "domain",
                   key: str = "boundary") -> dict:
    """{side: Side} for the 2·axes sides (left, right[, bottom, top]) of a grid, or {"all": Side}
    for a mesh (axes = 0)."""
    if not isinstance(text, str) or len(text) > 4000:
        raise ModelError(f"boundary of {species} must be a text of at most 4000 characters",
                         where, key)
    if axes == 0:
        side = _one(text, species, names, where, key)
        if side.kind == "periodic":  # a grid's default carried to a surface: zero flux
            side = Side("neumann", ("num", 0.0))
        if side.kind not in ("neumann", "dirichlet"):
            raise ModelError(f"boundary '{text[:60]}' of {species}: on a mesh only natural "
                             "(zero flux) or dirichlet: value apply", where, key)
        if side.kind == "neumann" and side.value != ("num", 0.0):
            raise ModelError(f"boundary '{text[:60]}' of {species}: on a mesh the flux "
                             "boundary is natural (zero flux) only", where, key)
        return {"all": side}
    sides = SIDES[:2 * axes]
    if "=" in text:
        out = {}
        for part in text.split(";"):
            if not part.strip():
                continue
            name, eq, value = part.partition("=")
            name = name.strip().lower()
            if not eq or name not in sides:
                raise ModelError(f"boundary '{text[:60]}' of {species}: '{part.strip()[:30]}' "
                                 "is not side=kind (sides: " + ", ".join(sides) + ")", where,
                                 key)
            out[name] = _one(value.strip(), species, names, where, key)
        for s in sides:
            out.setdefault(s, Side("neumann", ("num", 0.0)))
    else:
        one = _one(text, species, names, where, key)
        out = {s: one for s in sides}
    for a in range(axes):
        lo, hi = out[sides[2 * a]], out[sides[2 * a + 1]]
        if (lo.kind == "periodic") != (hi.kind == "periodic"):
            raise ModelError(f"boundary '{text[:60]}' of {species}: periodic needs both sides "
                             f"{sides[2 * a]} and {sides[2 * a + 1]}", where, key)
    return out
