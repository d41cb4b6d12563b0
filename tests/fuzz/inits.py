"""Hostile initial conditions for the fuzz test: formulas (random valid expressions and every
misuse: wrong arities, keywords, *args, attributes, subscripts, lambdas, comprehensions, strings,
unknown names, dunders, deep nesting, overlong text, NUL bytes), files (.npy/.npz of every dtype
and shape, truncated, forged headers, pickles, bombs, data exports; images of every mode,
truncated, flipped, forged sizes), value ranges, and arrays given to set_field (complex, dates,
objects, text, records, ragged lists, wrong shapes, NaN, values beyond float32).

Each case: {"surface": "init", "id", "kind", "model", "params", "dtype", "field", "expect", and
"spec" (apply(sim, spec)) or "values" (a recipe built in the runner for set_field)}."""
from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from . import corrupt

SIMS = [("heat-1d", {"nx": 32}, "float64", "T", (32,)),
        ("heat-1d", {"nx": 32}, "float32", "T", (32,)),
        ("shallow-water", {"nx": 8, "ny": 6}, "float64", "h", (6, 8)),
        ("shallow-water", {"nx": 8, "ny": 6}, "float64", "H", (6, 8)),
        ("chemotaxis", {"vertices": 64}, "float64", "cells", None),
        ("two-layer", {"cells": 32}, "float64", "q1x", (32,)),
        ("euler-1d", {"nx": 16}, "float64", "rho", (16,))]
FUNCS = {"sin": 1, "cos": 1, "exp": 1, "log": 1, "sqrt": 1, "abs": 1, "tanh": 1, "floor": 1,
         "round": 1, "gauss": 1, "step": 1, "minimum": 2, "maximum": 2, "min": 2, "max": 2,
         "hypot": 2, "arctan2": 2, "heaviside": 2, "where": 3, "clip": 3}
ATOMS = ["x", "y", "z", "r", "t", "pi", "e", "1", "0.5", "2", "1e3", "-3"]
EVIL = ["__import__('os').system('true')", "x.__class__", "x[0]", "(lambda: 1)()",
        "[v for v in x]", "'abc'", "f'{x}'", "b'x'", "(y := 1)", "open('/etc/passwd')",
        "exec('1')", "eval('1')", "globals()", "sin.__globals__", "np.sin(x)", "x.sum()",
        "sin(x, out=x)", "exp(x, x)", "where(x > 0.5)", "sin(*x)", "sin(**{})", "maximum(x)",
        "clip(x, 0)", "where(x, y)", "1 if x", "x +", "", "   ", "x\x00", "xx", "é + 1",
        "sin", "x; y", "import os", "del x", "x = 1", "...", "None", "True", "1j * x",
        "{1: 2}", "{x}", "(x, y)", "[x]", "-" * 100 + "x", "x" + "+x" * 700, "1" * 2100,
        "await x", "yield x", "not_a_function(x)", "__builtins__", "x if y else"]
IMAGE_MODES = [("L", "png"), ("RGB", "png"), ("RGBA", "png"), ("P", "png"), ("LA", "png"),
               ("I;16", "png"), ("L", "jpg"), ("RGB", "bmp"), ("L", "gif"), ("F", "tiff"),
               ("L", "webp"), ("1", "png")]
BAD_DTYPES = ["complex128", "object", "U5", "S3", "datetime64[s]", "timedelta64[s]", "V8",
              "structured"]
OK_DTYPES = ["float64", "float32", "float16", "int64", "int8", "uint16", "bool", ">f8"]


def formula(rng, depth: int = 0) -> str:
    """A random expression over the whitelist (valid syntax and arities)."""
    if depth > 4 or rng.random() < 0.3:
        return str(rng.choice(ATOMS))
    k = rng.random()
    if k < 0.35:
        name = str(rng.choice(sorted(FUNCS)))
        return f"{name}({', '.join(formula(rng, depth + 1) for _ in range(FUNCS[name]))})"
    if k < 0.7:
        op = str(rng.choice(["+", "-", "*", "/", "**", "%", "//"]))
        return f"({formula(rng, depth + 1)} {op} {formula(rng, depth + 1)})"
    if k < 0.85:
        op = str(rng.choice(["<", "<=", ">", ">=", "==", "!="]))
        return f"({formula(rng, depth + 1)} {op} {formula(rng, depth + 1)})"
    return f"({formula(rng, depth + 1)} if {formula(rng, depth + 1)} else " \
           f"{formula(rng, depth + 1)})"


def _npy_bytes(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=True)
    return buf.getvalue()


