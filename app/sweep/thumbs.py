"""Thumbnails of a member's default field and the contact sheet, with NumPy and Pillow only
(Dask workers have no display and maybe no OpenGL): 2D grids as images (y upwards), 1D fields as
a line, triangle meshes as an orthographic view along their thinnest direction (a depth buffer
keeps the front vertices). Colours: viridis between the field's finite min and max."""
from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont

SIZE = 128
BG = (28, 30, 36)
TEXT = (230, 230, 230)
# viridis at 9 evenly spaced points (VisPy's map), interpolated linearly
_ANCHORS = np.array([[68, 1, 84], [71, 45, 123], [59, 82, 139], [44, 114, 142], [33, 144, 140],
                     [40, 174, 128], [93, 201, 99], [171, 220, 50], [253, 231, 37]], float)


def colours(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """uint8 RGB of the values (NaN and inf: grey)."""
    with np.errstate(all="ignore"):
        x = np.clip((v - lo) / (hi - lo if hi > lo else 1.0), 0, 1) * 8
    x = np.where(np.isfinite(x), x, 0.0)
    i = np.minimum(x.astype(int), 7)
    f = (x - i)[..., None]
    rgb = _ANCHORS[i] * (1 - f) + _ANCHORS[i + 1] * f
    rgb[~np.isfinite(v)] = 128
    return rgb.astype(np.uint8)


def finite_range(v: np.ndarray) -> tuple[float, float]:
    f = v[np.isfinite(v)]
    return (float(f.min()), float(f.max())) if f.size else (0.0, 1.0)


def thumbnail(mesh, values: np.ndarray, size: int = SIZE) -> Image.Image:
    v = np.asarray(values, dtype=np.float64)
    lo, hi = finite_range(v)
    kind = getattr(mesh, "kind", None)
    if v.ndim == 2:
        # fields of 2D grids are [y][x] (rows along y): x to the right, y upwards
        rows = v.T if (hasattr(mesh, "x") and hasattr(mesh, "y") and v.shape ==
                       (len(mesh.x), len(mesh.y)) and len(mesh.x) != len(mesh.y)) else v
        img = Image.fromarray(colours(rows[::-1], lo, hi))
        w, h = rows.shape[1], rows.shape[0]
        if w != h:  # keep the aspect ratio inside the square
            k = size / max(w, h)
            img = img.resize((max(1, round(w * k)), max(1, round(h * k))), Image.NEAREST)
            sq = Image.new("RGB", (size, size), BG)
            sq.paste(img, ((size - img.width) // 2, (size - img.height) // 2))
            return sq
        return img.resize((size, size), Image.NEAREST if max(v.shape) < size else Image.BILINEAR)
    if kind == "grid1d" or not hasattr(mesh, "points"):
        return _line(v, lo, hi, size)
    return _surface(np.asarray(mesh.points, float), np.asarray(mesh.cells), v, lo, hi, size)


def _line(v, lo, hi, size):
    img = Image.new("RGB", (size, size), BG)
    d = ImageDraw.Draw(img)
    n = len(v)
    xs = np.linspace(2, size - 3, n)
    span = hi - lo if hi > lo else 1.0
    ys = size - 3 - (np.nan_to_num(v, nan=lo) - lo) / span * (size - 6)
    step = max(1, n // (4 * size))
    d.line(list(zip(xs[::step].tolist(), ys[::step].tolist())), fill=(253, 231, 37), width=1)
    return img


def _surface(pts, cells, v, lo, hi, size):
    """Orthographic view along the coordinate axis of least extent (a planar mesh in the xy
    plane: x to the right, y upwards, as the window draws it): every triangle filled with the
    mean colour of its vertices (or its cell value), far ones first (painter's order)."""
    pts = np.asarray(pts, float)
    if pts.shape[1] == 2:
        pts = np.column_stack([pts, np.zeros(len(pts))])
    cells = np.asarray(cells)
    axis = int(np.argmin(np.ptp(pts, axis=0)))
    a, b = [k for k in range(3) if k != axis]
    u, w2, depth = pts[:, a], pts[:, b], pts[:, axis]
    ext = max(np.ptp(u), np.ptp(w2), 1e-30)
    scale = (size - 1) / ext
    px = (u - u.min()) * scale + 0.5 * (size - 1 - np.ptp(u) * scale)
    py = (w2.max() - w2) * scale + 0.5 * (size - 1 - np.ptp(w2) * scale)
    per_cell = len(v) == len(cells) and len(v) != len(pts)
    val = v if per_cell else v[cells].mean(axis=1)
    rgb = colours(val, lo, hi)
    order = np.argsort(depth[cells].mean(axis=1))  # far first, near last
    img = Image.new("RGB", (size, size), BG)
    d = ImageDraw.Draw(img)
    tri_x, tri_y = px[cells], py[cells]
    for t in order:
        c = tuple(int(x) for x in rgb[t])
        d.polygon([(tri_x[t, 0], tri_y[t, 0]), (tri_x[t, 1], tri_y[t, 1]),
                   (tri_x[t, 2], tri_y[t, 2])], fill=c, outline=c)
    return img


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def contact_sheet(tiles: list[dict], vary: list, tile: int = SIZE) -> Image.Image:
    """One labelled tile per member: `tiles` holds {member, params, image (PIL or None),
    diverged, reason}. With two varied parameters the sheet is their grid (first parameter
    down the rows, second across); otherwise a near-square grid in member order."""
    names = [n for n, _ in vary]
    if len(vary) == 2:
        rows, cols = len(vary[0][1]), len(vary[1][1])
        where = {t["member"]: divmod(t["member"], cols) for t in tiles}
    else:
        n = max((t["member"] for t in tiles), default=0) + 1
        cols = max(1, math.ceil(math.sqrt(n)))
        rows = math.ceil(n / cols)
        where = {t["member"]: divmod(t["member"], cols) for t in tiles}
    label_h, margin, head = 26, 6, 30
    w = margin + cols * (tile + margin)
    h = head + margin + rows * (tile + label_h + margin)
    sheet = Image.new("RGB", (w, h), BG)
    d = ImageDraw.Draw(sheet)
    small, big = _font(10), _font(13)
    title = "sweep over " + " x ".join(f"{n} ({len(v)})" for n, v in vary)
    if len(vary) == 2:
        title += f": {names[0]} down, {names[1]} across"
    d.text((margin, 8), title, fill=TEXT, font=big)
    for t in tiles:
        r, c = where[t["member"]]
        x, y = margin + c * (tile + margin), head + margin + r * (tile + label_h + margin)
        img = t.get("image")
        if img is not None:
            sheet.paste(img.resize((tile, tile)), (x, y))
        if t.get("diverged"):
            d.rectangle([x, y, x + tile - 1, y + tile - 1], outline=(255, 90, 90), width=3)
            d.text((x + 4, y + 4), "diverged", fill=(255, 120, 120), font=small)
        lines = [", ".join(f"{k}={_short(v)}" for k, v in t["params"].items())]
        d.text((x, y + tile + 2), f"#{t['member']} " + lines[0][:40], fill=TEXT, font=small)
        if len(lines[0]) > 40:
            d.text((x, y + tile + 13), lines[0][40:80], fill=TEXT, font=small)
    return sheet


def _short(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
