"""What the model editor needs besides `define`: every problem of a model file at once
(`check_model`) and the right-hand sides typeset (`model_latex`, LaTeX for matplotlib's
mathtext: no environments, no packages)."""
from __future__ import annotations

from .expr import ModelError
from .spec import read

GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
         "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "chi", "psi", "omega",
         "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega"}
_PREC = {"add": 1, "sub": 1, "mul": 2, "div": 2, "neg": 3, "pow": 4}
_CMP = {"<": "<", "<=": r"\leq", ">": ">", ">=": r"\geq", "==": "=", "!=": r"\neq"}
_FN = {"exp": r"\exp", "log": r"\ln", "sin": r"\sin", "cos": r"\cos", "tan": r"\tan",
       "tanh": r"\tanh", "sinh": r"\sinh", "cosh": r"\cosh", "min": r"\min", "max": r"\max",
       "sign": r"\mathrm{sign}", "heaviside": "H", "where": r"\mathrm{where}"}


def check_model(path_or_dict) -> list[dict]:
    """Every problem of a model file as {message, section, key, column} (column 1-based or
    None); [] when it defines a model. Never raises for bad content."""
    d, errors = read(path_or_dict, collect=True)
    if d is not None and not errors:
        from .model import _make_class
        from .system import split
        for s in d.species:
            try:
                split(d.equations[s], f"the equation of {s}")
            except ModelError as e:
                errors.append(ModelError(str(e), "equations", s))
        try:
            _make_class(d)
        except ModelError as e:
            errors.append(e)
    return [e.as_dict() for e in errors]


def model_latex(path_or_dict) -> dict[str, str]:
    """{species or algebraic species: LaTeX of its right-hand side} (raises ModelError)."""
    d = read(path_or_dict)
    known = set(d.species) | set(d.algebraic)
    out = {s: latex(t, known) for s, t in d.equations.items()}
    out.update({a: latex(t, known) for a, t in d.algebraic.items()})
    return out


def name_latex(name: str, known=()) -> str:
    if name in GREEK:
        return "\\" + name
    if "_" in name:
        head, _, tail = name.partition("_")
        return f"{name_latex(head, known)}_{{{name_latex(tail, known)}}}"
    if len(name) > 1 and (name[1:] in known or name[1:].isdigit() or name[1:] in GREEK):
        return f"{name[0]}_{{{name_latex(name[1:], known)}}}"
    return name if len(name) == 1 else rf"\mathrm{{{name}}}"


def latex(t, known=(), parent: int = 0) -> str:
    k = t[0]
    if k == "num":
        v = t[1]
        s = f"{v:g}" if v != int(v) or abs(v) >= 1e15 else str(int(v))
        if "e" in s:
            m, e = s.split("e")
            s = rf"{m} \times 10^{{{int(e)}}}"
        return s
    if k == "var":
        return name_latex(t[1], known)
    if k == "lap":
        return rf"\nabla^2 {name_latex(t[1], known)}"
    if k == "divgrad":
        K = latex(t[1], known, 2)
        K = "" if K == "1" else K + r"\,"
        return rf"\nabla\cdot\left({K}\nabla {name_latex(t[2], known)}\right)"
    if k in _PREC:
        p = _PREC[k]
        if k == "neg":
            s = "-" + latex(t[1], known, p)
        elif k == "add":
            s = latex(t[1], known, 1) + " + " + latex(t[2], known, 1)
        elif k == "sub":
            s = latex(t[1], known, 1) + " - " + latex(t[2], known, 2)
        elif k == "mul":
            a, b = latex(t[1], known, 2), latex(t[2], known, 2)
            sep = r" \cdot " if b[:1].isdigit() else r"\,"
            s = a + sep + b
        elif k == "div":
            return rf"\frac{{{latex(t[1], known)}}}{{{latex(t[2], known)}}}"
        else:
            base = latex(t[1], known, 5)
            return f"{{{base}}}^{{{latex(t[2], known)}}}"
        return rf"\left({s}\right)" if p < parent or (k == "neg" and parent >= 2) else s
    if k == "cmp":
        return f"{latex(t[2], known, 1)} {_CMP[t[1]]} {latex(t[3], known, 1)}"
    if k in ("and", "or"):
        op = r"\wedge" if k == "and" else r"\vee"
        return rf"\left({latex(t[1], known)} {op} {latex(t[2], known)}\right)"
    if k == "not":
        return rf"\neg {latex(t[1], known, 5)}"
    name, args = t[1], t[2]
    inner = ", ".join(latex(a, known) for a in args)
    if name == "sqrt":
        return rf"\sqrt{{{inner}}}"
    if name == "abs":
        return rf"\left|{inner}\right|"
    return rf"{_FN[name]}\left({inner}\right)"