def _array(rng, dtype: str, shape):
    n = int(np.prod(shape))
    if dtype == "object":
        return np.array([os.system] * n, dtype=object).reshape(shape)
    if dtype == "structured":
        return np.zeros(shape, dtype=[("a", "f8"), ("b", "i4")])
    if dtype.startswith(("datetime", "timedelta")):
        return np.zeros(shape, dtype=dtype)
    if dtype[0] in "US":
        return np.full(shape, "1.5", dtype=dtype)
    return (rng.uniform(0.5, 2.0, shape)).astype(dtype)


def _png_header_only(w: int, h: int) -> bytes:
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b""))


def _image(rng, mode: str, ext: str, size=(24, 16)) -> bytes:
    from PIL import Image
    w, h = size
    ramp = np.tile(np.linspace(0, 1, w), (h, 1))
    if mode == "I;16":
        im = Image.fromarray((ramp * 65535).astype(np.uint16))
    elif mode == "F":
        im = Image.fromarray((ramp * 255).astype(np.float32))
    else:
        im = Image.fromarray((ramp * 255).astype(np.uint8)).convert(mode)
    buf = io.BytesIO()
    im.save(buf, format={"jpg": "JPEG", "tiff": "TIFF"}.get(ext, ext.upper()))
    return buf.getvalue()


