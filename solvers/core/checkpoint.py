"""Checkpoint files: what `Simulation.save` writes and `solvers.load` reads back.

A checkpoint is an .npz archive (np.savez: a zip of .npy arrays) with a JSON manifest:

    __meta__       0-d text array, JSON: {"format": "pdestudio-checkpoint", "version": 2, "model",
                   "scenario", "dtype", "backend", "params", "t", "steps", "aux", "arrays":
                   {name: {"shape", "dtype", "sha256"}}, and with fields "fields": {name:
                   {"location", "unit"}}}; sha256 is the SHA-256 of the array's bytes (C order)
    state/<name>   the state arrays, exact (the simulation's dtype)
    field/<name>   with include_fields: every displayable field (host copies, original numbering)
    mesh/<name>    with include_fields: the mesh coordinates (x, y or points, cells)

With include_fields the file is also the app's `.npz` data export. Version 1 (the previous
release) had no "format", no "arrays" and no checksums; it is still read, with every other check
(the zip's CRC-32 still catches flipped bits in its arrays).

Reading trusts nothing in the file. It never unpickles (allow_pickle=False), opens only regular
files, looks at the zip directory before parsing it (a bounded number of members), checks the
manifest's types and ranges, builds the simulation from the validated parameters (whose memory is
checked before anything is allocated), compares every array's declared shape, dtype and
uncompressed size with what the simulation holds before decompressing a byte of it (a compression
bomb is refused without being inflated), and checks every array's SHA-256. Every problem is a
`ParameterError` naming the file and what is wrong.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import stat
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from .errors import MeshError, ParameterError
from .params import short_path, short_repr

FORMAT = "pdestudio-checkpoint"
VERSION = 2
OLDEST = 1
MAX_MEMBERS = 1024            # arrays in one checkpoint (a model has a handful)
MAX_DIRECTORY = 1 << 20       # bytes of the zip's central directory
MAX_META = 1 << 20            # bytes of the manifest
MAX_NPY_HEADER = 1 << 16      # bytes of an .npy header (np.save writes 128)
MAX_STEPS = 2**53             # a step count a float clock can still tell apart
ARRAY_DTYPES = ("float32", "float64", "int32", "int64")
_NAME = re.compile(r"(state|field|mesh)/[A-Za-z_][A-Za-z0-9_]{0,63}")
_CHUNK = 1 << 22


class _Bad(Exception):
    """Internal: what is wrong with the file (becomes a ParameterError naming it)."""


# ---- writing ------------------------------------------------------------------------------------
def _sha256(a: np.ndarray) -> str:
    return hashlib.sha256(memoryview(np.ascontiguousarray(a)).cast("B")).hexdigest()


def _plain(v):
    """JSON-ready scalars (NumPy numbers become Python ones)."""
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    return v


def payload(sim, include_fields: bool = False) -> tuple[dict, dict[str, np.ndarray]]:
    """The manifest and the arrays of a checkpoint of `sim` (host copies, C order)."""
    arrays = {f"state/{k}": np.ascontiguousarray(sim._be.asnumpy(v)) for k, v in sim.state.items()}
    meta: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "model": sim.model, "scenario": sim.scenario_name,
        "dtype": sim.dtype, "backend": sim.backend,
        "params": {k: _plain(v) for k, v in sim.params.items()},
        "t": float(sim.t), "steps": int(sim.steps),
        "aux": {k: _plain(v) for k, v in sim._aux_state().items()}}
    definition = getattr(sim, "definition_source", None)
    if definition is not None:  # a model defined from a file: the file travels with the state
        meta["definition"] = definition
    if include_fields:
        arrays.update({f"field/{k}": np.ascontiguousarray(v) for k, v in sim.fields().items()})
        for name in ("x", "y", "points", "cells"):
            if hasattr(sim.mesh, name):
                arrays[f"mesh/{name}"] = np.ascontiguousarray(
                    sim._be.asnumpy(getattr(sim.mesh, name)))
        meta["fields"] = {k: {"location": fi.location, "unit": fi.unit}
                          for k, fi in sim.field_infos.items()}
    meta["arrays"] = {k: {"shape": list(a.shape), "dtype": a.dtype.name, "sha256": _sha256(a)}
                      for k, a in arrays.items()}
    return meta, arrays


def write(sim, path, include_fields: bool = False) -> None:
    """Write the checkpoint atomically (core.files.atomic_write); an OSError (a full disk, no
    permission) becomes a ParameterError naming the file, and the previous file stays intact."""
    from .files import atomic_write
    meta, arrays = payload(sim, include_fields)
    try:
        with atomic_write(path) as f:  # no implicit ".npz" suffix: the user's name is kept
            np.savez(f, __meta__=np.array(json.dumps(meta)), **arrays)
    except OSError as e:
        raise ParameterError(f"cannot write checkpoint '{short_path(path)}': {e.strerror or e}; "
                             "the previous file (if any) is unchanged") from None


# ---- reading: the container ---------------------------------------------------------------------
def _kind_of(head: bytes) -> str:
    if head.startswith(b"PK\x03\x04"):
        return "is truncated or damaged (its zip directory is missing)"
    if head.startswith(b"\x93NUMPY"):
        return "is a single NumPy array (.npy), not a checkpoint"
    if head[:1] == b"\x80" or head[:1] in (b"(", b"]", b"}") and head.rstrip().endswith(b"."):
        return "looks like a Python pickle, which is never loaded; not a checkpoint"
    return "is not a pdestudio checkpoint (not an .npz archive)"


def _open(path: Path):
    shown = short_path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ParameterError(f"checkpoint '{shown}' does not exist") from None
    except OSError as e:
        raise ParameterError(f"checkpoint '{shown}' cannot be read: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ParameterError(f"checkpoint '{shown}' is not a regular file (a directory, device or "
                             "FIFO); allowed: a checkpoint .npz file")
    try:  # O_NONBLOCK: were the file swapped for a FIFO since the stat, open would not wait
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise ParameterError(f"checkpoint '{shown}' cannot be read: {e.strerror or e}") from None
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        f.close()
        raise ParameterError(f"checkpoint '{shown}' is not a regular file")
    return f


def _directory(f, size: int) -> None:
    """Refuse a file that is not a zip, or whose directory is larger than a checkpoint's, before
    the zip module parses it."""
    head = f.read(8)
    if size == 0:
        raise _Bad("is empty")
    f.seek(max(0, size - 22 - 65535))
    tail = f.read()
    i = tail.rfind(b"PK\x05\x06")
    if size < 22 or i < 0 or len(tail) - i < 22:
        raise _Bad(_kind_of(head))
    entries, cd_size = struct.unpack("<HL", tail[i + 10:i + 16])
    if entries > MAX_MEMBERS or cd_size > MAX_DIRECTORY:
        raise _Bad(f"declares {entries} arrays in a {cd_size}-byte zip directory; allowed: at "
                   f"most {MAX_MEMBERS} arrays")
    f.seek(0)


def _members(zf: zipfile.ZipFile, size: int) -> dict[str, zipfile.ZipInfo]:
    out: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in zf.infolist():
        name = info.filename
        if name in out:
            raise _Bad(f"holds the member '{short_repr(name)[1:-1]}' twice")
        if info.flag_bits & 1:
            raise _Bad(f"has the member '{short_repr(name)[1:-1]}' encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _Bad(f"has the member '{short_repr(name)[1:-1]}' compressed by method "
                       f"{info.compress_type}; allowed: stored or deflated (np.savez)")
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise _Bad(f"has the member '{short_repr(name)[1:-1]}' damaged (sizes disagree)")
        total += info.compress_size
        out[name] = info
    if total > size:
        raise _Bad("is damaged (its members are larger than the file)")
    return out


def _npy_header(fp, name: str):
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(
                fp, max_header_size=MAX_NPY_HEADER)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(
                fp, max_header_size=MAX_NPY_HEADER)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except _Bad:
        raise
    except Exception as e:  # ValueError, SyntaxError from a mangled header dict, ...
        raise _Bad(f"has array '{name}' with a malformed header ({_why(e)})") from None
    return shape, fortran, dtype


def _why(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return short_repr(text, 120)[1:-1]


def _read_meta(zf, members) -> dict:
    info = members.get("__meta__.npy")
    if info is None:
        raise _Bad("is not a pdestudio checkpoint (an .npz without the '__meta__' manifest)")
    if info.file_size > MAX_META:
        raise _Bad(f"has a {info.file_size}-byte manifest; allowed: at most {MAX_META} bytes")
    with zf.open(info) as fp:
        raw = fp.read(MAX_META + 1)
    fp = io.BytesIO(raw)
    shape, _, dtype = _npy_header(fp, "__meta__")
    if shape != () or dtype.kind != "U":
        raise _Bad(f"has a manifest of shape {shape} and dtype {dtype}; allowed: one text")
    body = fp.read()
    if len(body) != dtype.itemsize:
        raise _Bad("has a truncated manifest")
    text = np.frombuffer(body, dtype=dtype)[0]
    try:
        meta = json.loads(str(text), parse_constant=float)
    except (ValueError, RecursionError) as e:
        raise _Bad(f"has a manifest that is not JSON ({_why(e)})") from None
    if not isinstance(meta, dict):
        raise _Bad(f"has a manifest that is a {type(meta).__name__}; allowed: a JSON object")
    return meta


# ---- reading: the manifest ------------------------------------------------------------------------
# Parameters added with format version 2 whose new defaults compute something else than the
# version-1 release did: a version-1 checkpoint continues with the old computation.
LEGACY_CHOICES = {"euler-1d": {"scheme": "paper"}, "chemotaxis": {"scheme": "paper"}}
V1_KEYS = {"version", "model", "scenario", "dtype", "backend", "params", "t", "steps", "aux"}
V2_KEYS = V1_KEYS | {"format", "arrays", "fields", "definition"}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _text(meta: dict, key: str, limit: int = 200) -> str:
    v = meta.get(key)
    if not isinstance(v, str) or not v or len(v) > limit:
        raise _Bad(f"has '{key}' = {short_repr(v)}; allowed: a text of 1 to {limit} characters")
    return v


def _count(meta: dict, key: str, hi) -> int | float:
    v = meta.get(key)
    if not _is_number(v) or (key == "steps" and not isinstance(v, int)):
        kind = "an integer" if key == "steps" else "a number"
        raise _Bad(f"has '{key}' = {short_repr(v)}; allowed: {kind} in [0, {hi:g}]")
    if isinstance(v, float) and not math.isfinite(v):
        raise _Bad(f"has '{key}' = {v}, not finite; allowed: a finite number >= 0")
    if v < 0 or v > hi:
        raise _Bad(f"has '{key}' = {short_repr(v)}, out of range; allowed: [0, {hi:g}]")
    return v


def _mapping(meta: dict, key: str, *, numbers: bool, default=None) -> dict:
    v = meta.get(key, default)
    if not isinstance(v, dict):
        raise _Bad(f"has '{key}' = {short_repr(v)}; allowed: a JSON object")
    for k, x in v.items():
        if len(k) > 64:
            raise _Bad(f"has a name of {len(k)} characters in '{key}'; allowed: at most 64")
        ok = (_is_number(x) and math.isfinite(x)) if numbers else (
            x is None or isinstance(x, (bool, int, float)) or (isinstance(x, str) and len(x) < 4096))
        if not ok:
            allowed = "a finite number" if numbers else "a number, text, true/false or null"
            raise _Bad(f"has {key} '{short_repr(k)[1:-1]}' = {short_repr(x)}; allowed: {allowed}")
    return v


def _declared(meta: dict) -> dict[str, tuple]:
    """Version 2's array table: name -> (shape, dtype, sha256)."""
    table = meta.get("arrays")
    if not isinstance(table, dict) or len(table) > MAX_MEMBERS:
        raise _Bad(f"has 'arrays' = {short_repr(table)}; allowed: a JSON object of arrays")
    out = {}
    for name, d in table.items():
        what = f"array '{short_repr(name)[1:-1]}'"
        if not _NAME.fullmatch(name):
            raise _Bad(f"declares an {what}; allowed: names state/NAME, field/NAME, mesh/NAME")
        if not isinstance(d, dict) or set(d) != {"shape", "dtype", "sha256"}:
            raise _Bad(f"declares {what} as {short_repr(d)}; allowed: {{shape, dtype, sha256}}")
        shape, dtype, sha = d["shape"], d["dtype"], d["sha256"]
        if (not isinstance(shape, list) or len(shape) > 4 or not all(
                isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 2**40 for n in shape)):
            raise _Bad(f"declares {what} of shape {short_repr(shape)}; allowed: up to 4 sizes")
        if dtype not in ARRAY_DTYPES:
            raise _Bad(f"declares {what} of dtype {short_repr(dtype)}; allowed: "
                       + ", ".join(ARRAY_DTYPES))
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise _Bad(f"declares {what} with checksum {short_repr(sha)}; allowed: a SHA-256")
        out[name] = (tuple(shape), np.dtype(dtype), sha)
    return out


