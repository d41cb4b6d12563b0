"""The sweep's table and contact sheet, rebuilt from the finished members' row files (so a
rerun, a Ctrl-C or a crash of one worker never leaves them inconsistent), and `read_sweep`, a
folder's spec and rows for the window's sweep gallery and the notebook's thumbnail grid."""
from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image

from pdestudio.solvers import atomic_write

from .members import read_row
from .thumbs import contact_sheet


def read_rows(out) -> list[dict]:
    """The finished members' rows; a damaged one (members.read_row) is left out: that member
    runs again next time."""
    rows = []
    for f in sorted(Path(out).glob("members/*/row.json")):
        try:
            i = int(f.parent.name)
        except ValueError:
            continue
        row = read_row(f, i)
        if row is not None:
            rows.append(row)
    return sorted(rows, key=lambda r: r["member"])


def write_table(out, rows: list[dict], vary: list) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq
    names = [n for n, _ in vary]
    fixed_cols = ["member", *names, "model", "scenario", "backend", "dtype", "t", "steps",
                  "wall_s", "diverged", "reason", "checkpoint", "thumbnail", "gpu"]
    q_cols = sorted({k for r in rows for k in r if k.startswith("q:")})
    cols = {c: [r.get(c) for r in rows] for c in fixed_cols + q_cols}
    for c in q_cols:
        cols[c] = [float("nan") if v is None else float(v) for v in cols[c]]
    table = pa.table(cols)
    path = Path(out) / "results.parquet"
    buf = io.BytesIO()
    pq.write_table(table, buf)
    with atomic_write(path) as f:
        f.write(buf.getvalue())
    return path


def write_contact(out, rows: list[dict], vary: list) -> Path:
    names = [n for n, _ in vary]
    tiles = []
    for r in rows:
        img = None
        if r.get("thumbnail"):
            try:
                with Image.open(Path(out) / r["thumbnail"]) as im:
                    img = im.convert("RGB")
            except OSError:
                img = None
        tiles.append({"member": r["member"], "params": {n: r.get(n) for n in names},
                      "image": img, "diverged": r.get("diverged"), "reason": r.get("reason")})
    sheet = contact_sheet(tiles, vary)
    path = Path(out) / "contact.png"
    buf = io.BytesIO()
    sheet.save(buf, format="PNG")
    with atomic_write(path) as f:
        f.write(buf.getvalue())
    return path


def read_sweep(folder) -> tuple[dict, list[dict]]:
    """(spec, rows) of a sweep folder: sweep.json and results.parquet (or the members' row
    files when the table is missing). Raises ValueError naming what is wrong."""
    folder = Path(folder)
    spec_file = folder / "sweep.json"
    if not spec_file.is_file():
        raise ValueError(f"'{folder}' is not a sweep folder (no sweep.json); make one with "
                         "pdestudio sweep MODEL --vary ... --out DIR")
    try:
        spec = json.loads(spec_file.read_text())
        names = [n for n, _ in spec["vary"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{spec_file}: not a sweep spec ({e})") from None
    table = folder / "results.parquet"
    if table.is_file():
        import pyarrow.parquet as pq
        try:
            rows = pq.read_table(table).to_pylist()
        except Exception as e:  # noqa: BLE001  (a damaged table: say which file)
            raise ValueError(f"{table}: cannot be read ({e})") from None
    else:
        rows = read_rows(folder)
    if not rows:
        raise ValueError(f"'{folder}': no finished members yet")
    for r in rows:
        r["_label"] = ", ".join(f"{n}={r.get(n):.4g}" if isinstance(r.get(n), float)
                                else f"{n}={r.get(n)}" for n in names)
    return spec, rows
