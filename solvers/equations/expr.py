"""The expression language of model files (docs/EQUATIONS.md): text -> a small immutable tree.

The text (with `^` read as `**`) is parsed by Python's `ast` module and walked over a whitelist;
nothing of it is ever evaluated by Python (no eval, no exec, no attribute access, no calls other
than the functions below). The tree is made of tuples, hashable, so the generated kernels are
cached by it:

    ("num", value)                  a number (float)
    ("var", name)                   a species, algebraic species, parameter, x y z r t, noise, pi
    ("neg", a)  ("add"|"sub"|"mul"|"div"|"pow", a, b)
    ("cmp", op, a, b)               op in < <= > >= == != ; 1.0 or 0.0
    ("and"|"or", a, b)  ("not", a)  1.0 or 0.0 (nonzero is true)
    ("fn", name, (args...))         FUNCTIONS
    ("lap", s)                      the Laplacian (Laplace-Beltrami on surfaces) of species s
    ("divgrad", K, s)               div(K grad s), K any operator-free expression

Every refusal is a `ModelError` (a ParameterError) naming where the expression is ("the
equation of u"), what is wrong and the 1-based column in the user's text.
"""
from __future__ import annotations

import ast

from ..core.errors import ParameterError

MAX_TEXT = 2000   # characters in one expression
MAX_DEPTH = 60    # nesting of the tree
FUNCTIONS = {"exp": 1, "log": 1, "sqrt": 1, "sin": 1, "cos": 1, "tan": 1, "tanh": 1,
             "sinh": 1, "cosh": 1, "abs": 1, "sign": 1, "heaviside": 1, "min": 2, "max": 2,
             "where": 3}
OPERATORS = ("lap", "div", "grad")
COORDINATES = ("x", "y", "z", "r")
RESERVED = tuple(FUNCTIONS) + OPERATORS + ("t", "noise", "pi")
_BIN = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class ModelError(ParameterError):
    """A refused model file: the message, and where (section, key, 1-based column or None)."""

    def __init__(self, message: str, section: str = "", key: str = "", column: int | None = None):
        super().__init__(message)
        self.section, self.key, self.column = section, key, column

    def as_dict(self) -> dict:
        return {"message": str(self), "section": self.section, "key": self.key,
                "column": self.column}


class Context:
    """What an expression may use: `names` maps each allowed name to its kind ('species',
    'algebraic', 'param', 'coord', 'time', 'noise', 'const'); `operators` allows lap and
    div(K*grad(s)) on the names of `operand_kinds`. `where` is how messages name the expression
    ("the equation of u"), `section`/`key` where it sits in the file."""

    def __init__(self, where: str, section: str, key: str, names: dict, operators: bool = False,
                 listing: str = ""):
        self.where, self.section, self.key = where, section, key
        self.names, self.operators, self.listing = names, operators, listing

    def error(self, what: str, col: int | None) -> ModelError:
        at = f" at column {col}" if col is not None else ""
        tail = f" ({self.listing})" if self.listing else ""
        return ModelError(f"{what} in {self.where}{at}{tail}", self.section, self.key, col)


def _column_map(text: str) -> list[int]:
    """For each character position of text.replace('^', '**') its 1-based column in `text`."""
    out = []
    for i, ch in enumerate(text):
        out.extend([i + 1, i + 1] if ch == "^" else [i + 1])
    out.append(len(text) + 1)
    return out