def manifest(meta: dict) -> dict:
    """The manifest's entries, type- and range-checked (raises _Bad)."""
    version = meta.get("version")
    if version is None:
        raise _Bad("has no format version: not a pdestudio checkpoint")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _Bad(f"has format version {short_repr(version)}; allowed: an integer")
    if version > VERSION:
        raise _Bad(f"was written by a newer pdestudio (format version {short_repr(version)}); "
                   f"this version reads formats {OLDEST} to {VERSION}")
    if version < OLDEST:
        raise _Bad(f"has format version {version}; allowed: {OLDEST} to {VERSION}")
    keys = V2_KEYS if version >= 2 else V1_KEYS
    unknown = sorted(set(meta) - keys)
    if unknown:
        raise _Bad(f"has the unknown manifest entry '{short_repr(unknown[0])[1:-1]}' (format "
                   f"version {version}); allowed: {', '.join(sorted(keys))}")
    if version >= 2 and meta.get("format") != FORMAT:
        raise _Bad(f"has format {short_repr(meta.get('format'))}; allowed: '{FORMAT}'")
    if "backend" in meta:
        _text(meta, "backend")
    fields = meta.get("fields", {})
    if not isinstance(fields, dict) or not all(
            isinstance(d, dict) and all(isinstance(x, str) and len(x) < 200 for x in d.values())
            for d in fields.values()):
        raise _Bad(f"has 'fields' = {short_repr(fields)}; allowed: {{name: {{location, unit}}}}")
    return {"version": version, "model": _text(meta, "model"),
            "scenario": _text(meta, "scenario"), "dtype": _text(meta, "dtype"),
            "params": _mapping(meta, "params", numbers=False),
            "t": float(_count(meta, "t", 1.7976931348623157e308)),
            "steps": int(_count(meta, "steps", MAX_STEPS)),
            "aux": _mapping(meta, "aux", numbers=True, default={}),
            "arrays": _declared(meta) if version >= 2 else None,
            "definition": _definition(meta)}


