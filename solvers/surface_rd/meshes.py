"""A model's mesh set-up, kept for the next simulation on the same mesh (docs/MODELS.md §2.2):
the mesh of the scenario, its vertex order, the renumbered mesh and its float64 operators
(`SurfaceOperators`, whose lazily built parts, device copies and the fused lattice tables then
serve every simulation on that mesh in this process).

Building them takes ~50 ms for the default 20,000-vertex rectangle (the cotangent Laplacian, the
reverse Cuthill–McKee order, the lattice test) and a mesh file is read in a separate process
with a time limit (0.15–0.3 s for the same rectangle as an OBJ file): a sweep's worker, which makes one simulation or ensemble a task, or the
window, which makes one each time the model is set up again, did this work each time. Here the
last MAX_KEPT set-ups of at most MAX_VERTICES vertices are kept, keyed by what determines them:
the scenario, `vertices` and `renumber` for a generated mesh; for a mesh file its resolved path,
size and modification time (a file written again is read again). Everything kept is read-only to the simulations that
share it. PDESTUDIO_MESH_CACHE=0 turns the keeping off (every simulation builds its own).
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from ..mesh.renumber import inverse, vertex_order
from ..mesh.triangles import TriangleMesh
from . import scenarios
from .reference import SurfaceOperators

MAX_KEPT = 2  # set-ups kept (the least recently used goes first)
# only meshes up to this many vertices are kept: a kept set-up holds ~1 KB of host memory a
# vertex after its simulations are gone (the rectangle with its operators, λ_max and lattice
# test, tracemalloc: 262 MB at 2^18 vertices, built in 0.68 s; 1.04 GB at 2^20, 6.8 s)
MAX_VERTICES = 2**18

_kept: OrderedDict = OrderedDict()
_lock = threading.Lock()


class MeshSetup(NamedTuple):
    mesh: TriangleMesh            # in its own numbering
    order: np.ndarray | None      # internal position -> vertex (None: as given)
    inverse: np.ndarray | None    # vertex -> internal position
    imesh: TriangleMesh           # renumbered
    ops: SurfaceOperators         # of imesh, float64


def _key(scenario: str, p) -> tuple | None:
    """What the set-up depends on, or None where it cannot be told (not kept)."""
    if scenario == "file":
        try:
            path = os.path.realpath(p["mesh"])
            st = os.stat(path)
        except (OSError, TypeError, ValueError):
            return None  # (the build reports what is wrong with the path)
        return ("file", path, st.st_size, st.st_mtime_ns, p["renumber"])
    if p["mesh"]:
        return None  # (the build refuses a mesh file outside scenario 'file')
    return ("generated", scenario, int(p["vertices"]), p["renumber"])


def _read_only(a):
    if a is not None:
        a.flags.writeable = False
    return a


def _build(model: str, scenario: str, p) -> MeshSetup:
    mesh = scenarios.build_mesh(model, scenario, p)  # (its arrays are read-only)
    order = vertex_order(mesh, p["renumber"])
    imesh = mesh if order is None else mesh.permuted(vertex_order=order)
    return MeshSetup(mesh, _read_only(order), _read_only(None if order is None else
                                                         inverse(order)),
                     imesh, SurfaceOperators(imesh))


def mesh_setup(model: str, scenario: str, p) -> MeshSetup:
    """The set-up of `scenario` with parameters `p`: a kept one where the same mesh was set up
    before in this process, else built (and kept)."""
    key = _key(scenario, p) if os.environ.get("PDESTUDIO_MESH_CACHE", "1") != "0" else None
    if key is not None:
        with _lock:
            s = _kept.get(key)
            if s is not None:
                _kept.move_to_end(key)
                return s
    s = _build(model, scenario, p)
    if key is not None and s.mesh.n_vertices <= MAX_VERTICES:
        with _lock:
            _kept[key] = s
            while len(_kept) > MAX_KEPT:
                _kept.popitem(last=False)
    return s


def clear() -> None:
    """Forget every kept set-up (their memory, host and device, goes once no simulation
    holds them)."""
    with _lock:
        _kept.clear()
