"""A small reader of the VTK XML files pdestudio writes (ImageData / UnstructuredGrid with raw
appended data, PVD collections), independent of the writer: the tests check the files by
reading them back."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

TYPES = {"Float64": "<f8", "Float32": "<f4", "Int64": "<i8", "Int32": "<i4", "UInt8": "u1",
         "UInt64": "<u8"}


def read(path) -> dict:
    """{'type', 'attrs' (of the dataset element), 'piece' (its attributes), 'field': {name:
    array}, 'point': {...}, 'cell': {...}, 'points', 'connectivity', 'offsets', 'types'}."""
    raw = Path(path).read_bytes()
    start = raw.index(b"<AppendedData")
    head = raw[:start].decode() + "</VTKFile>"
    body = raw[start:]
    underscore = body.index(b"_") + 1
    blob = body[underscore:body.rindex(b"</AppendedData>")]
    root = ET.fromstring(head)
    assert root.get("byte_order") == "LittleEndian" and root.get("header_type") == "UInt64"
    kind = root.get("type")
    ds = root.find(kind)

    def array(el):
        dtype = TYPES[el.get("type")]
        if el.get("format") == "ascii":
            return np.array(el.text.split(), dtype=dtype)
        assert el.get("format") == "appended"
        off = int(el.get("offset"))
        n = int(np.frombuffer(blob[off:off + 8], "<u8")[0])
        a = np.frombuffer(blob[off + 8:off + 8 + n], dtype)
        comp = int(el.get("NumberOfComponents", "1"))
        return a.reshape(-1, comp) if comp > 1 else a

    out = {"type": kind, "attrs": dict(ds.attrib)}
    out["field"] = {el.get("Name"): array(el) for el in ds.findall("FieldData/DataArray")}
    piece = ds.find("Piece")
    out["piece"] = dict(piece.attrib)
    out["point"] = {el.get("Name"): array(el) for el in piece.findall("PointData/DataArray")}
    out["cell"] = {el.get("Name"): array(el) for el in piece.findall("CellData/DataArray")}
    if kind == "UnstructuredGrid":
        out["points"] = array(piece.find("Points/DataArray"))
        for el in piece.findall("Cells/DataArray"):
            out[el.get("Name")] = array(el)
    return out


def image_axes(d) -> list[np.ndarray]:
    """The point coordinates along each axis of an ImageData."""
    ext = [int(v) for v in d["attrs"]["WholeExtent"].split()]
    origin = [float(v) for v in d["attrs"]["Origin"].split()]
    spacing = [float(v) for v in d["attrs"]["Spacing"].split()]
    return [origin[k] + spacing[k] * np.arange(ext[2 * k], ext[2 * k + 1] + 1) for k in range(3)]


def read_pvd(path) -> list[tuple[float, Path]]:
    root = ET.parse(path).getroot()
    assert root.get("type") == "Collection"
    folder = Path(path).parent
    return [(float(e.get("timestep")), folder / e.get("file"))
            for e in root.iter("DataSet")]


def no_temporary_files(folder) -> list[str]:
    """Names in `folder` (recursively) that look like temporary or partial files."""
    return [str(p) for p in Path(folder).rglob("*")
            if re.search(r"(^\.|\.part|\.old$|probe)", p.name)]