def _definition(meta: dict):
    d = meta.get("definition")
    if d is not None and not isinstance(d, dict):
        raise _Bad(f"has 'definition' = {short_repr(d)}; allowed: a model file's tables")
    return d


# ---- reading: the arrays ----------------------------------------------------------------------
def _expected(sim) -> dict[str, tuple]:
    """name -> (shape, dtype) of every array a checkpoint of `sim` may hold."""
    out = {f"state/{k}": (tuple(a.shape), np.dtype(a.dtype)) for k, a in sim.state.items()}
    for k in sim.field_infos:
        out[f"field/{k}"] = (sim.field_shape(k), None)
    for k in ("x", "y", "points", "cells"):
        if hasattr(sim.mesh, k):
            out[f"mesh/{k}"] = (tuple(np.shape(getattr(sim.mesh, k))), None)
    return out


def _nbytes(shape, dtype) -> int:
    return math.prod(shape) * dtype.itemsize


def _check_sizes(members: dict, declared: dict) -> None:
    """Every member is declared and every declared array is there, with an uncompressed size
    that its shape and dtype explain (checked before anything is decompressed)."""
    names = {n[:-4] for n in members if n.endswith(".npy")} - {"__meta__"}
    extra = sorted(set(members) - {"__meta__.npy"} - {n + ".npy" for n in declared})
    if extra:
        raise _Bad(f"holds the member '{short_repr(extra[0])[1:-1]}', which its manifest does not "
                   "declare")
    missing = sorted(set(declared) - names)
    if missing:
        raise _Bad(f"lacks the array '{missing[0]}' its manifest declares (truncated?)")
    for name, (shape, dtype, _) in declared.items():
        info, nbytes = members[name + ".npy"], _nbytes(shape, dtype)
        if not nbytes + 10 <= info.file_size <= nbytes + MAX_NPY_HEADER + 10:
            raise _Bad(f"has array '{name}' of {info.file_size} bytes uncompressed; its shape "
                       f"{shape} and dtype {dtype} take {nbytes} bytes")


