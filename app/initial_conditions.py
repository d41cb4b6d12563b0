"""Initial conditions from files and formulas (docs/MODELS.md §0 `--init FIELD=SOURCE`, §5 "Load").

SOURCE is one of
- a `.npy` file, or a `.npz` file holding an array named like the field (or a single array);
- a grayscale image (PNG, JPEG, ...) used as a height map: values 0..1 (black..white), resampled
  to the field's points; append `@lo,hi` to map black..white to lo..hi (e.g. `bump.png@1,3`);
- `formula:EXPR`, an expression in the coordinates x, y, z, r = sqrt(x²+y²) (and t) built from
  numbers, + - * / ** %, comparisons, `a if c else b`, and numpy-style functions (sin, exp, where,
  ...). It is parsed into a syntax tree and evaluated node by node over a whitelist: never with
  Python's eval or exec, so attribute access, subscripts, lambdas, comprehensions and names
  outside the whitelist are refused. Each function takes a fixed number of positional arguments
  (no keywords, no `out`: `exp(x, x)` is refused), and the variables are read-only copies, so
  nothing a formula does can reach the simulation's or the mesh's arrays.

Files are checked before they are decoded: regular files only; a .npy/.npz array's header
(shape, dtype) and size before its data; an image's pixel count from its header (at most
MAX_PIXELS, and MAX_PIXELS_PER_POINT per point of the field above 2^25), decoded by Pillow
with its decompression-bomb guard. Every failure raises `solvers.ParameterError` (one line)
naming the source and what is allowed; the simulation is not touched until `apply()` has a
validated array (`set_field` checks it once more).
"""
from __future__ import annotations

import ast
import math
import operator
import os
import stat
import warnings
import zipfile
from pathlib import Path

import numpy as np

from pdestudio.solvers import ParameterError


def _step(a):
    return np.heaviside(a, 1.0)


def _gauss(a):
    return np.exp(-a * a)


# name -> (function, the numbers of positional arguments it takes)
FUNCTIONS = {name: (getattr(np, name), (1,)) for name in (
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "exp", "log",
    "log10", "log2", "sqrt", "abs", "floor", "ceil", "sign", "round")}
FUNCTIONS.update({name: (getattr(np, name), (2,)) for name in (
    "arctan2", "minimum", "maximum", "hypot", "heaviside")})
FUNCTIONS.update(where=(np.where, (3,)), clip=(np.clip, (3,)), min=(np.minimum, (2,)),
                 max=(np.maximum, (2,)), step=(_step, (1,)), gauss=(_gauss, (1,)))
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
MAX_PIXELS = 10**8               # never more, whatever the field
MAX_PIXELS_PER_POINT = 64        # above 2^25 pixels: at most this many per point of the field
MAX_NPY_HEADER = 1 << 16


def _arity_text(name: str) -> str:
    n = FUNCTIONS[name][1]
    return " or ".join(str(k) for k in n) + (" argument" if n == (1,) else " arguments")


