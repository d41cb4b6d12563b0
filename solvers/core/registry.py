"""Model registry. Each family package registers its classes with `@register`; `discover()` imports
every family package under `pdestudio.solvers` (all but core and mesh), so a new family needs no edit here."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .errors import ParameterError

_MODELS: dict[str, type] = {}
# The order of docs/MODELS.md §0's table; models not listed come after, alphabetically.
_ORDER = ["heat-1d", "ks-1d", "euler-1d", "mean-curvature", "willmore", "chemotaxis",
          "gray-scott", "shallow-water", "two-layer"]
_discovered = False
_FAMILIES_PACKAGE = __name__.rsplit(".", 2)[0]  # pdestudio.solvers


def register(cls):
    if not cls.model:
        raise TypeError(f"{cls.__name__} has no model id")
    if cls.model in _MODELS and _MODELS[cls.model] is not cls:
        raise TypeError(f"model id '{cls.model}' registered twice")
    _MODELS[cls.model] = cls
    return cls


def discover() -> None:
    global _discovered
    if _discovered:
        return
    root = Path(__file__).resolve().parent.parent
    for info in pkgutil.iter_modules([str(root)]):
        if info.ispkg and info.name not in ("core", "mesh"):
            importlib.import_module(f"{_FAMILIES_PACKAGE}.{info.name}")
    _discovered = True


def available_models() -> list[str]:
    discover()
    rank = {m: i for i, m in enumerate(_ORDER)}
    return sorted(_MODELS, key=lambda m: (rank.get(m, len(_ORDER)), m))


def model_class(model: str) -> type:
    discover()
    if not isinstance(model, str) or model not in _MODELS:
        raise ParameterError(f"unknown model '{model}'; available models: "
                             + ", ".join(available_models()))
    return _MODELS[model]
