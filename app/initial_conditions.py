"""Initial conditions from files and formulas (SPEC §0 `--init FIELD=SOURCE`, §5 "Load").

SOURCE is one of
- a `.npy` file, or a `.npz` file holding an array named like the field (or a single array);
- a grayscale image (PNG, JPEG, ...) used as a height map: values 0..1 (black..white), resampled
  to the field's points; append `@lo,hi` to map black..white to lo..hi (e.g. `bump.png@1,3`);
- `formula:EXPR`, an expression in the coordinates x, y, z, r = sqrt(x²+y²) (and t) built from
  numbers, + - * / ** %, comparisons, `a if c else b`, and numpy-style functions (sin, exp, where,
  ...). It is parsed into a syntax tree and evaluated node by node over a whitelist: never with
  Python's eval or exec, so attribute access, subscripts, lambdas, comprehensions and names
  outside the whitelist are refused.

Every failure raises `solvers.ParameterError` naming the source and what is allowed; the
simulation is not touched until `apply()` has a validated array.
"""
from __future__ import annotations

import ast
import operator
from pathlib import Path

import numpy as np

from pdestudio.solvers import ParameterError

FUNCTIONS = {
    name: getattr(np, name) for name in (
        "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
        "exp", "log", "log10", "log2", "sqrt", "abs", "minimum", "maximum", "where", "clip",
        "floor", "ceil", "sign", "hypot", "heaviside", "round")
}
FUNCTIONS.update(min=np.minimum, max=np.maximum, step=lambda a: np.heaviside(a, 1.0),
                 gauss=lambda a: np.exp(-a * a))
CONSTANTS = {"pi": np.pi, "e": np.e}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow, ast.Mod: operator.mod,
           ast.FloorDiv: operator.floordiv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: np.logical_not}
_COMPARE = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
            ast.GtE: np.greater_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}
MAX_FORMULA = 2000
MAX_DEPTH = 60
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".pgm", ".webp")


def evaluate_formula(expr: str, variables: dict[str, np.ndarray]) -> np.ndarray:
    """Evaluate `expr` over the whitelisted grammar. Raises ParameterError on anything else."""
    if not isinstance(expr, str) or not expr.strip():
        raise ParameterError("formula is empty; allowed: an expression in " + _allowed(variables))
    if len(expr) > MAX_FORMULA:
        raise ParameterError(f"formula is {len(expr)} characters long; allowed: at most {MAX_FORMULA}")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        raise ParameterError(f"formula '{expr}' is not a valid expression ({e.msg})") from None
    env = {**CONSTANTS, **variables}

    def ev(node, depth=0):
        if depth > MAX_DEPTH:
            raise ParameterError(f"formula '{expr}' is nested too deeply")
        d = depth + 1
        if isinstance(node, ast.Expression):
            return ev(node.body, d)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return np.float64(node.value)  # floats: 10**10**10 overflows to inf, never hangs
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            raise ParameterError(f"formula '{expr}': unknown name '{node.id}'; allowed: "
                                 + _allowed(variables))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left, d), ev(node.right, d))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](ev(node.operand, d))
        if isinstance(node, ast.Compare) and all(type(o) in _COMPARE for o in node.ops):
            left, result = ev(node.left, d), True
            for op, comp in zip(node.ops, node.comparators):
                right = ev(comp, d)
                result = np.logical_and(result, _COMPARE[type(op)](left, right))
                left = right
            return result.astype(np.float64)
        if isinstance(node, ast.BoolOp):
            vals = [ev(v, d) for v in node.values]
            f = np.logical_and if isinstance(node.op, ast.And) else np.logical_or
            out = vals[0]
            for v in vals[1:]:
                out = f(out, v)
            return np.asarray(out, dtype=np.float64)
        if isinstance(node, ast.IfExp):
            return np.where(ev(node.test, d), ev(node.body, d), ev(node.orelse, d))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in FUNCTIONS and not node.keywords:
            return FUNCTIONS[node.func.id](*[ev(a, d) for a in node.args])
        what = type(node).__name__
        if isinstance(node, ast.Call):
            what = "call of " + (node.func.id if isinstance(node.func, ast.Name) else "an expression")
        raise ParameterError(f"formula '{expr}': {what} is not allowed; allowed: numbers, "
                             f"+ - * / ** %, comparisons, 'a if c else b', functions "
                             f"{', '.join(sorted(FUNCTIONS))} of {_allowed(variables)}")

    with np.errstate(all="ignore"):
        try:
            out = ev(tree)
        except ParameterError:
            raise
        except (TypeError, ValueError, ArithmeticError) as e:
            raise ParameterError(f"formula '{expr}' cannot be evaluated: {e}") from None
    return np.asarray(out, dtype=np.float64)


def _allowed(variables) -> str:
    return "variables " + ", ".join(sorted(variables)) + " and constants pi, e"


