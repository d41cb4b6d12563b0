"""Software rendering (no OpenGL): the field with the viewer's colormap, drawn with NumPy and
Pillow. 1D: a line plot coloured by value; 2D grids: the field as an image (y upwards);
triangle meshes: the triangles seen from above (painter's order along z), filled with the
field's colour (cell values, or the mean of the vertex values)."""
from __future__ import annotations

import numpy as np

from .views.colors import ColorScale

BG = (28, 31, 36)


def render_software(info, frame, field: str, scale: ColorScale, size) -> np.ndarray:
    from PIL import Image, ImageDraw
    w, h = size
    img = Image.new("RGB", (w, h), BG)
    v = np.asarray(frame.fields[field], dtype=np.float64)
    lo, hi = scale.limits(v)
    kind = info.kind
    m = 40
    if kind == "grid1d":
        x = np.asarray(info.mesh.x, dtype=np.float64)
        s = max(1, len(x) // 4096)
        x, v = x[::s], v[::s]
        px = m + (x - x.min()) / (np.ptp(x) or 1.0) * (w - 2 * m)
        py = h - m - (np.clip(v, lo, hi) - lo) / (hi - lo) * (h - 2 * m)
        col = (scale.rgba(v, (lo, hi))[:, :3] * 255).astype(np.uint8)
        d = ImageDraw.Draw(img)
        d.rectangle([m, m, w - m, h - m], outline=(100, 100, 100))
        for i in range(len(px) - 1):
            d.line([(px[i], py[i]), (px[i + 1], py[i + 1])], fill=tuple(int(c) for c in col[i]),
                   width=2)
    elif kind == "grid2d":
        rgb = (scale.rgba(v[::-1], (lo, hi))[..., :3] * 255).astype(np.uint8)
        pic = Image.fromarray(rgb)
        ar = v.shape[1] / v.shape[0]
        bw, bh = (w - 2 * m, int((w - 2 * m) / ar))
        if bh > h - 2 * m:
            bw, bh = int((h - 2 * m) * ar), h - 2 * m
        img.paste(pic.resize((bw, bh), Image.NEAREST), ((w - bw) // 2, (h - bh) // 2))
    else:
        pts = np.asarray(info.mesh.points, dtype=np.float64)
        cells = np.asarray(info.mesh.cells)
        cv = v if len(v) == len(cells) and len(v) != len(pts) else v[cells].mean(axis=1)
        col = (scale.rgba(cv, (lo, hi))[:, :3] * 255).astype(np.uint8)
        lo_xy, span = pts[:, :2].min(axis=0), np.ptp(pts[:, :2], axis=0).max() or 1.0
        k = min(w, h) - 2 * m
        p = (pts[:, :2] - lo_xy) / span * k
        p[:, 0] += (w - np.ptp(p[:, 0])) / 2
        p[:, 1] = h - ((h - np.ptp(p[:, 1])) / 2 + p[:, 1])
        z = pts[cells, 2].mean(axis=1) if pts.shape[1] > 2 else np.zeros(len(cells))
        d = ImageDraw.Draw(img)
        for t in np.argsort(z):
            d.polygon([tuple(p[c]) for c in cells[t]], fill=tuple(int(c) for c in col[t]))
    return np.asarray(img)
