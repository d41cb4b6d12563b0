"""Model files (docs/EQUATIONS.md): TOML text, a path, or the same content as a dict, read into a
validated `Definition`. Sections:

    [model]       name (the model id), title, description, citation, look_for
    [equations]   species = "right-hand side"     (d species/dt; order = the state's order)
    [algebraic]   name = "expression"             (pointwise, may use species and earlier ones)
    [parameters]  name = number | {value, min, max, unit, live, help}
    [initial]     species = "formula in x, y, z, r, parameters, noise, L, Lx, Ly, nx, ny, vertices"
    [domain]      kind, nx, ny, L, Lx, Ly, grid, boundary, mesh, surface, vertices
    [boundary]    species = "neumann" | "dirichlet: value" | {left = ..., right = ...}
    [numerics]    integrator, dt, cfl, seed

Every problem is a `ModelError` naming the section, the key and, in an expression, the column;
`problems()` collects all of them instead of stopping at the first (the editor shows them).
"""
from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .expr import COORDINATES, RESERVED, Context, ModelError, parse

MAX_FILE = 1 << 20
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
MODEL_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,47}$")
SECTIONS = ("model", "equations", "algebraic", "parameters", "initial", "domain", "boundary",
            "numerics")
MODEL_KEYS = ("name", "title", "description", "citation", "look_for")
# the geometry's numbers an initial condition may use (scenarios.geometry_numbers)
INITIAL_GEOMETRY = ("L", "Lx", "Ly", "nx", "ny", "vertices")
DOMAIN_KEYS = ("kind", "nx", "ny", "L", "Lx", "Ly", "grid", "boundary", "mesh", "surface",
               "vertices")
NUMERICS_KEYS = ("integrator", "dt", "cfl", "seed")
PARAM_KEYS = ("value", "min", "max", "unit", "live", "help")
SIDES = ("left", "right", "bottom", "top")
MAX_SPECIES = 16


@dataclass(frozen=True)
class Definition:
    """A validated model file. Trees are those of expr.py; `source` is the plain dict it was
    read from (what a checkpoint stores)."""

    name: str
    info: dict
    species: tuple
    equations: dict
    algebraic: dict
    parameters: dict          # name -> {value, min, max, unit, live, help}
    initial: dict             # species -> tree
    domain: dict              # geometry defaults
    boundary: dict            # species -> boundary text (per species overrides)
    numerics: dict
    source: dict = field(compare=False)

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.source, sort_keys=True).encode()).hexdigest()


def load_source(path_or_dict) -> dict:
    """The model file as a plain dict: a dict as is (deep-copied through JSON), a path to a
    .toml file, or TOML text. A file's relative [domain] mesh path is taken relative to the
    file's folder (made absolute, so the definition opens from any working folder and travels
    in checkpoints)."""
    if isinstance(path_or_dict, dict):
        try:
            return json.loads(json.dumps(path_or_dict))
        except (TypeError, ValueError) as e:
            raise ModelError(f"model definition is not plain data ({e})") from None
    if isinstance(path_or_dict, Path) or (isinstance(path_or_dict, str)
                                          and "\n" not in path_or_dict
                                          and path_or_dict.strip().endswith(".toml")):
        p = Path(path_or_dict)
        try:
            if p.stat().st_size > MAX_FILE:
                raise ModelError(f"model file '{p}' is over {MAX_FILE} bytes")
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ModelError(f"cannot read model file '{p}': {getattr(e, 'strerror', None) or e}"
                             ) from None
        where = f"model file '{p.name}'"
        return _resolve_mesh(_parse(text, where), p.parent)
    if not isinstance(path_or_dict, str):
        raise ModelError("a model definition is a path to a .toml file, TOML text or a dict, "
                         f"not {type(path_or_dict).__name__}")
    return _parse(path_or_dict, "model text")


def _resolve_mesh(data: dict, folder: Path) -> dict:
    dom = data.get("domain")
    if isinstance(dom, dict) and isinstance(dom.get("mesh"), str) and dom["mesh"].strip() \
            and not Path(dom["mesh"]).expanduser().is_absolute():
        dom["mesh"] = str((folder / dom["mesh"]).resolve())
    return data


def _parse(text: str, where: str) -> dict:
    if len(text) > MAX_FILE:
        raise ModelError(f"{where} is over {MAX_FILE} characters")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ModelError(f"{where} is not valid TOML: {e}", "", "", None) from None
    try:  # plain data only (no dates): it travels in checkpoints and sweep specs as JSON
        return json.loads(json.dumps(data))
    except (TypeError, ValueError) as e:
        raise ModelError(f"{where} holds a value that is not a string, number, boolean, array "
                         f"or table ({e})") from None


