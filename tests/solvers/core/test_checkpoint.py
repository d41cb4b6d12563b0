"""Checkpoints (core/checkpoint.py): restart continues identically; with include_fields the file is
also a data export that solvers.load reads back; every way a file can be wrong raises a one-line
ParameterError naming the file; nothing is executed or inflated; saves are atomic (kill -9)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers import ParameterError
from tests.fuzz import corrupt

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def saved(tmp_path):
    sim = solvers.create("euler-1d", backend="numpy", nx=64)
    sim.step(5)
    path = tmp_path / "good.npz"
    sim.save(path)
    return sim, path


def refused(path, match, **kw):
    with pytest.raises(ParameterError, match=match) as e:
        solvers.load(path, backend="numpy", **kw)
    msg = str(e.value)
    assert f"'{path}'" in msg and "\n" not in msg and len(msg) < 400, msg
    return msg


def test_include_fields_stores_fields_and_mesh_and_loads_back(tmp_path):
    sim = solvers.create("chemotaxis", backend="numpy", vertices=200)
    sim.step(5)
    path = tmp_path / "data.npz"
    sim.save(path, include_fields=True)
    with np.load(path, allow_pickle=False) as z:
        for name, values in sim.fields().items():
            np.testing.assert_array_equal(z[f"field/{name}"], values)
        np.testing.assert_array_equal(z["mesh/points"], sim.mesh.points)
        meta = json.loads(str(z["__meta__"]))
    assert meta["fields"]["cells"] == {"location": "vertex", "unit": ""}
    back = solvers.load(path, backend="numpy")
    assert back.steps == 5 and back.t == sim.t
    sim.step(3)
    back.step(3)
    for name, values in sim.fields().items():
        np.testing.assert_array_equal(back.fields()[name], values)


def test_manifest_has_version_and_checksums(saved):
    meta = corrupt.meta_of(saved[1])
    assert meta["format"] == "pdestudio-checkpoint" and meta["version"] == 2
    assert set(meta["arrays"]) == {"state/rho", "state/rhou", "state/E"}
    assert all(len(d["sha256"]) == 64 for d in meta["arrays"].values())
    assert meta["aux"]["dt"] > 0  # Euler's fixed step travels with the state


def test_version_1_files_of_the_previous_release_still_load(saved, tmp_path):
    sim, _ = saved
    meta = {"version": 1, "model": sim.model, "scenario": sim.scenario_name, "dtype": sim.dtype,
            "backend": sim.backend, "params": dict(sim.params), "t": sim.t, "steps": sim.steps,
            "aux": sim._aux_state()}
    old = tmp_path / "v1.npz"
    with open(old, "wb") as f:  # exactly what the previous release's save wrote
        np.savez(f, __meta__=np.array(json.dumps(meta)),
                 **{f"state/{k}": v for k, v in sim.state.items()})
    back = solvers.load(old, backend="numpy")
    sim.step(4)
    back.step(4)
    assert (back.t, back.steps) == (sim.t, sim.steps)
    np.testing.assert_array_equal(back.fields()["rho"], sim.fields()["rho"])
    # version 1 gets every check but the checksum: its arrays are still shape-checked
    corrupt.with_array(old, tmp_path / "v1bad.npz", "state/rho", np.zeros(7), fix_manifest=False)
    refused(tmp_path / "v1bad.npz", r"array 'state/rho' of \d+ bytes uncompressed")


def test_version_1_files_continue_with_the_scheme_they_ran(tmp_path):
    """A version-1 euler-1d checkpoint has no 'scheme' (the release knew only the paper's): it
    continues with scheme=paper, bit for bit as that release would, not with today's default."""
    sim = solvers.create("euler-1d", backend="numpy", nx=64, scheme="paper")
    sim.step(5)
    params = {k: v for k, v in sim.params.items() if k not in ("scheme", "boundary", "L", "x0")}
    meta = {"version": 1, "model": sim.model, "scenario": sim.scenario_name, "dtype": sim.dtype,
            "backend": sim.backend, "params": params, "t": sim.t, "steps": sim.steps,
            "aux": sim._aux_state()}
    old = tmp_path / "v1.npz"
    with open(old, "wb") as f:
        np.savez(f, __meta__=np.array(json.dumps(meta)),
                 **{f"state/{k}": v for k, v in sim.state.items()})
    back = solvers.load(old, backend="numpy")
    assert back.params["scheme"] == "paper"
    sim.step(4)
    back.step(4)
    np.testing.assert_array_equal(back.fields()["rho"], sim.fields()["rho"])
    assert solvers.create("euler-1d", backend="numpy", nx=64).params["scheme"] == "muscl-hllc"


def test_not_checkpoints(tmp_path):
    cases = {"empty.npz": b"", "text.npz": b"hello world\n", "pickle.npz": b"\x80\x04K\x01.",
             "array.npz": None, "plain.npz": None}
    for name, data in cases.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)
    np.save(tmp_path / "array.npy", np.zeros(3))
    os.replace(tmp_path / "array.npy", tmp_path / "array.npz")
    np.savez(tmp_path / "plain.npz", a=np.zeros(3))
    refused(tmp_path / "empty.npz", "is empty")
    refused(tmp_path / "text.npz", "not an .npz archive")
    refused(tmp_path / "pickle.npz", "pickle, which is never loaded")
    refused(tmp_path / "array.npz", r"single NumPy array \(.npy\)")
    refused(tmp_path / "plain.npz", "without the '__meta__' manifest")
    refused(tmp_path / "nosuch.npz", "does not exist")
    refused(tmp_path, "not a regular file")
    os.mkfifo(tmp_path / "fifo.npz")
    t0 = time.perf_counter()
    refused(tmp_path / "fifo.npz", "not a regular file")  # never waits for a writer
    assert time.perf_counter() - t0 < 1
    os.symlink("/dev/zero", tmp_path / "zero.npz")
    refused(tmp_path / "zero.npz", "not a regular file")


