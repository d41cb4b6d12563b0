"""`pdestudio models` (alias `list`) and `pdestudio describe MODEL`: what can be run, and each
model's parameters, scenarios and fields, as readable tables on stdout or, with `--json`, as one
JSON document (the schema `solvers.describe` returns)."""
from __future__ import annotations

import json
import shutil
import sys
import textwrap

from pdestudio import solvers


def _dump(obj) -> None:
    json.dump(obj, sys.stdout, indent=1, allow_nan=False, default=str)
    sys.stdout.write("\n")


def summary(model: str) -> dict:
    d = solvers.describe(model)
    return {"model": d["model"], "title": d["title"], "description": d["description"],
            "scenarios": [s["name"] for s in d["scenarios"]],
            "fields": [f["name"] for f in d["fields"]], "default_field": d["default_field"],
            "size_param": d["size_param"],
            "parameters": [p["name"] for p in d["parameters"]]}


def cmd_models(a) -> int:
    rows = [summary(m) for m in solvers.available_models()]
    if a.json:
        _dump(rows)
        return 0
    print(table(["model", "title", "scenarios (first: default)", "fields", "size"],
                [[r["model"], r["title"], ", ".join(r["scenarios"]), ", ".join(r["fields"]),
                  r["size_param"]] for r in rows], wrap=(1, 2, 3)))
    print("\n`pdestudio describe MODEL` lists a model's parameters; "
          "`pdestudio run MODEL --steps N` runs it.")
    return 0


def _value(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def cmd_describe(a) -> int:
    d = solvers.describe(a.model)
    if a.json:
        _dump(d)
        return 0
    out = [f"{d['model']}: {d['title']}", *textwrap.wrap(d["description"], _width()), ""]
    out.append("Parameters (--set NAME=VALUE; live: can change while running in the window):")
    out.append(table(["name", "type", "default", "allowed", "unit", "live", "help"],
                     [[p["name"], p["type"] + (" or none" if p["nullable"] else ""),
                       _value(p["default"]), p["allowed"], p["unit"] or "-",
                       "yes" if p["live"] else "no", p["help"]] for p in d["parameters"]],
                     wrap=(3, 6)))
    out += ["", "Scenarios (--scenario NAME; the first is the default):"]
    out.append(table(["scenario", "sets", "help"],
                     [[s["name"], ", ".join(f"{k}={_value(v)}" for k, v in s["defaults"].items())
                       or "-", s["help"]] for s in d["scenarios"]], wrap=(1, 2)))
    out += ["", f"Fields (--field NAME for pictures; default {d['default_field']}):"]
    out.append(table(["field", "location", "unit", "settable", "help"],
                     [[f["name"], f["location"], f["unit"] or "-",
                       "yes" if f["settable"] else "derived", f["help"]] for f in d["fields"]],
                     wrap=(4,)))
    out += ["", f"Problem size: --set {d['size_param']}=N (pdestudio bench varies it)."]
    print("\n".join(out))
    return 0


def _width() -> int:
    return max(60, min(160, shutil.get_terminal_size((120, 24)).columns))


def table(header: list[str], rows: list[list[str]], wrap=()) -> str:
    """A plain-text table that fits the terminal: the columns in `wrap` are wrapped (the last
    of them takes what is left), the others keep their full width."""
    cols = len(header)
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(header[k])] + [len(r[k]) for r in cells]) for k in range(cols)]
    width = _width()
    fixed = sum(w for k, w in enumerate(widths) if k not in wrap) + 3 * (cols - 1)
    room = max(12 * len(wrap), width - fixed) if wrap else 0
    # share the room between the wrapped columns, none wider than it needs
    left, share = room, {}
    for k in sorted(wrap, key=lambda k: widths[k]):
        n = len([j for j in wrap if j not in share])
        share[k] = min(widths[k], max(12, left // n))
        left -= share[k]
    widths = [share.get(k, w) for k, w in enumerate(widths)]
    lines = [" | ".join(h.ljust(widths[k]) for k, h in enumerate(header)).rstrip(),
             "-+-".join("-" * w for w in widths)]
    for r in cells:
        parts = [textwrap.wrap(c, widths[k]) or [""] if k in wrap else [c]
                 for k, c in enumerate(r)]
        for i in range(max(len(p) for p in parts)):
            lines.append(" | ".join((p[i] if i < len(p) else "").ljust(widths[k])
                                    for k, p in enumerate(parts)).rstrip())
    return "\n".join(lines)