class _Collector:
    def __init__(self, collect: bool):
        self.collect, self.errors = collect, []

    def add(self, e: ModelError):
        if not self.collect:
            raise e
        self.errors.append(e)

    def guard(self, fn, *args):
        try:
            return fn(*args)
        except ModelError as e:
            self.add(e)
            return None


def _section(src: dict, name: str) -> dict:
    s = src.get(name, {})
    if not isinstance(s, dict):
        raise ModelError(f"[{name}] must be a table, not {type(s).__name__}", name)
    return s


def _check_name(name, section: str, taken: dict) -> None:
    from .model import GEOMETRY_PARAMS, NUMERIC_PARAMS
    if not isinstance(name, str) or not NAME.match(name):
        raise ModelError(f"[{section}] name {name!r:.40} is not allowed (a letter, then letters, "
                         "digits or _; at most 32)", section, str(name)[:40])
    if name in RESERVED or name in GEOMETRY_PARAMS or name in NUMERIC_PARAMS or name == "kernel":
        raise ModelError(f"[{section}] name '{name}' is reserved (functions, operators, t, "
                         "noise, pi and the geometry and numerics parameters)", section, name)
    if name in taken:
        raise ModelError(f"[{section}] name '{name}' is already used in [{taken[name]}]",
                         section, name)
    taken[name] = section


def _param(name: str, v) -> dict:
    if isinstance(v, dict):
        unknown = [k for k in v if k not in PARAM_KEYS]
        if unknown:
            raise ModelError(f"[parameters] {name}: unknown key '{unknown[0]}' (allowed: "
                             + ", ".join(PARAM_KEYS) + ")", "parameters", name)
        out = {"value": v.get("value"), "min": v.get("min"), "max": v.get("max"),
               "unit": v.get("unit", ""), "live": v.get("live", True), "help": v.get("help", "")}
    else:
        out = {"value": v, "min": None, "max": None, "unit": "", "live": True, "help": ""}
    for k in ("value", "min", "max"):
        x = out[k]
        if x is None and k != "value":
            continue
        if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x or abs(x) == float("inf"):
            raise ModelError(f"[parameters] {name}: {k} = {x!r:.40} is not a finite number",
                             "parameters", name)
        out[k] = float(x)
    lo, hi, val = out["min"], out["max"], out["value"]
    if (lo is not None and val < lo) or (hi is not None and val > hi):
        raise ModelError(f"[parameters] {name}: value {val:g} is outside [min, max] = "
                         f"[{lo}, {hi}]", "parameters", name)
    if not isinstance(out["unit"], str) or not isinstance(out["help"], str) \
            or not isinstance(out["live"], bool):
        raise ModelError(f"[parameters] {name}: unit and help are strings, live true or false",
                         "parameters", name)
    return out


def _text(section: str, key: str, v) -> str:
    if not isinstance(v, (str, int, float)) or isinstance(v, bool):
        raise ModelError(f"[{section}] {key} must be a string or a number", section, key)
    return str(v)