def _match(sim, declared: dict) -> None:
    """The declared arrays are the ones `sim` (built from the file's parameters) holds."""
    expected = _expected(sim)
    for name in declared:
        if name not in expected:
            raise _Bad(f"holds the array '{name}', which {sim.model} with these parameters does "
                       "not have (another model's file?)")
    for name in expected:
        if name.startswith("state/") and name not in declared:
            raise _Bad(f"lacks the state array '{name[6:]}' of {sim.model}")
    for name, (shape, dtype, _) in declared.items():
        e_shape, e_dtype = expected[name]
        if shape != e_shape or (e_dtype is not None and dtype != e_dtype):
            raise _Bad(f"has array '{name}' of shape {shape} and dtype {dtype}; {sim.model} with "
                       f"these parameters holds shape {e_shape}"
                       + (f" and dtype {e_dtype}" if e_dtype is not None else ""))


def _read_array(zf, info, name: str, shape, dtype, sha: str | None, keep: bool = True):
    """The array of member `info` after checking its header against (shape, dtype) and its
    bytes against `sha` (None: version 1, the zip's CRC-32 only); None when not `keep` (the
    bytes are only checked, a chunk at a time)."""
    with zf.open(info) as fp:
        h_shape, fortran, h_dtype = _npy_header(fp, name)
        if h_shape != shape or h_dtype != dtype:
            raise _Bad(f"has array '{name}' of shape {h_shape} and dtype {h_dtype}; allowed: "
                       f"shape {shape} and dtype {dtype}")
        nbytes = _nbytes(shape, dtype)
        digest = hashlib.sha256()
        parts, left = [], nbytes
        while left > 0:
            chunk = fp.read(min(left, _CHUNK))
            if not chunk:
                raise _Bad(f"has array '{name}' cut short ({nbytes - left} of {nbytes} bytes)")
            left -= len(chunk)
            digest.update(chunk)
            if keep:
                parts.append(chunk)
        if fp.read(1):
            raise _Bad(f"has array '{name}' with bytes after its data")
    if sha is not None and digest.hexdigest() != sha:  # version 2 writes C order only
        raise _Bad(f"has array '{name}' that fails its SHA-256 check (modified or damaged)")
    if not keep:
        return None
    a = np.frombuffer(b"".join(parts), dtype=dtype)
    return a.reshape(shape[::-1]).T if fortran else a.reshape(shape)