def evaluate_formula(expr: str, variables: dict[str, np.ndarray]) -> np.ndarray:
    """Evaluate `expr` over the whitelisted grammar on read-only copies of `variables`. Raises
    ParameterError (one line) on anything else."""
    if not isinstance(expr, str) or not expr.strip():
        raise ParameterError("formula is empty; allowed: an expression in " + _allowed(variables))
    if len(expr) > MAX_FORMULA:
        raise ParameterError(f"formula is {len(expr)} characters long; allowed: at most {MAX_FORMULA}")
    shown = expr if len(expr) <= 80 and "\n" not in expr else expr[:77].replace("\n", " ") + "..."
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        why = getattr(e, "msg", None) or type(e).__name__
        raise ParameterError(f"formula '{shown}' is not a valid expression ({why})") from None
    env = {**CONSTANTS}
    for k, v in variables.items():
        c = np.array(v, dtype=np.float64)  # a copy, read-only: nothing can write through it
        c.flags.writeable = False
        env[k] = c

    def ev(node, depth=0):
        if depth > MAX_DEPTH:
            raise ParameterError(f"formula '{shown}' is nested too deeply; allowed: at most "
                                 f"{MAX_DEPTH} levels")
        d = depth + 1
        if isinstance(node, ast.Expression):
            return ev(node.body, d)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return np.float64(node.value)  # floats: 10**10**10 overflows to inf, never hangs
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            raise ParameterError(f"formula '{shown}': unknown name '{node.id[:40]}'; allowed: "
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
            return np.asarray(result, dtype=np.float64)
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
                and node.func.id in FUNCTIONS:
            name = node.func.id
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise ParameterError(f"formula '{shown}': {name}() takes positional arguments "
                                     f"only ({_arity_text(name)}); no keywords, no *args")
            if len(node.args) not in FUNCTIONS[name][1]:
                raise ParameterError(f"formula '{shown}': {name}() takes {_arity_text(name)}, "
                                     f"not {len(node.args)}")
            return FUNCTIONS[name][0](*[ev(a, d) for a in node.args])
        what = type(node).__name__
        if isinstance(node, ast.Call):
            what = "call of " + (node.func.id[:40] if isinstance(node.func, ast.Name)
                                 else "an expression")
        raise ParameterError(f"formula '{shown}': {what} is not allowed; allowed: numbers, "
                             f"+ - * / ** %, comparisons, 'a if c else b', functions "
                             f"{', '.join(sorted(FUNCTIONS))} of {_allowed(variables)}")

    with np.errstate(all="ignore"):
        try:
            out = ev(tree)
        except ParameterError:
            raise
        except (TypeError, ValueError, ArithmeticError, IndexError) as e:
            why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
            raise ParameterError(f"formula '{shown}' cannot be evaluated: {why}") from None
    return np.asarray(out, dtype=np.float64)


def _allowed(variables) -> str:
    return "variables " + ", ".join(sorted(variables)) + " and constants pi, e"


def coordinates(sim, field: str) -> dict[str, np.ndarray]:
    """The coordinates at the points where `field` lives, shaped like the field (copies)."""
    mesh = sim.mesh
    loc = sim.field_info(field)["location"]
    if getattr(mesh, "kind", "") == "triangles" or hasattr(mesh, "cells"):
        pts = np.array(mesh.points, dtype=np.float64)
        if loc == "cell":
            pts = pts[np.asarray(mesh.cells)].mean(axis=1)
        x, y = pts[:, 0].copy(), pts[:, 1].copy()
        z = pts[:, 2].copy() if pts.shape[1] > 2 else np.zeros_like(x)
    elif hasattr(mesh, "y"):
        x, y = np.meshgrid(np.array(mesh.x, float), np.array(mesh.y, float))
        z = np.zeros_like(x)
    else:
        x = np.array(mesh.x, dtype=np.float64)
        y = np.zeros_like(x)
        z = np.zeros_like(x)
    return {"x": x, "y": y, "z": z, "r": np.hypot(x, y), "t": np.full_like(x, sim.t)}


# ---- files ---------------------------------------------------------------------------------
def _regular_file(spec: str) -> Path:
    path = Path(spec)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        raise ParameterError(f"initial condition '{spec}' is not a file; allowed: a .npy/.npz "
                             "file, a grayscale image, or formula:EXPR") from None
    if not stat.S_ISREG(st.st_mode):
        raise ParameterError(f"initial condition '{spec}' is not a regular file (a directory, "
                             "device or FIFO); allowed: a .npy/.npz file or an image")
    return path


def _image_values(path: Path, coords: dict, value_range) -> np.ndarray:
    from PIL import Image  # noqa: PLC0415 - only for images
    from scipy.ndimage import map_coordinates  # noqa: PLC0415
    points = coords["x"].size
    limit = min(MAX_PIXELS, max(2**25, MAX_PIXELS_PER_POINT * points))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the limit is ours
            with Image.open(path) as im:  # reads the header only
                w, h = im.size
                if w * h > limit:
                    raise ParameterError(
                        f"image '{path}' has {w}×{h} = {w * h:,} pixels; allowed: at most "
                        f"{limit:,} for a field of {points:,} points (scale it down)")
                img = _gray(im)
    except ParameterError:
        raise
    except Image.DecompressionBombError:
        raise ParameterError(f"image '{path}' has more than {2 * Image.MAX_IMAGE_PIXELS:,} pixels "
                             f"(Pillow's decompression-bomb limit); allowed: at most {limit:,} "
                             f"for a field of {points:,} points (scale it down)") from None
    except Exception as e:  # UnidentifiedImageError, truncated data, ...
        why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise ParameterError(f"image '{path}' cannot be read: {why}") from None
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


def _gray(im) -> np.ndarray:
    """The first frame as float64 gray values (0..255, or 0..65535 for 16-bit images)."""
    if im.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        return np.asarray(im, dtype=np.float64)
    rgb = np.asarray(im.convert("RGB"), dtype=np.float32)
    return (rgb @ np.array([0.299, 0.587, 0.114], dtype=np.float32)).astype(np.float64)


def _parse_range(text: str):
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise ParameterError(f"image value range '@{text[:40]}' is malformed; allowed: @lo,hi "
                             "with two numbers") from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ParameterError(f"image value range '@{text[:40]}' is not finite")
    return lo, hi


def _array_header(fp, where: str):
    """(shape, fortran_order, dtype) of the .npy stream `fp`, its data not read."""
    try:
        version = np.lib.format.read_magic(fp)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        return read(fp, max_header_size=MAX_NPY_HEADER)
    except Exception as e:
        why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise ParameterError(f"{where} is not a NumPy array file ({why})") from None


def _check_header(shape, dtype, want: tuple, where: str, field: str) -> tuple:
    if dtype.hasobject or dtype.kind not in "biuf" or dtype.itemsize > 16:
        raise ParameterError(f"{where} holds an array of dtype {dtype}; allowed: real numbers "
                             f"(bool, int, float) of shape {want} (field '{field}')")
    if shape != want and not (len(want) == 1 and shape in ((want[0], 1), (1, want[0]))):
        raise ParameterError(f"{where} holds an array of shape {shape}; allowed: {want} "
                             f"(field '{field}')")
    return shape


def _npy(path: Path, want: tuple, field: str) -> np.ndarray:
    where = f"'{path}'"
    with open(path, "rb") as f:
        shape, _, dtype = _array_header(f, where)
        _check_header(shape, dtype, want, where, field)
        if os.fstat(f.fileno()).st_size - f.tell() < math.prod(shape) * dtype.itemsize:
            raise ParameterError(f"{where} is truncated: its header declares {shape} {dtype}")
        f.seek(0)
        return np.lib.format.read_array(f, allow_pickle=False)


def _npz(path: Path, want: tuple, field: str) -> np.ndarray:
    try:
        zf = zipfile.ZipFile(path)
    except Exception as e:
        why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise ParameterError(f"'{path}' is not an .npz archive ({why})") from None
    with zf:
        if len(zf.infolist()) > 4096:
            raise ParameterError(f"'{path}' holds {len(zf.infolist())} members; allowed: an .npz "
                                 "of a few arrays")
        arrays = [n[:-4] for n in zf.namelist() if n.endswith(".npy") and n != "__meta__.npy"]
        for name in (field, f"field/{field}"):
            if name in arrays:
                break
        else:
            if len(arrays) != 1:
                raise ParameterError(f"'{path}' holds arrays {', '.join(arrays)[:200]}; allowed: "
                                     f"one named '{field}' or 'field/{field}', or a single array")
            name = arrays[0]
        info = zf.getinfo(name + ".npy")
        where = f"'{path}' (array '{name}')"
        if info.file_size > math.prod(want) * 16 + MAX_NPY_HEADER:
            raise ParameterError(f"{where} is {info.file_size:,} bytes uncompressed; a field of "
                                 f"shape {want} takes at most {math.prod(want) * 16:,}")
        try:
            with zf.open(info) as fp:
                shape, _, dtype = _array_header(fp, where)
                _check_header(shape, dtype, want, where, field)
            with zf.open(info) as fp:
                return np.lib.format.read_array(fp, allow_pickle=False)
        except ParameterError:
            raise
        except Exception as e:  # BadZipFile (CRC), EOFError, zlib.error, ValueError, ...
            why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
            raise ParameterError(f"{where} cannot be read: {why}") from None


def load_values(sim, field: str, source: str) -> np.ndarray:
    """Values for `field` of `sim` from SOURCE (see the module doc), shaped like the field."""
    sim.field_info(field)  # unknown field -> ParameterError
    shape = tuple(sim.field_shape(field))
    if source.startswith("formula:"):
        coords = coordinates(sim, field)
        vals = evaluate_formula(source[len("formula:"):], coords)
        try:
            return np.broadcast_to(vals, coords["x"].shape).reshape(shape).copy()
        except ValueError:
            raise ParameterError(f"formula gives values of shape {vals.shape}; allowed: "
                                 f"{shape} (field '{field}')") from None
    spec, _, rng = source.partition("@")
    path = _regular_file(spec)
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        value_range = _parse_range(rng) if rng else (0.0, 1.0)
        return _image_values(path, coordinates(sim, field), value_range).reshape(shape)
    if suffix not in (".npy", ".npz"):
        raise ParameterError(f"initial condition '{path}' has an unknown type '{suffix[:20]}'; "
                             "allowed: .npy, .npz, " + ", ".join(IMAGE_SUFFIXES))
    try:
        arr = _npy(path, shape, field) if suffix == ".npy" else _npz(path, shape, field)
    except ParameterError:
        raise
    except Exception as e:
        why = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
        raise ParameterError(f"'{path}' cannot be read as a NumPy array: {why}") from None
    return np.asarray(arr).reshape(shape)


def apply(sim, spec: str) -> None:
    """Apply 'FIELD=SOURCE' to `sim` (validated before anything changes)."""
    field, eq, source = spec.partition("=")
    if not eq or not field.strip() or not source.strip():
        raise ParameterError(f"--init '{spec[:80]}' is malformed; allowed: FIELD=SOURCE")
    sim.set_field(field.strip(), load_values(sim, field.strip(), source.strip()))