def parse(text, ctx: Context):
    """The tree of `text` in context `ctx` (module docstring), or ModelError."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ctx.error(f"the value {type(text).__name__} is not an expression (a string or a "
                        "number)", None)
    if not isinstance(text, str):
        text = repr(float(text))
    if len(text) > MAX_TEXT:
        raise ctx.error(f"the expression is {len(text)} characters long (allowed: at most "
                        f"{MAX_TEXT})", None)
    if not text.strip():
        raise ctx.error("the expression is empty", None)
    flat = text.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    py = flat.replace("^", "**")
    cols = _column_map(flat)
    lead = len(py) - len(py.lstrip())

    def col_of(char_offset: int | None) -> int | None:
        if char_offset is None:
            return None
        return cols[min(max(char_offset, 0), len(cols) - 1)]

    def col(node) -> int | None:
        off = getattr(node, "col_offset", None)
        if off is None:
            return None
        # ast counts UTF-8 bytes; the user counts characters
        prefix = py.lstrip().encode("utf-8")[:off].decode("utf-8", errors="ignore")
        return col_of(lead + len(prefix))

    try:
        tree = ast.parse(py.strip(), mode="eval")
    except SyntaxError as e:
        c = None if e.offset is None else col_of(lead + e.offset - 1)
        raise ctx.error(f"syntax error ({e.msg})", c) from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise ctx.error(f"the expression cannot be read ({type(e).__name__})", None) from None
    return _Walker(ctx, col).walk(tree.body, 0)


class _Walker:
    def __init__(self, ctx: Context, col):
        self.ctx, self.col = ctx, col

    def fail(self, what, node):
        return self.ctx.error(what, self.col(node))

    def walk(self, node, depth: int, in_div: bool = False):
        if depth > MAX_DEPTH:
            raise self.fail(f"the expression is nested too deeply (allowed: at most {MAX_DEPTH} "
                            "levels)", node)
        d = depth + 1
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise self.fail(f"the constant {_short(repr(v))} is not allowed (only numbers)",
                                node)
            return ("num", float(v))
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return (_BIN[type(node.op)], self.walk(node.left, d), self.walk(node.right, d))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
            a = self.walk(node.operand, d)
            if isinstance(node.op, ast.UAdd):
                return a
            if isinstance(node.op, ast.Not):
                return ("not", a)
            return ("num", -a[1]) if a[0] == "num" else ("neg", a)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1 or type(node.ops[0]) not in _CMP:
                raise self.fail("a chained or unknown comparison is not allowed (write "
                                "'a < b and b < c')", node)
            return ("cmp", _CMP[type(node.ops[0])], self.walk(node.left, d),
                    self.walk(node.comparators[0], d))
        if isinstance(node, ast.BoolOp):
            kind = "and" if isinstance(node.op, ast.And) else "or"
            out = self.walk(node.values[0], d)
            for v in node.values[1:]:
                out = (kind, out, self.walk(v, d))
            return out
        if isinstance(node, ast.IfExp):
            return ("fn", "where", (self.walk(node.test, d), self.walk(node.body, d),
                                    self.walk(node.orelse, d)))
        if isinstance(node, ast.Call):
            return self.call(node, d)
        raise self.fail(f"{_what(node)} is not allowed (allowed: numbers, names, + - * / ^ **, "
                        "comparisons, and, or, not, 'a if c else b' and the functions "
                        + ", ".join(FUNCTIONS) + ")", node)

    def name(self, node):
        kind = self.ctx.names.get(node.id)
        if kind is None:
            if node.id in OPERATORS:
                raise self.fail(f"the operator '{node.id}' must be called, as {node.id}(...)",
                                node)
            if node.id in FUNCTIONS:
                raise self.fail(f"the function '{node.id}' must be called", node)
            raise self.fail(f"unknown name '{_short(node.id)}'", node)
        return ("var", node.id)

    def call(self, node, d):
        f = node.func
        if not isinstance(f, ast.Name):
            raise self.fail(f"{_what(f)} cannot be called (only the functions "
                            + ", ".join(FUNCTIONS) + " and lap, div)", node)
        name = f.id
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fail(f"{_short(name)}() takes positional arguments only", node)
        if name in OPERATORS:
            return self.operator(node, name, d)
        if name not in FUNCTIONS:
            raise self.fail(f"unknown function '{_short(name)}' (allowed: "
                            + ", ".join(FUNCTIONS) + ")", node)
        if len(node.args) != FUNCTIONS[name]:
            n = FUNCTIONS[name]
            raise self.fail(f"{name}() takes {n} argument{'s' if n > 1 else ''}, not "
                            f"{len(node.args)}", node)
        return ("fn", name, tuple(self.walk(a, d) for a in node.args))

    def operand(self, node, op: str) -> str:
        """The species an operator applies to (a plain name of a species or algebraic
        species)."""
        ok = ("species", "algebraic")
        if not isinstance(node, ast.Name) or self.ctx.names.get(node.id) not in ok:
            raise self.fail(f"{op}() applies to a species or an algebraic species by name, not "
                            f"{_short(ast.unparse(node))}", node)
        return node.id

    def operator(self, node, name: str, d):
        if not self.ctx.operators:
            raise self.fail(f"the operator {name}() is not allowed here (only in [equations])",
                            node)
        if len(node.args) != 1:
            raise self.fail(f"{name}() takes 1 argument, not {len(node.args)}", node)
        arg = node.args[0]
        if name == "lap":
            return ("lap", self.operand(arg, "lap"))
        if name == "grad":
            raise self.fail("grad() is allowed only inside div(K*grad(s))", node)
        k, s = self.split_grad(arg, d)
        return ("divgrad", k if k is not None else ("num", 1.0), s)

    def split_grad(self, node, d):
        """div's argument K*grad(s) (or grad(s)*K, K*grad(s)/M, grad(s)) -> (K, s)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "grad":
            if len(node.args) != 1 or node.keywords:
                raise self.fail("grad() takes 1 argument", node)
            return None, self.operand(node.args[0], "grad")
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            left_g, right_g = _has_grad(node.left), _has_grad(node.right)
            if left_g and not right_g:
                k, s = self.split_grad(node.left, d + 1)
                other = self.walk(node.right, d + 1)
                op = "mul" if isinstance(node.op, ast.Mult) else "div"
                return ((op, k, other) if k is not None else
                        (other if op == "mul" else ("div", ("num", 1.0), other))), s
            if right_g and not left_g and isinstance(node.op, ast.Mult):
                k, s = self.split_grad(node.right, d + 1)
                other = self.walk(node.left, d + 1)
                return (("mul", other, k) if k is not None else other), s
        raise self.fail("div() takes K*grad(s): a product of an expression K (no lap, div or "
                        "grad) and grad of one species", node)