def _v1_declared(members: dict, sim) -> dict:
    """Version 1 has no array table: the state arrays the simulation holds, found by name."""
    expected = _expected(sim)
    out = {}
    for member, info in members.items():
        name = member[:-4] if member.endswith(".npy") else member
        if name == "__meta__" or name.startswith(("field/", "mesh/")) and name in expected:
            continue
        if name not in expected:
            raise _Bad(f"holds the member '{short_repr(member)[1:-1]}', which {sim.model} with "
                       "these parameters does not have (another model's file?)")
        shape, dtype = expected[name]
        nbytes = _nbytes(shape, dtype)
        if not nbytes + 10 <= info.file_size <= nbytes + MAX_NPY_HEADER + 10:
            raise _Bad(f"has array '{name}' of {info.file_size} bytes uncompressed; {sim.model} "
                       f"holds shape {shape} and dtype {dtype} ({nbytes} bytes)")
        out[name] = (shape, dtype, None)
    for name in expected:
        if name.startswith("state/") and name not in out:
            raise _Bad(f"lacks the state array '{name[6:]}' of {sim.model}")
    return out


def _restore(sim, m: dict, state: dict) -> None:
    own = sim._aux_state()
    for k, v in m["aux"].items():
        if k not in own:
            raise _Bad(f"has the auxiliary value '{k}', which {sim.model} does not keep; allowed: "
                       + (", ".join(own) or "none"))
        if _is_number(own[k]) and own[k] > 0 and v <= 0:
            raise _Bad(f"has the auxiliary value '{k}' = {v:g}; allowed: a number > 0")
    for k, a in state.items():
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise _Bad(f"has state array '{k[6:]}' with non-finite values; allowed: finite")
    sim._restore_state({k[6:]: a for k, a in state.items()}, m["t"], m["steps"], m["aux"])
    # the physical bounds a run checks while stepping (a depth > 0, a density >= 0, ...): a state
    # outside them would stop in its first step, or diverge there
    from .checks import base_first_nonfinite
    if base_first_nonfinite(sim) is not None and sim._violation is not None:
        name, low, lo, lo_open = sim._violation
        raise _Bad(f"has '{name}' down to {low:g}; allowed: {name} {'>' if lo_open else '>='} "
                   f"{lo:g}")
    moves, dt = _clock_moves(sim)
    if not moves:
        step = f"a step of Δt = {dt:.6g}" if dt is not None else "a step"
        raise _Bad(f"has t = {sim.t:.6g}, where {step} cannot move the clock (t + Δt == t in "
                   f"double precision); allowed: a time at which the steps still count")


