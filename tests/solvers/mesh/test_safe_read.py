"""Mesh files are read so that they cannot hang, exhaust the memory or crash the caller
(mesh/safe_read.py, mesh/reader_worker.py): documented formats only, regular files only, header
counts checked against the file size, no XML entities, bounded inflation, a worker process with a
timeout that is killed and replaced; non-manifold vertices and huge coordinates refused."""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pdestudio.solvers import MeshError
from pdestudio.solvers.mesh import icosphere, read_mesh, safe_read, validate, write_mesh
from tests.fuzz import meshes

ROOT = Path(__file__).resolve().parents[3]


def refused(path, match, **kw):
    t0 = time.perf_counter()
    with pytest.raises(MeshError, match=match) as e:
        read_mesh(path, **kw)
    msg = str(e.value)
    assert Path(path).name in msg and "\n" not in msg and len(msg) < 400, msg
    return time.perf_counter() - t0


@pytest.mark.parametrize("ext", ["wkt", "inp", "dat", "mdpa", "bdf", "xdmf", "med", "txt", ""])
def test_undocumented_formats_are_refused_with_the_list(tmp_path, ext):
    p = tmp_path / f"m.{ext}" if ext else tmp_path / "m"
    p.write_text("POLYGON((0 0, 1 0, 0 1, 0 0))\n")
    refused(p, r"allowed: OBJ, PLY, STL, OFF, VTK, VTU, Gmsh \(.msh\)")


def test_only_regular_files_are_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe.obj")
    assert refused(tmp_path / "pipe.obj", "not a regular file") < 1  # never waits for a writer
    (tmp_path / "dir.ply").mkdir()
    refused(tmp_path / "dir.ply", "not a regular file")
    os.symlink("/dev/zero", tmp_path / "zero.stl")
    refused(tmp_path / "zero.stl", r"not a regular file .*'/dev/zero'")
    (tmp_path / "empty.off").write_bytes(b"")
    refused(tmp_path / "empty.off", "is empty")
    os.symlink(tmp_path / "nowhere.obj", tmp_path / "dangling.obj")
    refused(tmp_path / "dangling.obj", "does not exist")
    write_mesh(tmp_path / "real.obj", icosphere(1))
    os.symlink(tmp_path / "real.obj", tmp_path / "link.obj")
    assert read_mesh(tmp_path / "link.obj").n_cells == 80  # a link to a mesh file is fine


def test_size_limit(tmp_path, monkeypatch):
    write_mesh(tmp_path / "s.obj", icosphere(1))
    monkeypatch.setattr(safe_read, "MAX_BYTES", 1000)
    refused(tmp_path / "s.obj", r"has [\d,]+ bytes; allowed: at most 1,000")


@pytest.mark.parametrize("ext,kind", [(e, k) for e, k, _ in meshes.header_bombs(
    np.random.default_rng(0))])
def test_forged_header_counts_are_refused_before_reading(tmp_path, ext, kind):
    data = dict((k, d) for _, k, d in meshes.header_bombs(np.random.default_rng(0)))[kind]
    (tmp_path / f"b.{ext}").write_bytes(data)
    assert refused(tmp_path / f"b.{ext}", "declares|no vertex and face counts|no 'end_header'|"
                   "cannot be read|no triangles") < 5


def test_an_off_file_without_counts_does_not_hang(tmp_path):
    """meshio's OFF reader loops forever at the end of such a file; the prescan refuses it."""
    (tmp_path / "x.off").write_text("OFF\n# nothing else\n")
    assert refused(tmp_path / "x.off", "has no vertex and face counts after 'OFF'") < 5


@pytest.mark.parametrize("kind,data", meshes.xml_tricks())
def test_xml_entities_are_refused(tmp_path, kind, data):
    (tmp_path / "x.vtu").write_bytes(data)
    refused(tmp_path / "x.vtu", r"declares a DTD or XML entities")


@pytest.mark.parametrize("lie", [False, True])
def test_vtu_compression_bombs_stop_at_the_budget(tmp_path, lie):
    (tmp_path / "b.vtu").write_bytes(meshes.vtu_bomb(256 << 20, lie=lie))
    assert (tmp_path / "b.vtu").stat().st_size < 1 << 20
    refused(tmp_path / "b.vtu", "inflates to more than|declares .* points, more than its "
            "compressed data may inflate to")


def test_a_read_that_takes_too_long_is_stopped_and_the_reader_replaced(tmp_path):
    big = icosphere(4)  # 5,120 faces of ASCII OBJ: longer than 1 ms to parse
    write_mesh(tmp_path / "big.obj", big)
    read_mesh(tmp_path / "big.obj")  # the worker is up
    pid = safe_read._worker.proc.pid
    refused(tmp_path / "big.obj", r"reading '.*big.obj' took longer than 0.001 s", timeout=0.001)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the stuck worker was killed
    assert read_mesh(tmp_path / "big.obj").n_cells == big.n_cells  # a new one reads the file


def test_a_dead_worker_is_replaced(tmp_path):
    write_mesh(tmp_path / "s.ply", icosphere(1))
    read_mesh(tmp_path / "s.ply")
    safe_read._worker.proc.kill()
    safe_read._worker.proc.wait()
    assert read_mesh(tmp_path / "s.ply").n_cells == 80


def test_the_spawn_worker_of_the_frozen_app_reads_too(tmp_path):
    write_mesh(tmp_path / "s.vtu", icosphere(1))
    (tmp_path / "x.off").write_text("OFF\n")
    code = ("from pdestudio.solvers.mesh import read_mesh\n"
            "from pdestudio.solvers import MeshError\n"
            f"print(read_mesh({str(tmp_path / 's.vtu')!r}).n_cells)\n"
            f"try:\n    read_mesh({str(tmp_path / 'x.off')!r})\n"
            "except MeshError as e:\n    print('refused', e)\n")
    env = {**os.environ, "PDESTUDIO_MESH_WORKER": "spawn"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "80" and "refused" in r.stdout and "counts" in r.stdout


def test_non_manifold_vertices_and_huge_coordinates():
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [-1, 0, 1], [0, -1, 1]], float)
    with pytest.raises(MeshError, match=r"vertex 0 is non-manifold \(its faces form 2 separate "
                       r"fans"):
        validate(pts, [[0, 1, 2], [0, 3, 4]], "bowtie")
    with pytest.raises(MeshError, match=r"vertex 1 has a coordinate of magnitude 1e\+200"):
        validate(pts * [[1], [1e200], [1], [1], [1]], [[0, 1, 2]], "huge")
    # a graded mesh: a tiny but well-shaped face next to large ones is not degenerate
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    m = validate(np.concatenate([tri, 2 + 1e-5 * tri]), [[0, 1, 2], [3, 4, 5]], "graded")
    assert m.n_cells == 2
    with pytest.raises(MeshError, match=r"face 1 is degenerate \(area .* collinear"):
        validate(np.concatenate([tri, [[2, 0, 0], [3, 0, 0], [4, 1e-7, 0]]]),
                 [[0, 1, 2], [3, 4, 5]], "sliver")
