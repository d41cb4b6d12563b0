"""Initial conditions: formulas are evaluated over a whitelist (never eval), files are validated."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.app.initial_conditions import apply, evaluate_formula, load_values

X = {"x": np.linspace(-1, 1, 5), "y": np.zeros(5)}


@pytest.mark.parametrize("expr,expected", [
    ("sin(pi*x)", np.sin(np.pi * X["x"])),
    ("x**2 + 2*x - 1", X["x"] ** 2 + 2 * X["x"] - 1),
    ("1 if x > 0 else 0", 1.0 * (X["x"] > 0)),
    ("where(abs(x) < 0.6, 3, 1)", np.where(np.abs(X["x"]) < 0.6, 3, 1)),
    ("(x > -0.5) and (x < 0.5)", 1.0 * (np.abs(X["x"]) < 0.5)),
    ("exp(-(x*x+y*y))", np.exp(-X["x"] ** 2)),
])
def test_formulas_compute_what_they_say(expr, expected):
    np.testing.assert_allclose(evaluate_formula(expr, X), expected)


@pytest.mark.parametrize("evil", [
    "__import__('os').system('touch /tmp/pwned')",
    "().__class__.__bases__[0].__subclasses__()",
    "open('/etc/passwd')",
    "eval('1')",
    "exec('x=1')",
    "x.__class__",
    "[x for x in ()]",
    "lambda: 1",
    "globals()",
    "sin.__globals__",
    "x[0]",
    "'a' * 10",
    "np.sin(x)",
    "sin(x=1)",
    "1; import os",
    "(y := 2)",
])
def test_code_injection_is_refused(evil, tmp_path):
    with pytest.raises(solvers.ParameterError):
        evaluate_formula(evil, X)


def test_huge_powers_overflow_instead_of_hanging():
    out = evaluate_formula("10**10**10", X)
    assert np.isinf(out).all()


def test_npz_image_and_formula_sources(tmp_path):
    import imageio.v3 as iio
    sim = solvers.create("heat-1d", backend="numpy", nx=32)
    img = np.tile(np.linspace(0, 255, 64).astype(np.uint8), (8, 1))  # dark left, bright right
    iio.imwrite(tmp_path / "ramp.png", img)
    vals = load_values(sim, "T", f"{tmp_path / 'ramp.png'}@1,3")
    assert vals.shape == (32,) and vals[0] == pytest.approx(1.0) and vals[-1] == pytest.approx(3.0)
    assert np.all(np.diff(vals) >= 0)
    np.savez(tmp_path / "f.npz", T=np.arange(32.0), other=np.zeros(3))
    np.testing.assert_array_equal(load_values(sim, "T", str(tmp_path / "f.npz")), np.arange(32.0))
    apply(sim, "T=formula:x")
    np.testing.assert_allclose(sim.fields()["T"], sim.mesh.x)


def test_bad_files_leave_the_simulation_untouched(tmp_path):
    sim = solvers.create("heat-1d", backend="numpy", nx=32)
    before = sim.fields()["T"].copy()
    (tmp_path / "bad.npy").write_bytes(b"not an array")
    np.save(tmp_path / "wrong.npy", np.zeros(7))
    for spec in (f"T={tmp_path / 'bad.npy'}", f"T={tmp_path / 'wrong.npy'}", "T=formula:1/",
                 "nosuch=formula:x", "T", f"T={tmp_path / 'x.txt'}"):
        with pytest.raises(solvers.ParameterError):
            apply(sim, spec)
    np.testing.assert_array_equal(sim.fields()["T"], before)


# ---- issue 20: formulas cannot write, functions have fixed arities, files are checked first ----
from pdestudio.app.initial_conditions import FUNCTIONS  # noqa: E402


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_refuses_an_extra_argument(name):
    n = max(FUNCTIONS[name][1]) + 1
    with pytest.raises(solvers.ParameterError, match=rf"{name}\(\) takes .*, not {n}$"):
        evaluate_formula(f"{name}({', '.join(['x'] * n)})", X)


@pytest.mark.parametrize("expr,match", [
    ("exp(x, x)", r"exp\(\) takes 1 argument, not 2"),
    ("where(x > 0.5)", r"where\(\) takes 3 arguments, not 1"),
    ("sin(x, out=x)", "positional arguments only"),
    ("sin(*x)", "positional arguments only"),
    ("minimum(x, x, x)", "takes 2 arguments, not 3"),
    ("clip(x)", "takes 3 arguments, not 1"),
    ("x\x00", "not a valid expression"),
    ("-" * 150 + "x", "nested too deeply"),
])
def test_formula_misuse_is_one_clean_line(expr, match):
    with pytest.raises(solvers.ParameterError, match=match) as e:
        evaluate_formula(expr, X)
    assert "\n" not in str(e.value)


def test_a_formula_cannot_reach_the_mesh_or_the_state():
    sim = solvers.create("chemotaxis", backend="numpy", vertices=100)
    points, cells = sim.mesh.points.copy(), sim.fields()["cells"].copy()
    for spec in ("cells=formula:exp(x, x)", "cells=formula:sqrt(x, x)",
                 "cells=formula:maximum(x, y, x)", "cells=formula:where(x > 0.5)"):
        with pytest.raises(solvers.ParameterError):
            apply(sim, spec)
    variables = {"x": np.linspace(0, 1, 5)}
    before = variables["x"].copy()
    evaluate_formula("exp(x) + x * 2", variables)
    np.testing.assert_array_equal(variables["x"], before)
    np.testing.assert_array_equal(sim.mesh.points, points)
    np.testing.assert_array_equal(sim.fields()["cells"], cells)


@pytest.mark.parametrize("expr", ["clip(x, 0, 0.5)", "arctan2(y, x)", "round(x)", "min(x, 0.5)",
                                  "where(x > 0, x, 0)", "gauss(x) + step(x)", "heaviside(x, 1)",
                                  "1", "pi * e", "-x if x < 0 else x"])
def test_valid_formulas_are_accepted(expr):
    assert np.isfinite(evaluate_formula(expr, X)).all()


def _png_header(width, height, bit_depth=8, color=0):
    """A PNG that declares width×height but holds no image data (header-only bomb)."""
    import struct
    import zlib

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def test_images_are_size_checked_before_decoding(tmp_path):
    sim = solvers.create("heat-1d", backend="numpy", nx=32)
    (tmp_path / "big.png").write_bytes(_png_header(12000, 12000))
    with pytest.raises(solvers.ParameterError, match=r"has 12000×12000 = 144,000,000 pixels; "
                       r"allowed: at most 33,554,432 for a field of 32 points"):
        load_values(sim, "T", str(tmp_path / "big.png"))
    (tmp_path / "bigger.png").write_bytes(_png_header(20000, 20000))
    with pytest.raises(solvers.ParameterError, match=r"more than 178,956,970 pixels \(Pillow's "
                       r"decompression-bomb limit\); allowed: at most 33,554,432"):
        load_values(sim, "T", str(tmp_path / "bigger.png"))
    (tmp_path / "cut.png").write_bytes(_png_header(64, 64))
    with pytest.raises(solvers.ParameterError, match="image .*cut.png' cannot be read"):
        load_values(sim, "T", str(tmp_path / "cut.png"))
    (tmp_path / "fake.png").write_bytes(b"not an image at all")
    with pytest.raises(solvers.ParameterError, match="cannot be read"):
        load_values(sim, "T", str(tmp_path / "fake.png"))


def test_16_bit_palette_and_alpha_images_are_read(tmp_path):
    from PIL import Image
    sim = solvers.create("heat-1d", backend="numpy", nx=16)
    ramp16 = np.tile(np.linspace(0, 65535, 32).astype(np.uint16), (4, 1))
    Image.fromarray(ramp16).save(tmp_path / "r16.png")
    vals = load_values(sim, "T", str(tmp_path / "r16.png"))
    assert vals[0] == pytest.approx(0) and vals[-1] == pytest.approx(1)
    ramp8 = np.tile(np.linspace(0, 255, 32).astype(np.uint8), (4, 1))
    Image.fromarray(ramp8).convert("P").save(tmp_path / "p.png")
    Image.fromarray(ramp8).convert("LA").save(tmp_path / "la.png")
    for name in ("p.png", "la.png"):
        vals = load_values(sim, "T", str(tmp_path / name))
        assert vals[0] == pytest.approx(0, abs=0.01) and vals[-1] == pytest.approx(1, abs=0.01)


def test_npy_and_npz_headers_are_checked_before_the_data(tmp_path):
    sim = solvers.create("heat-1d", backend="numpy", nx=32)
    np.save(tmp_path / "obj.npy", np.array([None] * 32, dtype=object), allow_pickle=True)
    np.save(tmp_path / "cplx.npy", np.zeros(32, complex))
    np.save(tmp_path / "col.npy", np.arange(32.0)[:, None])
    good = np.lib.format.magic(1, 0) + b""
    header = {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    (tmp_path / "huge.npy").write_bytes(good + buf.getvalue()[len(good):])
    np.save(tmp_path / "cut.npy", np.zeros(32))
    (tmp_path / "cut.npy").write_bytes((tmp_path / "cut.npy").read_bytes()[:-40])
    for name, match in [("obj.npy", "dtype object"), ("cplx.npy", "dtype complex128"),
                        ("huge.npy", r"shape \(1000000000000,\); allowed: \(32,\)"),
                        ("cut.npy", "is truncated")]:
        with pytest.raises(solvers.ParameterError, match=match):
            load_values(sim, "T", str(tmp_path / name))
    np.testing.assert_array_equal(load_values(sim, "T", str(tmp_path / "col.npy")), np.arange(32.0))
    sim.step(3)
    sim.save(tmp_path / "export.npz", include_fields=True)  # a data export holds field/T
    np.testing.assert_array_equal(load_values(sim, "T", str(tmp_path / "export.npz")),
                                  sim.fields()["T"])
    import os
    os.mkfifo(tmp_path / "fifo.npy")
    with pytest.raises(solvers.ParameterError, match="not a regular file"):
        load_values(sim, "T", str(tmp_path / "fifo.npy"))


def test_an_npz_bomb_is_refused_before_inflating(tmp_path):
    import zipfile
    sim = solvers.create("heat-1d", backend="numpy", nx=32)
    with zipfile.ZipFile(tmp_path / "bomb.npz", "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("T.npy", "w", force_zip64=True) as f:
            f.write(np.lib.format.magic(1, 0))
            for _ in range(64):
                f.write(bytes(1 << 20))
    with pytest.raises(solvers.ParameterError, match=r"is 67,108,\d+ bytes uncompressed; a field "
                       r"of shape \(32,\) takes at most 512"):
        load_values(sim, "T", str(tmp_path / "bomb.npz"))


def test_image_names_with_at_signs(tmp_path):
    """Issue 28: 'a@b.png' is a file (the last '@' splits off a range only when a range, two
    numbers, follows), 'a@b.png@1,3' maps it to [1, 3], and 'ramp.png@1' still names the
    malformed range."""
    import imageio.v3 as iio
    sim = solvers.create("heat-1d", backend="numpy", nx=32)
    img = np.tile(np.linspace(0, 255, 64).astype(np.uint8), (8, 1))
    iio.imwrite(tmp_path / "a@b.png", img)
    iio.imwrite(tmp_path / "ramp.png", img)
    vals = load_values(sim, "T", str(tmp_path / "a@b.png"))
    assert vals[0] == pytest.approx(0.0) and vals[-1] == pytest.approx(1.0)
    vals = load_values(sim, "T", f"{tmp_path / 'a@b.png'}@1,3")
    assert vals[0] == pytest.approx(1.0) and vals[-1] == pytest.approx(3.0)
    apply(sim, f"T={tmp_path / 'a@b.png'}@-2,2")
    assert sim.fields()["T"][0] == pytest.approx(-2.0)
    with pytest.raises(solvers.ParameterError, match="'@1' is malformed"):
        load_values(sim, "T", f"{tmp_path / 'ramp.png'}@1")
    with pytest.raises(solvers.ParameterError, match="not a file|does not exist|no file"):
        load_values(sim, "T", str(tmp_path / "none@x.png"))