def _clock_moves(sim) -> tuple[bool, float | None]:
    """Whether a step of the loaded simulation moves its clock (issue 28: a file at t = 1e300
    loaded and then stepped for ever), and the step's size where the model holds it; otherwise
    one trial step, undone (a step that diverges says nothing about the clock)."""
    from . import clock
    from .errors import SimulationDiverged
    dt = sim._next_dt()
    if dt is not None:
        return clock.moves(sim.t, dt), dt
    snap = sim._snapshot()
    try:
        sim._steps_unchecked(1, None)
        return sim.t != snap[1], None
    except SimulationDiverged:
        return True, None
    finally:
        sim._restore(snap)


# ---- reading: the whole ---------------------------------------------------------------------------
def load(path, backend: str = "auto", model: str | None = None):
    """The simulation saved in the checkpoint at `path` (see the module docstring); `model`,
    when given, is the model the file must hold."""
    from .backend import BACKENDS
    from .registry import available_models, model_class
    if backend not in BACKENDS:
        raise ParameterError(f"backend {short_repr(backend)} is unknown; allowed: "
                             + ", ".join(BACKENDS))
    f = _open(Path(path))
    path = short_path(path)  # as messages show it
    try:
        with f:
            size = os.fstat(f.fileno()).st_size
            try:
                _directory(f, size)
                zf = zipfile.ZipFile(f)
                members = _members(zf, size)
                m = manifest(_read_meta(zf, members))
                if m["arrays"] is not None:
                    _check_sizes(members, m["arrays"])
            except (_Bad, ParameterError):
                raise
            except Exception as e:  # BadZipFile, EOFError, zlib.error, struct.error, ...
                raise _Bad(f"is truncated or damaged ({_why(e)})") from None
            if model is not None and m["model"] != model:
                raise _Bad(f"holds model '{m['model']}', not '{model}'")
            if m["definition"] is not None:
                from .registry import define
                try:
                    defined = define(m["definition"])
                except ParameterError as e:
                    raise _Bad(f"holds a model definition that cannot be used: {e}") from None
                if defined != m["model"]:
                    raise _Bad(f"holds a definition of another model than '{m['model']}'")
            if m["model"] not in available_models():
                raise _Bad(f"holds the unknown model '{m['model']}'; available models: "
                           + ", ".join(available_models()))
            params = m["params"]
            if m["version"] < 2:  # written before these choices existed: continue as it ran
                params = {**LEGACY_CHOICES.get(m["model"], {}), **params}
            try:
                sim = model_class(m["model"])(backend=backend, dtype=m["dtype"],
                                              scenario=m["scenario"], **params)
            except (ParameterError, MeshError) as e:
                raise ParameterError(f"checkpoint '{path}': {e}") from None
            declared = m["arrays"]
            if declared is None:
                declared = _v1_declared(members, sim)
            else:
                _match(sim, declared)
            try:
                state = {}
                for name, (shape, dtype, sha) in declared.items():
                    keep = name.startswith("state/")
                    a = _read_array(zf, members[name + ".npy"], name, shape, dtype, sha, keep)
                    if keep:
                        state[name] = a
            except _Bad:
                raise
            except Exception as e:
                raise _Bad(f"is truncated or damaged ({_why(e)})") from None
            _restore(sim, m, state)
            return sim
    except _Bad as e:
        raise ParameterError(f"checkpoint '{path}' {e}") from None
