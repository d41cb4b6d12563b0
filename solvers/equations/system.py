"""A model's right-hand sides split into operator terms and the reaction (docs/EQUATIONS.md).

Each equation is a sum of terms; a term holding an operator must be a product c·lap(s) or
c·div(K grad s) (possibly divided by an operator-free expression), with c and K free of
operators. The reaction is the sum of the other terms. The split drives the stable step (the
diffusion bound from max |c·K|), the mesh's positive flux (a species' own diffusion D·lap(s)
paired with a transport term −div(χ s grad v)) and IMEX (constant-coefficient lap terms implicit).
"""
from __future__ import annotations

from dataclasses import dataclass

from .expr import ModelError, additive_terms, has_operators, names_in, product


@dataclass(frozen=True)
class OpTerm:
    kind: str            # "lap" | "divgrad"
    coef: tuple          # operator-free tree (the sign folded in)
    K: tuple | None      # divgrad: the operator-free diffusivity tree
    operand: str         # the species (or algebraic species) differentiated


@dataclass(frozen=True)
class Split:
    terms: tuple          # OpTerm...
    reaction: tuple       # tree


def _split_term(tree, where: str):
    """(operator node, coefficient tree) of a product holding one operator."""
    if tree[0] in ("lap", "divgrad"):
        return tree, ("num", 1.0)
    if tree[0] == "mul":
        a, b = tree[1], tree[2]
        if has_operators(a) and not has_operators(b):
            op, c = _split_term(a, where)
            return op, _mul(c, b)
        if has_operators(b) and not has_operators(a):
            op, c = _split_term(b, where)
            return op, _mul(a, c)
    if tree[0] == "div" and has_operators(tree[1]) and not has_operators(tree[2]):
        op, c = _split_term(tree[1], where)
        return op, ("div", c, tree[2])
    if tree[0] == "neg":
        op, c = _split_term(tree[1], where)
        return op, ("neg", c)
    raise ModelError(f"in {where}: lap() and div() must appear as terms c*lap(s) or "
                     "c*div(K*grad(s)) of the sum (not inside functions, powers or "
                     "denominators, and one operator per term)")


def _mul(a, b):
    if a == ("num", 1.0):
        return b
    if b == ("num", 1.0):
        return a
    return ("mul", a, b)


def split(tree, where: str) -> Split:
    terms, rest = [], []
    for sign, term in additive_terms(tree):
        if not has_operators(term):
            rest.append(term if sign > 0 else ("neg", term))
            continue
        op, c = _split_term(term, where)
        if sign < 0:
            c = ("num", -c[1]) if c[0] == "num" else ("neg", c)
        if op[0] == "lap":
            terms.append(OpTerm("lap", c, None, op[1]))
        else:
            terms.append(OpTerm("divgrad", c, op[1], op[2]))
    reaction = ("num", 0.0)
    for r in rest:
        reaction = r if reaction == ("num", 0.0) else ("add", reaction, r)
    return Split(tuple(terms), reaction)


def constant(tree, species_like: set) -> bool:
    """True when `tree` depends on neither the state nor space (parameters, numbers and t)."""
    return not (names_in(tree) & (species_like | {"x", "y", "z", "r"}))


@dataclass(frozen=True)
class Transport:
    """A positive (Scharfetter–Gummel) edge flux of species s on a mesh: D lap(s) (D ≥ 0 may be
    absent, ("num", 0.0)) plus −div(α s grad v), with D and α constant trees."""

    D: tuple
    alpha: tuple
    v: str


def transport(species: str, sp: Split, species_like: set):
    """The positive-flux pairing of `species`' equation, or None (module docstring), and the
    terms left over for the central treatment."""
    diff = [t for t in sp.terms if t.kind == "lap" and t.operand == species
            and constant(t.coef, species_like)]
    moves = []
    for t in sp.terms:
        if t.kind != "divgrad" or t.operand == species or t.operand not in species_like:
            continue
        fs = _factors(t.K)
        if fs.count(("var", species)) != 1:
            continue
        rest = [f for f in fs if f != ("var", species)]
        c = _mul(t.coef, product(rest))
        if constant(c, species_like):
            moves.append((t, c))
    if len(moves) != 1 or len(diff) > 1:
        return None, sp.terms
    t, c = moves[0]
    D = diff[0].coef if diff else ("num", 0.0)
    left = tuple(x for x in sp.terms if x is not t and (not diff or x is not diff[0]))
    return Transport(D, ("neg", c), t.operand), left


def _factors(tree):
    if tree[0] == "mul":
        return _factors(tree[1]) + _factors(tree[2])
    return [tree]
