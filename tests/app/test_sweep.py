"""`pdestudio sweep` (issue 19): a product grid run on Dask distributed — the default local
cluster and an external scheduler on 127.0.0.1 — with a results table that matches solo runs,
reruns that skip finished members, diverged members as rows with their reason, a contact sheet
with one labelled tile per member, Ctrl-C that keeps finished members, and clean errors."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from pdestudio import solvers
from pdestudio.app.sweep import members as run
from pdestudio.app.sweep import spec as specs
from pdestudio.app.sweep.thumbs import BG, SIZE

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
GS = ["gray-scott", "--vary", "F=0.03:0.05:3", "--vary", "k=0.06,0.062", "--set",
      "vertices=300", "--backend", "numpy"]


def sweep(*args, check=True, timeout=240):
    p = subprocess.run([sys.executable, "-m", "pdestudio", "sweep", *args, "--json"],
                       capture_output=True, text=True, env=ENV, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    if check:
        assert p.returncode == 0, p.stderr
    return p, (json.loads(p.stdout) if p.returncode in (0, 1) and p.stdout.strip() else None)


def table(out):
    return pq.read_table(Path(out) / "results.parquet").to_pylist()


def test_local_cluster_sweep_rows_match_solo_runs_and_reruns_skip(tmp_path):
    out = tmp_path / "gs"
    _, summary = sweep(*GS, "--until", "15", "--out", str(out), "--workers", "2")
    assert summary["members"] == 6 and summary["ran"] == 6 and summary["skipped"] == 0
    rows = table(out)
    assert [r["member"] for r in rows] == list(range(6))
    assert [(r["F"], r["k"]) for r in rows] == [(f, k) for f in (0.03, 0.04, 0.05)
                                                for k in (0.06, 0.062)]
    for r in (rows[1], rows[4]):  # two members against a direct run
        sim = solvers.create("gray-scott", backend="numpy", vertices=300, F=r["F"], k=r["k"])
        sim.advance(15.0)
        assert r["t"] == sim.t == 15.0 and r["steps"] == sim.steps and not r["diverged"]
        for name, v in sim.quantities().items():
            assert r[f"q:{name}"] == v
        back = solvers.load(out / r["checkpoint"], backend="numpy")
        assert back.t == 15.0 and np.array_equal(back.state["v"], sim.state["v"])
    stamps = {f: f.stat().st_mtime_ns for f in out.glob("members/*/row.json")}
    _, again = sweep(*GS, "--until", "15", "--out", str(out), "--workers", "2")
    assert again["skipped"] == 6 and again["ran"] == 0
    assert stamps == {f: f.stat().st_mtime_ns for f in out.glob("members/*/row.json")}
    p, _ = sweep(*GS, "--until", "16", "--out", str(out), check=False)
    assert p.returncode == 2 and "holds another sweep" in p.stderr and "until" in p.stderr


def test_contact_sheet_has_a_tile_per_member_in_the_parameter_grid(tmp_path):
    out = tmp_path / "gs"
    sweep(*GS, "--steps", "30", "--out", str(out), "--workers", "1")
    sheet = np.asarray(Image.open(out / "contact.png").convert("RGB")).astype(int)
    margin, head, label_h = 6, 30, 26  # the layout of thumbs.contact_sheet
    assert sheet.shape[1] == margin + 2 * (SIZE + margin)  # k across (2 values)
    assert sheet.shape[0] == head + margin + 3 * (SIZE + label_h + margin)  # F down (3)
    for r in range(3):
        for c in range(2):
            x, y = margin + c * (SIZE + margin), head + margin + r * (SIZE + label_h + margin)
            tile = sheet[y:y + SIZE, x:x + SIZE]
            thumb = np.asarray(Image.open(out / f"members/{2 * r + c:04d}/thumb.png"))
            assert np.array_equal(tile, thumb.astype(int)), (r, c)
            assert (np.abs(tile - BG).sum(axis=2) > 30).mean() > 0.2  # a picture, not background
            label = sheet[y + SIZE + 2:y + SIZE + 14, x:x + SIZE]
            assert (label.max(axis=2) > 150).any()  # the label's text


def test_a_diverging_member_is_a_row_with_its_reason(tmp_path):
    out = tmp_path / "cx"
    # (alpha = 5 lies below the Turing threshold: that member stays near the homogeneous state;
    # at 80 the paper's scheme takes the cell density below 0, which stops the member)
    _, summary = sweep("chemotaxis", "--vary", "alpha=5,80", "--set", "scheme=paper",
                       "--set", "vertices=300", "--backend", "numpy", "--until", "5",
                       "--out", str(out), "--workers", "1")
    assert summary["diverged"] == 1 and not summary["failed"]
    ok, bad = table(out)
    assert not ok["diverged"] and ok["t"] == 5.0
    assert bad["diverged"] and ("non-finite" in bad["reason"] or "below its bound" in
                                bad["reason"]) and 0 < bad["t"] < 5
    assert (out / bad["checkpoint"]).is_file()  # the last state within every bound is kept


def test_bad_vary_is_one_clean_error(tmp_path):
    for vary, needle in (("F=2:3:3", "'F'"), ("nope=1,2", "unknown parameter 'nope'"),
                         ("F=0.1:0.2", "START:STOP:COUNT"), ("F", "malformed")):
        p, _ = sweep("gray-scott", "--vary", vary, "--steps", "1", "--out",
                     str(tmp_path / "x"), check=False)
        assert p.returncode == 2 and needle in p.stderr, (vary, p.stderr)
        assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sweep_on_an_external_scheduler(tmp_path):
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                               "127.0.0.1", "--port", str(port), "--no-dashboard"], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", addr,
                                       "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                                      env=ENV, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        out = tmp_path / "heat"
        _, summary = sweep("heat-1d", "--vary", "nx=32,64", "--vary", "mode=1,2,3",
                           "--backend", "numpy", "--until", "0.01", "--out", str(out),
                           "--scheduler", addr)
        assert summary["ran"] == 6 and not summary["failed"]
        rows = table(out)
        assert len(rows) == 6 and all(r["t"] == 0.01 for r in rows)
        r = rows[5]  # nx=64, mode=3 against a direct run
        sim = solvers.create("heat-1d", backend="numpy", nx=64, mode=3)
        sim.advance(0.01)
        assert (r["nx"], r["mode"], r["steps"]) == (64, 3, sim.steps)
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(20)


def test_ctrl_c_keeps_finished_members_and_a_rerun_finishes(tmp_path):
    out = tmp_path / "gs"
    args = ["gray-scott", "--vary", "F=0.02:0.06:12", "--set", "vertices=1500",
            "--backend", "numpy", "--until", "60", "--out", str(out), "--workers", "1"]
    # SIGINT as in a terminal, whatever the runner's disposition (a background job's is
    # "ignored", inherited, and Python then raises no KeyboardInterrupt)
    p = subprocess.Popen([sys.executable, "-m", "pdestudio", "sweep", *args], env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.time()
    while not list(out.glob("members/*/row.json")) and time.time() - t0 < 120:
        time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    done = sorted(out.glob("members/*/row.json"))
    assert 1 <= len(done) < 12
    assert len(table(out)) == len(done)  # the table was rebuilt from the finished rows
    for f in done:
        row = json.loads(f.read_text())
        assert solvers.load(out / row["checkpoint"], backend="numpy").t == 60.0
    _, summary = sweep(*args)
    assert summary["skipped"] == len(done) and summary["ran"] == 12 - len(done)
    assert len(table(out)) == 12


def test_members_sharing_a_mesh_run_as_one_ensemble_task(tmp_path):
    spec = specs.make_spec("gray-scott", None, {"vertices": 400},
                           [("F", [0.03, 0.04]), ("k", [0.06, 0.062])], "numpy", "float64",
                           12.0, None)
    assert run.groups(spec, [0, 1, 2, 3], gpu=True) == [[0, 1, 2, 3]]
    assert run.groups(spec, [0, 1, 2, 3], gpu=False) == [[0], [1], [2], [3]]
    heat = dict(spec, model="heat-1d", vary=[["nx", [32, 64]]])
    assert run.groups(heat, [0, 1], gpu=True) == [[0], [1]]  # no ensembles: alone
    specs.check_folder(tmp_path, spec)
    grouped = run.run_group(spec, [0, 3], str(tmp_path))
    solo = run.run_member(spec, 3, str(tmp_path / "solo"))
    a = grouped[1]
    assert a["member"] == 3 and (a["F"], a["k"]) == (0.04, 0.062)
    assert (a["t"], a["steps"]) == (solo["t"], solo["steps"])
    assert {k: v for k, v in a.items() if k.startswith("q:")} == \
        {k: v for k, v in solo.items() if k.startswith("q:")}


def test_thin_group_rows_are_those_of_installed_members_synced_once(tmp_path, monkeypatch):
    """Without outputs a group's rows take their numbers from the ensemble (no member
    installed): the same row files as with the members installed, written without an fsync
    each and synced once for the group."""
    spec = specs.make_spec("gray-scott", None, {"vertices": 400},
                           [("F", [0.03, 0.04]), ("k", [0.06, 0.062])], "numpy", "float32",
                           None, 7)
    full = run.run_group(spec, [0, 1, 2, 3], str(tmp_path / "full"))
    synced, fsync = [], os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append("fsync") or fsync(fd))
    monkeypatch.setattr(run, "sync_all", lambda paths: synced.append(sorted(paths)))
    thin = run.run_group(spec, [0, 1, 2, 3], str(tmp_path / "thin"), ())
    assert synced == [sorted(tmp_path / "thin" / "members" / f"{i:04d}" / "row.json"
                             for i in range(4))]
    drop = ("wall_s", "checkpoint", "thumbnail")
    for a, b in zip(full, thin):
        assert [(k, v) for k, v in a.items() if k not in drop] == \
            [(k, v) for k, v in b.items() if k not in drop]
        f = tmp_path / "thin" / "members" / f"{b['member']:04d}" / "row.json"
        assert json.loads(f.read_text()) == b
    assert thin[2]["steps"] == 7 and "q:mass u" in thin[2]


def test_a_damaged_row_counts_as_not_done_and_its_member_runs_again(tmp_path):
    """Rows are not synced one by one: after a power loss a row may be empty, cut short or
    zeros. Such a row (or one that is not its member's JSON object) is no row: the member is
    not done, the table leaves it out, and a rerun runs it again."""
    from pdestudio.app.sweep.results import read_rows
    from pdestudio.app.sweep.runner import run_sweep
    spec = specs.make_spec("gray-scott", None, {"vertices": 300},
                           [("F", [0.03, 0.04]), ("k", [0.06, 0.061, 0.062])], "numpy",
                           "float64", None, 4)
    out = tmp_path / "gs"
    specs.check_folder(out, spec)
    first = run.run_group(spec, list(range(6)), str(out), ())
    row = [run.member_dir(out, i) / "row.json" for i in range(6)]
    text = row[1].read_bytes()
    damage = [b"", text[:len(text) // 2], b"\0" * len(text), b"[]", row[5].read_bytes()]
    for f, data in zip(row, damage):
        f.write_bytes(data)
    assert [run.is_done(out, i) for i in range(6)] == [False] * 5 + [True]
    assert [r["member"] for r in read_rows(out)] == [5]
    summary = run_sweep(spec, out, workers=1, outputs=())
    assert summary["skipped"] == 1 and summary["ran"] == 5 and not summary["failed"]
    assert all(run.is_done(out, i) for i in range(6))
    drop = ("wall_s", "gpu")
    assert [{k: v for k, v in r.items() if k not in drop} for r in table(out)] == \
        [{k: v for k, v in r.items() if k not in drop} for r in first]