def coordinates(sim, field: str) -> dict[str, np.ndarray]:
    """The coordinates at the points where `field` lives, shaped like the field."""
    mesh = sim.mesh
    loc = sim.field_info(field)["location"]
    if getattr(mesh, "kind", "") == "triangles" or hasattr(mesh, "cells"):
        pts = np.asarray(mesh.points, dtype=np.float64)
        if loc == "cell":
            pts = pts[np.asarray(mesh.cells)].mean(axis=1)
        x, y = pts[:, 0], pts[:, 1]
        z = pts[:, 2] if pts.shape[1] > 2 else np.zeros_like(x)
    elif hasattr(mesh, "y"):
        x, y = np.meshgrid(np.asarray(mesh.x, float), np.asarray(mesh.y, float))
        z = np.zeros_like(x)
    else:
        x = np.asarray(mesh.x, dtype=np.float64)
        y = np.zeros_like(x)
        z = np.zeros_like(x)
    return {"x": x, "y": y, "z": z, "r": np.hypot(x, y), "t": np.full_like(x, sim.t)}


def _image_values(path: Path, coords: dict, value_range) -> np.ndarray:
    import imageio.v3 as iio
    from scipy.ndimage import map_coordinates
    try:
        img = np.asarray(iio.imread(path), dtype=np.float64)
    except Exception as e:
        raise ParameterError(f"image '{path}' cannot be read: {e}") from None
    if img.ndim == 3:  # RGB(A) -> luminance
        if img.shape[2] == 4:
            img = img[..., :3]
        img = img[..., :3] @ np.array([0.299, 0.587, 0.114]) if img.shape[2] >= 3 else img[..., 0]
    if img.ndim != 2 or min(img.shape) < 2:
        raise ParameterError(f"image '{path}' has shape {img.shape}; allowed: a 2D image of at "
                             "least 2×2 pixels")
    top = 65535.0 if img.max() > 255 else 255.0
    img = img / top
    x, y = coords["x"], coords["y"]
    span = lambda a: (a.max() - a.min()) or 1.0  # noqa: E731
    u = (x - x.min()) / span(x) * (img.shape[1] - 1)
    v = (y.max() - y) / span(y) * (img.shape[0] - 1)  # the image's top row at the largest y
    vals = map_coordinates(img, [v.ravel(), u.ravel()], order=1, mode="nearest").reshape(x.shape)
    lo, hi = value_range
    return lo + (hi - lo) * vals


def _parse_range(text: str):
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise ParameterError(f"image value range '@{text}' is malformed; allowed: @lo,hi "
                             "with two numbers") from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ParameterError(f"image value range '@{text}' is not finite")
    return lo, hi


def load_values(sim, field: str, source: str) -> np.ndarray:
    """Values for `field` of `sim` from SOURCE (see the module doc), shaped like the field."""
    sim.field_info(field)  # unknown field -> ParameterError
    shape = sim.field_shape(field)
    if source.startswith("formula:"):
        coords = coordinates(sim, field)
        vals = evaluate_formula(source[len("formula:"):], coords)
        return np.broadcast_to(vals, coords["x"].shape).reshape(shape).copy()
    spec, _, rng = source.partition("@")
    path = Path(spec)
    if not path.is_file():
        raise ParameterError(f"initial condition '{spec}' is not a file; allowed: a .npy/.npz "
                             "file, a grayscale image, or formula:EXPR")
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return _image_values(path, coordinates(sim, field), _parse_range(rng) if rng else (0.0, 1.0)
                             ).reshape(shape)
    try:
        if suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                if field in z.files:
                    arr = z[field]
                elif len(z.files) == 1:
                    arr = z[z.files[0]]
                else:
                    raise ParameterError(f"'{path}' holds arrays {', '.join(z.files)}; allowed: "
                                         f"one named '{field}' or a single array")
        else:
            raise ParameterError(f"initial condition '{path}' has an unknown type '{suffix}'; "
                                 "allowed: .npy, .npz, " + ", ".join(IMAGE_SUFFIXES))
    except ParameterError:
        raise
    except Exception as e:
        raise ParameterError(f"'{path}' cannot be read as a NumPy array: {e}") from None
    arr = np.asarray(arr)
    if arr.shape != shape:
        raise ParameterError(f"'{path}' holds an array of shape {arr.shape}; allowed: {shape} "
                             f"(field '{field}')")
    return arr


def apply(sim, spec: str) -> None:
    """Apply 'FIELD=SOURCE' to `sim` (validated before anything changes)."""
    field, eq, source = spec.partition("=")
    if not eq or not field.strip() or not source.strip():
        raise ParameterError(f"--init '{spec}' is malformed; allowed: FIELD=SOURCE")
    sim.set_field(field.strip(), load_values(sim, field.strip(), source.strip()))
