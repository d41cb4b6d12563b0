"""The sweep's spec: the fixed parameters, the varied axes (`--vary NAME=START:STOP:COUNT` or
`NAME=V1,V2,...`) and their product grid, each member validated before anything runs."""
from __future__ import annotations

import itertools
import json
from decimal import Decimal
from pathlib import Path

from pdestudio import solvers
from pdestudio.solvers import ParameterError

VERSION = 1


def parse_vary(model: str, text: str, scenario: str | None = None) -> tuple[str, list]:
    """One --vary item as (name, values), each value checked against the parameter's schema."""
    name, eq, rhs = text.partition("=")
    name, rhs = name.strip(), rhs.strip()
    if not eq or not name or not rhs:
        raise ParameterError(f"--vary '{text}' is malformed; allowed: NAME=START:STOP:COUNT or "
                             "NAME=V1,V2,...")
    params = {p["name"]: p for p in solvers.describe(model)["parameters"]}
    if name not in params:
        raise ParameterError(f"--vary: {model}: unknown parameter '{name}'; known parameters: "
                             + ", ".join(params))
    p = params[name]
    if ":" in rhs:
        parts = rhs.split(":")
        try:
            start, stop, count = Decimal(parts[0]), Decimal(parts[1]), int(parts[2])
            if len(parts) != 3 or not (start.is_finite() and stop.is_finite()):
                raise ValueError
        except (ValueError, IndexError, ArithmeticError):
            raise ParameterError(f"--vary '{text}': allowed: NAME=START:STOP:COUNT with numbers "
                                 "START, STOP and an integer COUNT >= 1") from None
        if p["type"] not in ("int", "float"):
            raise ParameterError(f"--vary '{text}': '{name}' is a {p['type']} parameter; "
                                 "give its values as NAME=V1,V2,...")
        if count < 1 or count > 100_000:
            raise ParameterError(f"--vary '{text}': COUNT = {count}; allowed: 1..100000")
        # in decimal, so 0.02:0.06:3 gives 0.04, not linspace's 0.039999999999999994
        raw = [float(start + (stop - start) * i / (count - 1)) for i in range(count)] \
            if count > 1 else [float(start)]
        if p["type"] == "int":
            raw = list(dict.fromkeys(int(round(v)) for v in raw))
        else:
            raw = [float(v) for v in raw]
    else:
        raw = [v.strip() for v in rhs.split(",") if v.strip()]
    values = [solvers.check_param(model, name, v, scenario) for v in raw]
    if len(set(map(repr, values))) != len(values):
        raise ParameterError(f"--vary '{text}': values repeat; give each value once")
    return name, values


def make_spec(model, scenario, fixed, vary, backend, dtype, until, steps) -> dict:
    names = [n for n, _ in vary]
    if len(set(names)) != len(names):
        raise ParameterError("--vary: a parameter is varied twice; each --vary names another one")
    clash = sorted(set(names) & set(fixed))
    if clash:
        raise ParameterError(f"--vary {clash[0]} and --set {clash[0]} both given; a varied "
                             "parameter takes its values from --vary only")
    if (until is None) == (steps is None):
        raise ParameterError("sweep: give exactly one of --until T and --steps N")
    scenario = scenario or solvers.describe(model)["scenarios"][0]["name"]
    return {"version": VERSION, "model": model, "scenario": scenario, "fixed": dict(fixed),
            "vary": [[n, list(v)] for n, v in vary], "backend": backend, "dtype": dtype,
            "until": until, "steps": steps}


def members(spec: dict) -> list[dict]:
    """The product grid: member i's varied values (the first axis varies slowest)."""
    names = [n for n, _ in spec["vary"]]
    return [dict(zip(names, combo)) for combo in itertools.product(*(v for _, v in spec["vary"]))]


def validate_members(spec: dict) -> None:
    """Every member's parameters as create() would check them: the first bad one is named."""
    for i, m in enumerate(members(spec)):
        try:
            solvers.validate(spec["model"], spec["scenario"], **spec["fixed"], **m)
        except ParameterError as e:
            raise ParameterError(f"sweep member {i} ({label(m)}): {e}") from None


def label(m: dict) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in m.items())


def canonical(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, default=str)


def check_folder(out: Path, spec: dict) -> None:
    """Write DIR/sweep.json, or check that DIR holds the same sweep (a rerun)."""
    from pdestudio.solvers import atomic_write
    f = out / "sweep.json"
    if f.exists():
        try:
            old = json.loads(f.read_text())
        except (OSError, ValueError) as e:
            raise ParameterError(f"{f}: not a sweep spec ({e}); choose another --out") from None
        if canonical(old) != canonical(spec):
            diff = sorted(k for k in set(old) | set(spec) if old.get(k) != spec.get(k))
            raise ParameterError(f"--out {out} holds another sweep (it differs in "
                                 f"{', '.join(diff)}); choose another folder or rerun the "
                                 "same command")
        return
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(f) as fh:
        fh.write(json.dumps(spec, indent=1, default=str).encode())
