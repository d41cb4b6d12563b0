"""Parameter schema shared by all models, and its validation.

A model declares each parameter once (name, type, default, range or choices, unit, help); the same
declaration validates `create(**params)`, documents `describe()` and builds the GUI's panels.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from .errors import ParameterError

MAX_TEXT = 80  # the longest value shown in a message


def short_repr(value, limit: int = MAX_TEXT) -> str:
    """repr(value) on one line and at most `limit` characters (a message never carries a whole
    file or a megabyte of text)."""
    try:
        text = repr(value)
    except Exception:  # a hostile __repr__
        text = f"<{type(value).__name__}>"
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def short_path(path, limit: int = 160) -> str:
    """A file path as messages show it: on one line, at most `limit` characters, its end (the
    file's name) kept."""
    text = str(path).replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[:limit // 3] + "..." + text[-(limit * 2 // 3):]


def _number(value, integer: bool):
    """`value` as an int (integer) or float, or None when it is not one: bools, containers,
    arrays, complex numbers, text that is not a number and integers too large for a float are
    refused; integral floats and numeric strings ('12', '1e3') are accepted."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        if isinstance(value, str):
            text = value.strip()
            if len(text) > 400:
                return None
            if integer:
                try:
                    return int(text, 10)
                except ValueError:
                    pass
            value = float(text)
        elif isinstance(value, (int, np.integer)):
            if integer:
                return int(value)
            value = float(value)
        elif isinstance(value, (float, np.floating)):
            value = float(value)
        elif isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
            return _number(value.item(), integer)
        else:
            return None
    except (TypeError, ValueError, OverflowError):
        return None
    if integer:
        if not math.isfinite(value):
            return value  # reported as "not finite"
        if value != int(value):
            return None
        return int(value)
    return value



@dataclass(frozen=True)
class Param:
    """One parameter: `type` is 'int', 'float', 'str' or 'bool'.

    Numbers have a range [lo, hi] (None = unbounded; `lo_open`/`hi_open` make an end exclusive);
    strings have `choices`. `live` says whether a change can be applied to a running simulation
    (otherwise it takes effect on reset). `nullable` parameters may be None (e.g. an optional `dt`).
    """

    name: str
    type: str
    default: Any
    help: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple = ()
    live: bool = False
    nullable: bool = False

    def with_default(self, default) -> "Param":
        return replace(self, default=default)

    def range_text(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.type == "bool":
            return "true or false"
        if self.type == "str":
            return "a string"
        num = (lambda v: str(int(v))) if self.type == "int" else (lambda v: f"{v:g}")
        lo = "-inf" if self.lo is None else num(self.lo)
        hi = "inf" if self.hi is None else num(self.hi)
        left = "(" if (self.lo_open or self.lo is None) else "["
        right = ")" if (self.hi_open or self.hi is None) else "]"
        kind = "an integer" if self.type == "int" else "a finite number"
        return f"{kind} in {left}{lo}, {hi}{right}"

    def validate(self, value, owner: str = ""):
        """Return `value` converted to this parameter's type, or raise ParameterError (one line,
        naming the parameter, the value (shortened) and the allowed range)."""
        where = f"{owner}: " if owner else ""
        bad = lambda why: ParameterError(  # noqa: E731
            f"{where}parameter '{self.name}' = {short_repr(value)} {why}; allowed: "
            f"{self.range_text()}" + (f" ({self.unit})" if self.unit else ""))
        if value is None:
            if self.nullable:
                return None
            raise bad("is missing")
        if self.type == "bool":
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
                return value.lower() in ("true", "1", "yes")
            if isinstance(value, (int, float, np.integer, np.floating)) and value in (0, 1):
                return bool(value)
            raise bad("is not a boolean")
        if self.type == "str":
            if isinstance(value, os.PathLike):
                value = os.fspath(value)
            if not isinstance(value, str):
                raise bad("is not a string")
            if "\x00" in value:
                raise bad("contains a NUL character")
            if self.choices and value not in self.choices:
                raise bad("is not a valid choice")
            return value
        # numbers (strings from the command line are parsed here too)
        v = _number(value, self.type == "int")
        if v is None:
            raise bad("is not " + ("an integer" if self.type == "int" else "a number"))
        if not isinstance(v, int) and not math.isfinite(v):
            raise bad("is not finite")
        if self.choices and v not in self.choices:
            raise bad("is not a valid choice")
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            raise bad("is out of range")
        if self.hi is not None and (v > self.hi or (self.hi_open and v == self.hi)):
            raise bad("is out of range")
        return v

    def describe(self) -> dict:
        d = {"name": self.name, "type": self.type, "default": self.default, "unit": self.unit,
             "help": self.help, "live": self.live, "nullable": self.nullable}
        if self.choices:
            d["choices"] = list(self.choices)
        if self.type in ("int", "float"):
            d["range"] = [self.lo, self.hi]
            d["open"] = [self.lo_open, self.hi_open]
        d["allowed"] = self.range_text()
        return d


@dataclass(frozen=True)
class Scenario:
    """A named test problem: a one-line description and defaults that override the model's."""

    name: str
    help: str
    defaults: Mapping[str, Any] = field(default_factory=dict)


# Parameters that several models share (docs/MODELS.md §0, "Parameter names shared by models").
KERNEL = Param("kernel", "str", "fused", "GPU path: fused RawKernels from .cu files, or CuPy array "
               "code (the naive GPU baseline). Ignored on the NumPy backend.",
               choices=("fused", "array"))
SEED = Param("seed", "int", 0, "Seed of the random perturbation (runs are reproducible).",
             lo=0, hi=2**32 - 1)
CFL = Param("cfl", "float", 0.9, "CFL number δ of the time step.", lo=0, hi=1, lo_open=True,
            live=True)


def validate_all(schema: Mapping[str, Param], values: Mapping[str, Any], owner: str) -> dict:
    """Validate every value against its declaration; unknown names raise ParameterError."""
    unknown = [k for k in values if k not in schema]
    if unknown:
        raise ParameterError(
            f"{owner}: unknown parameter '{unknown[0]}'; known parameters: {', '.join(schema)}")
    out = {}
    for name, p in schema.items():
        out[name] = p.validate(values.get(name, p.default), owner)
    return out


def frozen(d: dict) -> Mapping[str, Any]:
    return MappingProxyType(dict(d))


__all__ = ["short_repr", "short_path", "Param", "Scenario", "KERNEL", "SEED", "CFL", "validate_all", "frozen"]


def ensemble_members(cls, members, scenario, common: dict, shared: str) -> list:
    """The validated, frozen parameters of each member of an ensemble of the model `cls`: a list
    of dicts whose keys lie in `cls.ensemble_params` (what members may vary; `shared` names what
    they share, for the message), each merged over `common`."""
    members = list(members)
    if not members:
        raise ParameterError(f"{cls.model}: an ensemble needs at least one member")
    allowed = cls.ensemble_params
    for i, m in enumerate(members):
        if not isinstance(m, dict):
            raise ParameterError(f"{cls.model}: ensemble member {i} must be a dict of "
                                 f"parameters, not {type(m).__name__}")
        for k in m:
            if k not in allowed:
                raise ParameterError(
                    f"{cls.model}: parameter '{k}' cannot differ between ensemble members "
                    f"(they share {shared}); per-member parameters: " + ", ".join(allowed))
    name = cls.scenario(scenario).name
    out = []
    for m in members:
        p = validate_all(cls.schema(name), {**common, **m}, cls.model)
        cls._check_params(p)
        out.append(frozen(p))
    return out