def test_a_pickled_array_is_never_unpickled(saved, tmp_path):
    _, path = saved
    evil = np.array([print], dtype=object)
    corrupt.with_array(path, tmp_path / "obj.npz", "state/rho", evil)
    refused(tmp_path / "obj.npz", "dtype 'object'")
    corrupt.with_array(path, tmp_path / "obj2.npz", "state/rho", evil, fix_manifest=False)
    refused(tmp_path / "obj2.npz", "bytes uncompressed|malformed|dtype")


def test_truncated_files(saved, tmp_path):
    data = saved[1].read_bytes()
    for cut in (1, 30, 200, len(data) // 2, len(data) - 23, len(data) - 1):
        corrupt.truncate(saved[1], tmp_path / "cut.npz", cut)
        refused(tmp_path / "cut.npz", "truncated or damaged|not an .npz")


def test_every_bit_flip_is_refused_or_harmless(saved, tmp_path):
    """A flipped bit is caught (CRC-32, SHA-256, the checks) or lands where it changes nothing
    (e.g. a timestamp in a zip header): the state loaded is then the one saved."""
    sim, path = saved
    size = path.stat().st_size
    rng = np.random.default_rng(1)
    caught = 0
    for pos in rng.choice(size, 150, replace=False):
        corrupt.flip_bit(path, tmp_path / "flip.npz", int(pos), int(rng.integers(8)))
        try:
            back = solvers.load(tmp_path / "flip.npz", backend="numpy")
        except ParameterError as e:
            assert "flip.npz" in str(e) and "\n" not in str(e)
            caught += 1
            continue
        assert (back.t, back.steps) == (sim.t, sim.steps)
        for k, v in sim.state.items():
            np.testing.assert_array_equal(back.state[k], v)
    assert caught > 120


def test_modified_array_with_the_old_checksum_is_refused(saved, tmp_path):
    _, path = saved
    corrupt.with_array(path, tmp_path / "m.npz", "state/rho", np.full(64, 2.0), fix_manifest=False)
    refused(tmp_path / "m.npz", "fails its SHA-256 check")


@pytest.mark.parametrize("key,value,match", [
    ("t", "1.5", "'t' = '1.5'; allowed: a number"),
    ("t", [1], "'t' = \\[1\\]"),
    ("t", None, "'t' = None"),
    ("t", float("nan"), "not finite"),
    ("t", float("inf"), "not finite"),
    ("t", -1e300, "out of range"),
    ("t", 10**400, "out of range"),
    ("steps", -1, "out of range"),
    ("steps", 1.5, "allowed: an integer"),
    ("steps", True, "allowed: an integer"),
    ("steps", 2**53 + 1, "out of range"),
    ("steps", 1e300, "allowed: an integer"),
    ("model", 5, "'model' = 5"),
    ("model", "nosuch", "unknown model 'nosuch'"),
    ("model", "heat-1d", "heat-1d: unknown scenario 'sod'"),
    ("scenario", "nosuch", "unknown scenario 'nosuch'"),
    ("dtype", "float16", "dtype 'float16' is unknown"),
    ("dtype", "float32", "dtype float64; euler-1d with these parameters holds shape \\(64,\\) and "
                         "dtype float32"),
    ("params", "nx=4", "'params' = 'nx=4'"),
    ("params", {"nx": [64]}, "params 'nx' = \\[64\\]"),
    ("params", {"nx": {"a": {"b": 1}}}, "params 'nx'"),
    ("params", {"nx": 10**30}, "parameter 'nx' = 1000000000000000000000000000000 is out of range"),
    ("params", {"nx": -3}, "parameter 'nx' = -3 is out of range"),
    ("params", {"bogus": 1}, "unknown parameter 'bogus'"),
    ("params", {"nx": 32}, "holds shape \\(32,\\)"),
    ("aux", {"dt": "x"}, "aux 'dt' = 'x'"),
    ("aux", {"dt": -1.0}, "'dt' = -1; allowed: a number > 0"),
    ("aux", {"tau": 1.0}, "auxiliary value 'tau', which euler-1d does not keep"),
    ("aux", [], "'aux' = \\[\\]"),
    ("version", 3, "newer pdestudio \\(format version 3\\)"),
    ("version", "2", "format version '2'"),
    ("version", 0, "format version 0; allowed: 1 to 2"),
    ("version", None, "no format version"),
    ("format", "other", "has format 'other'"),
    ("arrays", {"state/rho": [1]}, "declares array 'state/rho'"),
    ("arrays", "x", "'arrays' = 'x'"),
    ("extra", 1, "unknown manifest entry 'extra'"),
])
def test_bad_metadata_is_named(saved, tmp_path, key, value, match):
    _, path = saved
    meta = corrupt.meta_of(path)
    if key == "params" and isinstance(value, dict):
        meta["params"] = {**meta["params"], **value}
    elif value is None:
        meta.pop(key)
        if key != "version":
            meta[key] = None
    else:
        meta[key] = value
    corrupt.with_meta(path, tmp_path / "m.npz", meta)
    refused(tmp_path / "m.npz", match)


@pytest.mark.parametrize("text,match", [
    ("[" * 100000 + "]" * 100000, "not JSON"),
    ('{"version": ' + "9" * 5000 + "}", "not JSON"),
    ("[1, 2]", "is a list"),
    ("", "not JSON"),
])
def test_manifest_that_is_not_an_object(saved, tmp_path, text, match):
    corrupt.with_meta(saved[1], tmp_path / "m.npz", text)
    refused(tmp_path / "m.npz", match)


def test_another_models_file_and_the_model_keyword(saved, tmp_path):
    _, path = saved
    refused(path, "holds model 'euler-1d', not 'heat-1d'", model="heat-1d")
    assert solvers.load(path, backend="numpy", model="euler-1d").model == "euler-1d"
    other = solvers.create("heat-1d", backend="numpy", nx=64)
    other.save(tmp_path / "heat.npz")
    meta = corrupt.meta_of(tmp_path / "heat.npz")
    meta["model"], meta["scenario"], meta["params"] = "euler-1d", "sod", corrupt.meta_of(path)["params"]
    corrupt.with_meta(tmp_path / "heat.npz", tmp_path / "mixed.npz", meta)
    refused(tmp_path / "mixed.npz", "array 'state/T', which euler-1d with these parameters")


def test_non_finite_state_is_refused(saved, tmp_path):
    bad = np.ones(64)
    bad[3] = np.nan
    corrupt.with_array(saved[1], tmp_path / "nan.npz", "state/rho", bad)
    refused(tmp_path / "nan.npz", "state array 'rho' with non-finite values")


def test_compression_bombs_are_refused_without_inflating(saved, tmp_path):
    _, path = saved
    for honest in (True, False):
        corrupt.bomb(path, tmp_path / "bomb.npz", "state/rho", 64 << 20, honest=honest)
        assert (tmp_path / "bomb.npz").stat().st_size < 1 << 20
        t0 = time.perf_counter()
        msg = refused(tmp_path / "bomb.npz", "bytes uncompressed|damaged|malformed")
        assert time.perf_counter() - t0 < 0.5, msg
    corrupt.lie_about_size(path, tmp_path / "lie.npz", "state/rho.npy", 10**9)
    refused(tmp_path / "lie.npz", "damaged")


def test_a_member_not_in_the_manifest_is_refused(saved, tmp_path):
    parts = corrupt.members(saved[1])
    parts["state/extra.npy"] = corrupt.npy(np.zeros(3))
    corrupt.write_zip(tmp_path / "x.npz", parts)
    refused(tmp_path / "x.npz", "'state/extra.npy', which its manifest does not declare")
    del parts["state/extra.npy"], parts["state/E.npy"]
    corrupt.write_zip(tmp_path / "y.npz", parts)
    refused(tmp_path / "y.npz", "lacks the array 'state/E'")


def test_full_disk_keeps_the_previous_checkpoint(saved, tmp_path, monkeypatch):
    sim, path = saved
    before = path.read_bytes()
    sim.step(2)

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(ParameterError, match=f"cannot write checkpoint '{path}': No space left"):
        sim.save(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.npz"]  # no temporary left


SAVER = """
import sys
from pdestudio import solvers
sim = solvers.create("heat-1d", backend="numpy", nx=1_000_000)
print("ready", flush=True)
while True:
    sim.step(1)
    sim.save(sys.argv[1])
"""


def test_kill_9_during_saves_never_damages_the_previous_checkpoint(tmp_path):
    """A process saving an 8 MB checkpoint over and over is killed with SIGKILL at random
    moments; each time the file still loads (the previous or a new complete state) and no
    visible temporary file remains (temporary names start with '.')."""
    path = tmp_path / "state.npz"
    solvers.create("heat-1d", backend="numpy", nx=1_000_000).save(path)
    rng = np.random.default_rng(7)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    for attempt in range(4):
        p = subprocess.Popen([sys.executable, "-c", SAVER, str(path)], stdout=subprocess.PIPE,
                             env=env)
        assert p.stdout.readline().strip() == b"ready"
        time.sleep(float(rng.uniform(0.05, 0.4)))
        p.send_signal(signal.SIGKILL)
        p.wait()
        sim = solvers.load(path, backend="numpy")
        assert sim.model == "heat-1d" and sim.steps >= 0
        assert [f.name for f in tmp_path.iterdir() if not f.name.startswith(".")] == ["state.npz"]
    assert sim.steps > 0  # the saves did replace the file in between


def test_saves_replace_only_regular_files(saved, tmp_path):
    """A rename over a device would replace the device node itself (as root: /dev/full)."""
    sim, path = saved
    os.mkfifo(tmp_path / "pipe.npz")
    (tmp_path / "dir.npz").mkdir()
    for target in (tmp_path / "pipe.npz", tmp_path / "dir.npz"):
        with pytest.raises(ParameterError, match="is not a regular file"):
            sim.save(target)
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())
    os.symlink(path, tmp_path / "link.npz")
    sim.step(1)
    sim.save(tmp_path / "link.npz")  # the link's target is replaced, the link kept
    assert (tmp_path / "link.npz").is_symlink()
    assert solvers.load(path, backend="numpy").steps == sim.steps