def _has_grad(node) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "grad"
               for n in ast.walk(node))


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _what(node) -> str:
    names = {ast.Attribute: "attribute access", ast.Subscript: "indexing", ast.Lambda: "lambda",
             ast.ListComp: "a comprehension", ast.GeneratorExp: "a comprehension",
             ast.SetComp: "a comprehension", ast.DictComp: "a comprehension",
             ast.List: "a list", ast.Tuple: "a tuple", ast.Dict: "a dict", ast.Set: "a set",
             ast.NamedExpr: "assignment", ast.JoinedStr: "a string", ast.Starred: "unpacking",
             ast.Await: "await", ast.Yield: "yield", ast.YieldFrom: "yield",
             ast.Slice: "a slice"}
    if isinstance(node, ast.BinOp):
        return f"the operator {type(node.op).__name__}"
    return names.get(type(node), type(node).__name__)


# ---- tree utilities ------------------------------------------------------------------------
def walk(tree):
    """Every node of `tree`, depth first."""
    yield tree
    kind = tree[0]
    if kind in ("num", "var", "lap"):
        return
    if kind == "fn":
        for a in tree[2]:
            yield from walk(a)
    elif kind == "cmp":
        yield from walk(tree[2])
        yield from walk(tree[3])
    elif kind == "divgrad":
        yield from walk(tree[1])
    else:
        for a in tree[1:]:
            yield from walk(a)


def names_in(tree) -> set[str]:
    """Every name read by `tree`, operands of lap/div included."""
    out = set()
    for n in walk(tree):
        if n[0] == "var":
            out.add(n[1])
        elif n[0] == "lap":
            out.add(n[1])
        elif n[0] == "divgrad":
            out.add(n[2])
    return out


def has_operators(tree) -> bool:
    return any(n[0] in ("lap", "divgrad") for n in walk(tree))


def additive_terms(tree, sign: float = 1.0):
    """`tree` as a list of (sign, term) with tree = Σ sign·term over its top-level + and −."""
    if tree[0] == "add":
        return additive_terms(tree[1], sign) + additive_terms(tree[2], sign)
    if tree[0] == "sub":
        return additive_terms(tree[1], sign) + additive_terms(tree[2], -sign)
    if tree[0] == "neg":
        return additive_terms(tree[1], -sign)
    return [(sign, tree)]


def factors(tree):
    """A product a*b*c as its list of factors (division kept whole)."""
    if tree[0] == "mul":
        return factors(tree[1]) + factors(tree[2])
    return [tree]


def product(fs):
    if not fs:
        return ("num", 1.0)
    out = fs[0]
    for f in fs[1:]:
        out = ("mul", out, f)
    return out


__all__ = ["ModelError", "Context", "parse", "walk", "names_in", "has_operators",
           "additive_terms", "factors", "product", "FUNCTIONS", "COORDINATES", "RESERVED",
           "MAX_TEXT", "MAX_DEPTH"]