def boundary_text(v, section: str, key: str) -> str:
    """A boundary given as text or as a table of sides -> its text form
    ('left=neumann; right=dirichlet: 0')."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        bad = [k for k in v if k not in SIDES]
        if bad:
            raise ModelError(f"[{section}] {key}: unknown side '{bad[0]}' (allowed: "
                             + ", ".join(SIDES) + ")", section, key)
        return "; ".join(f"{k}={_text(section, key, s)}" for k, s in v.items())
    raise ModelError(f"[{section}] {key} must be a string or a table of sides", section, key)


def read(path_or_dict, collect: bool = False):
    """The Definition of a model file; with `collect`, (Definition or None, [ModelError...])."""
    col = _Collector(collect)
    try:
        d = _read(load_source(path_or_dict), col)
    except ModelError as e:
        col.add(e)
        d = None
    if collect:
        return (d if not col.errors else None), col.errors
    return d


def _read(src: dict, col: _Collector) -> Definition:
    unknown = [k for k in src if k not in SECTIONS]
    if unknown:
        raise ModelError(f"unknown section [{str(unknown[0])[:40]}] (allowed: "
                         + ", ".join(f"[{s}]" for s in SECTIONS) + ")", str(unknown[0])[:40])
    model = _section(src, "model")
    for k in model:
        if k not in MODEL_KEYS:
            raise ModelError(f"[model] unknown key '{str(k)[:40]}' (allowed: "
                             + ", ".join(MODEL_KEYS) + ")", "model", str(k)[:40])
    name = model.get("name")
    if not isinstance(name, str) or not MODEL_ID.match(name):
        raise ModelError(f"[model] name = {name!r:.50} is not a model id (lower-case letters, "
                         "digits, '-', '_', '.'; at most 48)", "model", "name")
    info = {k: _text("model", k, model.get(k, "")) for k in MODEL_KEYS[1:]}
    eqs, alg = _section(src, "equations"), _section(src, "algebraic")
    params_src = _section(src, "parameters")
    if not eqs:
        raise ModelError("[equations] is empty: give at least one species, e.g. "
                         "u = \"lap(u)\"", "equations")
    if len(eqs) > MAX_SPECIES:
        raise ModelError(f"[equations] has {len(eqs)} species (allowed: at most {MAX_SPECIES})",
                         "equations")
    taken: dict = {}
    for sec, names in (("equations", eqs), ("algebraic", alg), ("parameters", params_src)):
        for k in names:
            col.guard(_check_name, k, sec, taken)
    species = tuple(eqs)
    parameters = {}
    for k, v in params_src.items():
        p = col.guard(_param, k, v)
        if p is not None:
            parameters[k] = p
    listing = (f"species: {', '.join(species)}"
               + (f"; algebraic: {', '.join(alg)}" if alg else "")
               + f"; parameters: {', '.join(params_src) or 'none'}")
    base = {p: "param" for p in params_src}
    base.update({c: "coord" for c in COORDINATES if c not in taken})
    base.update(t="time", pi="const")
    algebraic = {}
    for k, v in alg.items():
        names = {**base, **{s: "species" for s in species},
                 **{a: "algebraic" for a in algebraic}}
        ctx = Context(f"the algebraic species {k}", "algebraic", k, names, listing=listing)
        tree = col.guard(lambda: parse(_text("algebraic", k, v), ctx))
        if tree is not None:
            algebraic[k] = tree
    eq_names = {**base, **{s: "species" for s in species}, **{a: "algebraic" for a in alg}}
    equations = {}
    for k, v in eqs.items():
        ctx = Context(f"the equation of {k}", "equations", k, eq_names, operators=True,
                      listing=listing)
        tree = col.guard(lambda: parse(_text("equations", k, v), ctx))
        if tree is not None:
            equations[k] = tree
    init_src = _section(src, "initial")
    init_names = {**{p: "param" for p in params_src},
                  **{c: "coord" for c in COORDINATES if c not in taken},
                  **{g: "geometry" for g in INITIAL_GEOMETRY},
                  "noise": "noise", "pi": "const"}
    initial = {}
    for k, v in init_src.items():
        if k not in species:
            col.add(ModelError(f"[initial] '{str(k)[:40]}' is not a species (species: "
                               + ", ".join(species) + ")", "initial", str(k)[:40]))
            continue
        ctx = Context(f"the initial condition of {k}", "initial", k, init_names,
                      listing=f"parameters: {', '.join(params_src) or 'none'}; x, y, z, r, "
                              f"{', '.join(INITIAL_GEOMETRY)}, noise")
        tree = col.guard(lambda: parse(_text("initial", k, v), ctx))
        if tree is not None:
            initial[k] = tree
    for s in species:
        initial.setdefault(s, ("num", 0.0))
    domain = _section(src, "domain")
    for k in domain:
        if k not in DOMAIN_KEYS:
            col.add(ModelError(f"[domain] unknown key '{str(k)[:40]}' (allowed: "
                               + ", ".join(DOMAIN_KEYS) + ")", "domain", str(k)[:40]))
    domain = {k: v for k, v in domain.items() if k in DOMAIN_KEYS}
    if "boundary" in domain:
        domain["boundary"] = col.guard(boundary_text, domain["boundary"], "domain", "boundary")
    bsrc = _section(src, "boundary")
    boundary = {}
    for k, v in bsrc.items():
        if k not in species:
            col.add(ModelError(f"[boundary] '{str(k)[:40]}' is not a species (species: "
                               + ", ".join(species) + ")", "boundary", str(k)[:40]))
            continue
        boundary[k] = col.guard(boundary_text, v, "boundary", k)
    numerics = _section(src, "numerics")
    for k in numerics:
        if k not in NUMERICS_KEYS:
            col.add(ModelError(f"[numerics] unknown key '{str(k)[:40]}' (allowed: "
                               + ", ".join(NUMERICS_KEYS) + ")", "numerics", str(k)[:40]))
    numerics = {k: v for k, v in numerics.items() if k in NUMERICS_KEYS}
    return Definition(name, info, species, equations, algebraic, parameters, initial, domain,
                      boundary, numerics, src)


__all__ = ["Definition", "read", "load_source", "boundary_text", "SIDES"]
