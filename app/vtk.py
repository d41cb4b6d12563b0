"""ParaView files written directly (no VTK needed): VTI (ImageData) for the uniform grids, VTU
(UnstructuredGrid) for triangle meshes (and grids, as lines/quads, when asked for), and PVD
collections of per-frame files for a time series.

Each dataset is one self-contained XML file whose arrays follow in raw appended binary (a UInt64
byte count before each array), the compact form ParaView and meshio read. Every file carries its
simulated time as FieldData `TimeValue` (and the step count as `Step`). Files are written with
`solvers.atomic_write`: a failed or killed write leaves the previous file as it was.

Layout of the data: on a grid whose fields are all cell-located the fields are CellData of the
grid of cell corners; otherwise they are PointData at the grid nodes (the coordinates the model
gives). 2D fields are (ny, nx) with x along the last axis, which is VTK's x-fastest order.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from pdestudio.solvers import ParameterError, atomic_write

from .frames import mesh_kind

VTK_TYPES = {np.dtype(np.float64): "Float64", np.dtype(np.float32): "Float32",
             np.dtype(np.int64): "Int64", np.dtype(np.int32): "Int32",
             np.dtype(np.uint8): "UInt8"}
VTK_LINE, VTK_TRIANGLE, VTK_QUAD = 3, 5, 9
UNIFORM_RTOL = 1e-6


def _uniform(c: np.ndarray, name: str) -> tuple[float, float]:
    """(origin, spacing) of uniformly spaced coordinates, or ParameterError."""
    c = np.asarray(c, dtype=np.float64)
    if len(c) < 2:
        return float(c[0]) if len(c) else 0.0, 1.0
    h = (c[-1] - c[0]) / (len(c) - 1)
    if not (h > 0 and np.abs(np.diff(c) - h).max() <= UNIFORM_RTOL * abs(h)):
        raise ParameterError(f"the grid's {name} coordinates are not uniformly spaced; "
                             "ImageData (.vti) needs a uniform grid: use .vtu")
    return float(c[0]), float(h)


def check_vti(mesh) -> None:
    """Raise ParameterError unless `mesh` can be written as ImageData (a uniform grid)."""
    kind = mesh_kind(mesh)
    if kind == "triangles":
        raise ParameterError("ImageData (.vti) holds grids; this model is on a triangle mesh: "
                             "use .vtu (or .pvd for a time series of .vtu files)")
    _uniform(mesh.x, "x")
    if kind == "grid2d":
        _uniform(mesh.y, "y")


class _Appended:
    """Collects the arrays of one file: DataArray elements that point into the appended block."""

    def __init__(self):
        self.blocks: list[np.ndarray] = []
        self.offset = 0

    def array(self, name: str, data, components: int | None = None) -> str:
        data = np.ascontiguousarray(data)
        if data.dtype not in VTK_TYPES:
            data = data.astype(np.float64 if data.dtype.kind == "f" else np.int64)
        data = data.astype(data.dtype.newbyteorder("<"), copy=False)
        comp = f' NumberOfComponents="{components}"' if components else ""
        xml = (f'<DataArray type="{VTK_TYPES[data.dtype.newbyteorder("=")]}" '
               f'Name={quoteattr(name)}{comp} format="appended" offset="{self.offset}"/>')
        self.blocks.append(data)
        self.offset += 8 + data.nbytes
        return xml

    def write(self, f) -> None:
        f.write(b'  <AppendedData encoding="raw">\n   _')
        for data in self.blocks:
            f.write(np.uint64(data.nbytes).astype("<u8").tobytes())
            f.write(memoryview(data).cast("B"))
        f.write(b"\n  </AppendedData>\n</VTKFile>\n")


def _field_data(t: float, steps: int) -> str:
    return ('<FieldData>'
            f'<DataArray type="Float64" Name="TimeValue" NumberOfTuples="1" format="ascii">'
            f'{float(t)!r}</DataArray>'
            f'<DataArray type="Int64" Name="Step" NumberOfTuples="1" format="ascii">'
            f'{int(steps)}</DataArray></FieldData>')


def _data_section(tag: str, app: _Appended, data: dict) -> str:
    if not data:
        return f"<{tag}/>"
    first = next(iter(data))
    inner = "".join(app.array(k, v) for k, v in data.items())
    return f"<{tag} Scalars={quoteattr(first)}>{inner}</{tag}>"


def _grid_layout(mesh, locations: dict):
    """For a grid: whether the fields are cell data, and the point coordinates per axis."""
    all_cells = bool(locations) and all(v == "cell" for v in locations.values())
    axes = [np.asarray(mesh.x, dtype=np.float64)]
    if mesh_kind(mesh) == "grid2d":
        axes.append(np.asarray(mesh.y, dtype=np.float64))
    if all_cells:
        axes = [_corners(a) for a in axes]
    return all_cells, axes


def _corners(c: np.ndarray) -> np.ndarray:
    """Cell corners from cell centres (midpoints, ends extrapolated)."""
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])


def write_vti(path, mesh, fields: dict, locations: dict, t: float, steps: int) -> None:
    """One grid state as VTK ImageData."""
    check_vti(mesh)
    all_cells, axes = _grid_layout(mesh, locations)
    origin, spacing, npts = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1, 1, 1]
    for k, a in enumerate(axes):
        origin[k], spacing[k] = _uniform(a, "xy"[k])
        npts[k] = len(a)
    extent = " ".join(f"0 {n - 1}" for n in npts)
    app = _Appended()
    flat = {k: np.asarray(v).ravel() for k, v in fields.items()}
    point = _data_section("PointData", app, {} if all_cells else flat)
    cell = _data_section("CellData", app, flat if all_cells else {})
    head = ('<?xml version="1.0"?>\n'
            '<VTKFile type="ImageData" version="1.0" byte_order="LittleEndian" '
            'header_type="UInt64">\n'
            f' <ImageData WholeExtent="{extent}" Origin="{" ".join(map(repr, origin))}" '
            f'Spacing="{" ".join(map(repr, spacing))}">\n'
            f'  {_field_data(t, steps)}\n'
            f'  <Piece Extent="{extent}">\n   {point}\n   {cell}\n  </Piece>\n </ImageData>\n')
    _write(path, head, app)


def unstructured(mesh, locations: dict):
    """(points (n, 3), connectivity (m, k), VTK cell type, cell-data?) of any mesh kind."""
    kind = mesh_kind(mesh)
    if kind == "triangles":
        pts = np.asarray(mesh.points, dtype=np.float64)
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        return pts, np.asarray(mesh.cells, dtype=np.int64), VTK_TRIANGLE, None
    all_cells, axes = _grid_layout(mesh, locations)
    if kind == "grid1d":
        xs = axes[0]
        n = len(xs)
        pts = np.column_stack([xs, np.zeros(n), np.zeros(n)])
        conn = np.column_stack([np.arange(n - 1), np.arange(1, n)])
        return pts, conn, VTK_LINE, all_cells
    xs, ys = axes
    X, Y = np.meshgrid(xs, ys)
    pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    nx = len(xs)
    j, i = np.meshgrid(np.arange(len(ys) - 1), np.arange(nx - 1), indexing="ij")
    a = (j * nx + i).ravel()
    return pts, np.column_stack([a, a + 1, a + 1 + nx, a + nx]), VTK_QUAD, all_cells


def write_vtu(path, mesh, fields: dict, locations: dict, t: float, steps: int) -> None:
    """One state as a VTK UnstructuredGrid (triangles; grids as lines or quads)."""
    pts, conn, ctype, all_cells = unstructured(mesh, locations)
    flat = {k: np.asarray(v).ravel() for k, v in fields.items()}
    if all_cells is None:  # triangles: each field where its length says
        pd = {k: v for k, v in flat.items() if locations.get(k) != "cell" and len(v) == len(pts)}
        cd = {k: v for k, v in flat.items() if k not in pd}
    else:
        pd, cd = ({}, flat) if all_cells else (flat, {})
    app = _Appended()
    points = f"<Points>{app.array('Points', pts, 3)}</Points>"
    k = conn.shape[1]
    cells = ("<Cells>" + app.array("connectivity", conn.ravel())
             + app.array("offsets", np.arange(k, k * len(conn) + 1, k, dtype=np.int64))
             + app.array("types", np.full(len(conn), ctype, np.uint8)) + "</Cells>")
    head = ('<?xml version="1.0"?>\n'
            '<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" '
            'header_type="UInt64">\n <UnstructuredGrid>\n'
            f'  {_field_data(t, steps)}\n'
            f'  <Piece NumberOfPoints="{len(pts)}" NumberOfCells="{len(conn)}">\n'
            f'   {_data_section("PointData", app, pd)}\n   {_data_section("CellData", app, cd)}\n'
            f'   {points}\n   {cells}\n  </Piece>\n </UnstructuredGrid>\n')
    _write(path, head, app)


def _write(path, head: str, app: _Appended) -> None:
    with atomic_write(path) as f:
        f.write(head.encode())
        app.write(f)


def write_pvd(path, entries) -> None:
    """A ParaView collection: `entries` are (time, file name relative to the .pvd's folder)."""
    rows = "".join(f'  <DataSet timestep="{float(t)!r}" group="" part="0" '
                   f'file={quoteattr(name)}/>\n' for t, name in entries)
    text = ('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1" '
            f'byte_order="LittleEndian">\n <Collection>\n{rows} </Collection>\n</VTKFile>\n')
    with atomic_write(path) as f:
        f.write(text.encode())


class Series:
    """A time series `out.pvd` whose frames go to the folder `out_series/` next to it
    (out_000000.vti, ... or .vtu on meshes). The frames are written into a temporary folder;
    `close()` moves it into place and then writes the .pvd, so an interrupted or failed run
    leaves neither a half-written series nor a .pvd pointing at missing files (`abort()`)."""

    def __init__(self, path, mesh):
        self.path = Path(path)
        self.ext = ".vtu" if mesh_kind(mesh) == "triangles" else ".vti"
        self.folder = series_folder(self.path)
        self.entries: list[tuple[float, str]] = []
        parent = self.path.parent if str(self.path.parent) else Path(".")
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.folder.name}.", suffix=".part",
                                         dir=parent))

    @property
    def frames(self) -> int:
        return len(self.entries)

    def add(self, mesh, fields, locations, t, steps) -> None:
        name = f"{self.path.stem}_{len(self.entries):06d}{self.ext}"
        writer = write_vtu if self.ext == ".vtu" else write_vti
        writer(self.tmp / name, mesh, fields, locations, t, steps)
        self.entries.append((t, f"{self.folder.name}/{name}"))

    def close(self) -> None:
        os.chmod(self.tmp, 0o777 & ~umask())  # mkdtemp makes 0700
        old = None
        if self.folder.exists():
            old = self.folder.with_name(f".{self.folder.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(self.folder, old)
        os.replace(self.tmp, self.folder)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        write_pvd(self.path, self.entries)

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def umask() -> int:
    try:  # Linux: read it without changing it
        with open("/proc/self/status") as f:
            return next(int(line.split()[1], 8) for line in f if line.startswith("Umask:"))
    except (OSError, ValueError, IndexError, StopIteration):
        mask = os.umask(0o022)
        os.umask(mask)
        return mask


def file_mode(path) -> int:
    """Permissions for a file written at `path`: those of the file it replaces, else 0666 less
    the umask (temporary files are made 0600)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~umask()


def series_folder(path) -> Path:
    path = Path(path)
    return path.with_name(f"{path.stem}_series")


_FRAME = re.compile(r".+_\d{6}\.vt[iu]$")


def check_series_folder(path) -> None:
    """The series folder of `path` may be replaced only if it holds nothing but our frames."""
    folder = series_folder(path)
    if folder.exists():
        if not folder.is_dir():
            raise ParameterError(f"time series '{path}': '{folder}' exists and is not a folder")
        other = [p.name for p in folder.iterdir() if not _FRAME.match(p.name)]
        if other:
            raise ParameterError(f"time series '{path}': folder '{folder}' holds other files "
                                 f"(e.g. '{other[0]}'); choose another name or move them")