def cases(rng, folder: Path, count: int) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    out: list[dict] = []

    def add(kind, sim, expect, spec=None, values=None):
        model, params, dtype, field, shape = sim
        c = {"surface": "init", "id": f"init-{len(out)}", "kind": kind, "model": model,
             "params": params, "dtype": dtype, "field": field, "expect": expect}
        if spec is not None:
            c["spec"] = spec
        else:
            c["values"] = values
        out.append(c)

    def file_(data: bytes, ext: str) -> str:
        p = folder / f"i{len(out):05d}.{ext}"
        p.write_bytes(data)
        return str(p)

    from pdestudio import solvers
    shapes = {}
    for model, params, dtype, field, _ in SIMS:
        sim = solvers.create(model, backend="numpy", dtype=dtype, **params)
        shapes[(model, field)] = tuple(sim.field_shape(field))

    def shape_of(sim):
        return shapes[(sim[0], sim[3])]

    def one(sim):
        shape = shape_of(sim)
        f = sim[3]
        k = rng.random()
        if k < 0.25:
            add("formula-random", sim, "any", spec=f"{f}=formula:{formula(rng)}")
        elif k < 0.4:
            add("formula-evil", sim, "error",
                spec=f"{f}=formula:{EVIL[int(rng.integers(len(EVIL)))]}")
        elif k < 0.55:
            bad = rng.random() < 0.5
            dtype = str(rng.choice(BAD_DTYPES if bad else OK_DTYPES))
            wrong = rng.random() < 0.3
            shp = tuple(int(n) + int(rng.integers(1, 3)) for n in shape) if wrong else shape
            data = _npy_bytes(_array(rng, dtype, shp))
            how = str(rng.choice(["plain", "plain", "truncate", "flip", "fortran"]))
            expect = "error" if bad or wrong else "any"
            if how == "truncate":
                data, expect = data[:int(rng.integers(0, len(data)))], "error"
            elif how == "flip":
                data, expect = corrupt_flip(rng, data), "any"
            elif how == "fortran" and len(shp) == 2 and dtype in OK_DTYPES:
                data = _npy_bytes(np.asfortranarray(_array(rng, dtype, shp)))
            add(f"npy-{dtype}-{how}{'-wrongshape' if wrong else ''}", sim, expect,
                spec=f"{f}={file_(data, 'npy')}")
        elif k < 0.65:
            how = str(rng.choice(["named", "single", "export", "many", "bomb", "truncate",
                                  "pickle", "header-bomb"]))
            a = _array(rng, "float64", shape)
            p = folder / f"i{len(out):05d}.npz"
            expect = "any"
            if how == "named":
                np.savez(p, **{f: a, "other": np.zeros(3)})
            elif how == "single":
                np.savez(p, whatever=a)
            elif how == "export":
                corrupt.write_zip(p, {f"field/{f}.npy": _npy_bytes(a), "__meta__.npy": b"x"})
            elif how == "many":
                np.savez(p, a=a, b=a)
                expect = "error"
            elif how == "bomb":
                p.write_bytes(corrupt.bomb_zip(f"{f}.npy", 64 << 20))
                expect = "error"
            elif how == "truncate":
                np.savez(p, **{f: a})
                p.write_bytes(p.read_bytes()[:int(rng.integers(0, p.stat().st_size))])
                expect = "error"
            elif how == "pickle":
                corrupt.write_zip(p, {f"{f}.npy": _npy_bytes(_array(rng, "object", shape))})
                expect = "error"
            else:
                hdr = np.lib.format.magic(1, 0)
                buf = io.BytesIO()
                np.lib.format.write_array_header_1_0(
                    buf, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
                corrupt.write_zip(p, {f"{f}.npy": hdr + buf.getvalue()[len(hdr):] + bytes(64)})
                expect = "error"
            add(f"npz-{how}", sim, expect, spec=f"{f}={p}")
        elif k < 0.8:
            mode, ext = IMAGE_MODES[int(rng.integers(len(IMAGE_MODES)))]
            try:
                data = _image(rng, mode, ext)
            except Exception:
                return
            how = str(rng.choice(["plain", "plain", "truncate", "flip", "range", "badrange"]))
            expect, suffix = "any", ""
            if how == "truncate":
                data = data[:int(rng.integers(0, len(data)))]
            elif how == "flip":
                data = corrupt_flip(rng, data)
            elif how == "range":
                suffix = f"@{rng.uniform(-2, 2):.3g},{rng.uniform(1, 5):.3g}"
            elif how == "badrange":
                suffix, expect = str(rng.choice(["@x", "@1", "@nan,1", "@1,inf", "@,", "@1,2,3"])), \
                    "error"
            add(f"image-{mode}-{ext}-{how}", sim, expect,
                spec=f"{f}={file_(data, ext)}{suffix}")
        elif k < 0.85:
            what = str(rng.choice(["png-bomb", "png-huge", "garbage-png", "unknown-ext", "missing",
                                   "dir", "fifo", "malformed", "unknown-field", "derived"]))
            if what == "png-bomb":
                spec = f"{f}={file_(_png_header_only(50000, 50000), 'png')}"
            elif what == "png-huge":
                spec = f"{f}={file_(_png_header_only(12000, 12000), 'png')}"
            elif what == "garbage-png":
                spec = f"{f}={file_(bytes(rng.integers(0, 256, 300, dtype=np.uint8)), 'png')}"
            elif what == "unknown-ext":
                spec = f"{f}={file_(b'1 2 3', 'csv')}"
            elif what == "missing":
                spec = f"{f}={folder / 'no-such.npy'}"
            elif what == "dir":
                d = folder / f"d{len(out)}.npy"
                d.mkdir(exist_ok=True)
                spec = f"{f}={d}"
            elif what == "fifo":
                q = folder / f"q{len(out)}.npy"
                if not q.exists():
                    os.mkfifo(q)
                spec = f"{f}={q}"
            elif what == "malformed":
                spec = str(rng.choice([f, "=x", f"{f}=", "", "==", f"{f}=formula:"]))
            elif what == "unknown-field":
                spec = "nosuchfield=formula:x"
            else:
                spec = "eta=formula:x" if sim[0] == "shallow-water" else "nosuch=formula:1"
            add(f"spec-{what}", sim, "error", spec=spec)
        else:
            bad = rng.random() < 0.6
            dtype = str(rng.choice(BAD_DTYPES if bad else OK_DTYPES))
            how = str(rng.choice(["array", "array", "wrong-shape", "nan", "inf", "huge", "ragged",
                                  "scalar", "none", "list"]))
            expect = "error" if bad or how in ("wrong-shape", "nan", "inf", "ragged", "scalar",
                                               "none") else "any"
            if how == "huge" and sim[2] == "float32" and dtype in ("float64", ">f8"):
                expect = "error"
            add(f"set_field-{dtype}-{how}", sim, expect, values={"dtype": dtype, "how": how})

    while len(out) < count:
        one(SIMS[int(rng.integers(len(SIMS)))])
    return out[:count]


def corrupt_flip(rng, data: bytes) -> bytes:
    if not data:
        return data
    b = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        b[int(rng.integers(len(b)))] ^= 1 << int(rng.integers(8))
    return bytes(b)


def build_values(rng, recipe: dict, shape: tuple):
    """The set_field argument a recipe describes (built in the runner: object arrays and the
    like are not sent between processes)."""
    dtype, how = recipe["dtype"], recipe["how"]
    if how == "none":
        return None
    if how == "scalar":
        return 1.0
    if how == "ragged":
        return [[1.0, 2.0], [3.0]]
    if how == "wrong-shape":
        shape = tuple(n + 1 for n in shape)
    a = _array(rng, dtype, shape)
    if how in ("nan", "inf") and a.dtype.kind in "fiub":
        a = a.astype(np.float64) if a.dtype.kind != "f" else a
        a.flat[int(rng.integers(a.size))] = np.nan if how == "nan" else np.inf
    if how == "huge" and a.dtype.kind == "f":
        a = a * 1e300 if a.dtype.itemsize == 8 else a
    if how == "list":
        return a.tolist()
    return a
