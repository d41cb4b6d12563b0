"""Sweeps on several GPUs (issue 29, item 5), on the CPU: the ensembles cut into one task per GPU,
each worker of the local cluster pinned to its own GPU (CUDA_VISIBLE_DEVICES per worker, the
fallback where dask-cuda is not installed; GPUs counted by a stand-in), and thin outputs (no
checkpoints, no thumbnails). The speed on two real GPUs: benchmarks/distributed/sweep_gpus.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pdestudio import solvers
from pdestudio.app.sweep import members as run
from pdestudio.app.sweep import runner
from pdestudio.app.sweep import spec as specs

ROOT = Path(__file__).resolve().parents[2]


def gs_spec(n_f=8, n_k=8, until=None, steps=3, vertices=200, backend="auto"):
    return specs.make_spec("gray-scott", None, {"vertices": vertices},
                           [("F", [0.03 + 0.002 * i for i in range(n_f)]),
                            ("k", [0.058 + 0.0005 * i for i in range(n_k)])],
                           backend, "float64", until, steps)


def test_ensembles_are_cut_so_that_every_gpu_gets_one():
    spec, todo = gs_spec(), list(range(64))
    assert [len(g) for g in run.groups(spec, todo, gpu=True, parts=2)] == [32, 32]
    assert [len(g) for g in run.groups(spec, todo, gpu=True, parts=3)] == [22, 22, 20]
    assert run.groups(spec, todo, gpu=True, parts=1) == [todo]
    assert [len(g) for g in run.groups(spec, todo, gpu=True, size=16, parts=2)] == [16] * 4
    assert sum(run.groups(spec, todo, gpu=True, parts=4), []) == todo  # each member once
    assert run.groups(spec, [5, 9], gpu=True, parts=4) == [[5], [9]]
    assert run.groups(spec, todo, gpu=False, parts=2) == [[i] for i in todo]


def test_each_worker_gets_its_own_gpu():
    assert [runner.gpu_env(k, 2) for k in range(3)] == [
        {"CUDA_VISIBLE_DEVICES": v} for v in ("0", "1", "0")]
    # GPUs this process was given: the workers share them out, by their physical ids
    assert [runner.gpu_env(k, 2, "3,5")["CUDA_VISIBLE_DEVICES"] for k in range(3)] == \
        ["3", "5", "3"]
    # a worker that sees several GPUs (an external scheduler's) picks one by its name
    assert [run.device_index(n, 2) for n in (0, 1, 2, "gpu-3", "tcp://h:1", "w")] == \
        [0, 1, 0, 1, 0, 0]
    assert run.device_index("gpu-5", 4) == 1 and run.device_index(7, 1) == 0


def test_two_gpus_run_two_pinned_tasks_with_thin_outputs(tmp_path, monkeypatch):
    """64 members with two GPUs: two tasks of 32, one on each worker, each worker started with
    CUDA_VISIBLE_DEVICES of its GPU (the members' rows say which); no checkpoints, no thumbnails,
    no contact sheet; the rows equal a member run alone."""
    monkeypatch.setenv("PDESTUDIO_NO_GPU", "1")   # the members compute with NumPy
    monkeypatch.setattr(runner, "gpu_count", lambda: 2)
    spec = gs_spec()
    out = tmp_path / "gs"
    summary = runner.run_sweep(spec, out, outputs=())
    assert summary["ran"] == 64 and not summary["failed"] and summary["tasks"] == 2
    assert summary["gpus"] == 2 and summary["cluster"] in ("gpu", "dask-cuda")
    rows = pq.read_table(out / "results.parquet").to_pylist()
    by_gpu = {g: [r["member"] for r in rows if r["gpu"] == g] for g in ("0", "1")}
    assert sorted(by_gpu) == ["0", "1"] and {len(v) for v in by_gpu.values()} == {32}
    assert sorted(by_gpu["0"] + by_gpu["1"]) == list(range(64))
    assert all(r["checkpoint"] == "" and r["thumbnail"] == "" for r in rows)
    assert {p.name for p in out.glob("members/*/*")} == {"row.json"}
    assert not (out / "contact.png").exists() and summary["contact"] is None
    r = rows[37]
    sim = solvers.create("gray-scott", backend="numpy", vertices=200, F=r["F"], k=r["k"])
    sim.step(3)
    assert r["steps"] == sim.steps == 3
    assert {k[2:]: v for k, v in r.items() if k.startswith("q:")} == sim.quantities()


def test_gpus_beyond_those_present_is_a_clean_error(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "gpu_count", lambda: 2)
    with pytest.raises(solvers.ParameterError, match=r"--gpus 3; allowed: 1 to 2"):
        runner.run_sweep(gs_spec(), tmp_path / "x", gpus=3)
    monkeypatch.setattr(runner, "gpu_count", lambda: 0)
    with pytest.raises(solvers.ParameterError, match="--gpus 1: no GPU is usable here"):
        runner.run_sweep(gs_spec(), tmp_path / "x", gpus=1)
    with pytest.raises(solvers.ParameterError, match="'video' is unknown; allowed: checkpoint, "
                       "thumbnail"):
        runner.run_sweep(gs_spec(), tmp_path / "x", outputs=("video",))


def test_the_command_line_keeps_checkpoints_without_thumbnails(tmp_path):
    out = tmp_path / "gs"
    p = subprocess.run([sys.executable, "-m", "pdestudio", "sweep", "gray-scott", "--vary",
                        "F=0.03,0.04", "--set", "vertices=200", "--backend", "numpy", "--steps",
                        "2", "--out", str(out), "--workers", "1", "--no-thumbnails", "--json"],
                       capture_output=True, text=True, cwd=ROOT, timeout=240,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["ran"] == 2 and summary["contact"] is None and summary["cluster"] == "cpu"
    assert sorted(x.name for x in out.glob("members/0000/*")) == ["final.npz", "row.json"]
    assert solvers.load(out / "members/0001/final.npz", backend="numpy").steps == 2


def test_the_two_gpu_benchmark_runs_in_its_cpu_mode(tmp_path):
    """benchmarks/distributed/sweep_gpus.py (the lead runs it on a 2-GPU machine): its --cpu
    smoke mode goes through the same cluster, grouping and members, and writes its JSON."""
    out = tmp_path / "sg.json"
    p = subprocess.run([sys.executable, "-m", "benchmarks.distributed.sweep_gpus", "--cpu",
                        "--members", "4", "--vertices", "200", "--steps", "2", "--out",
                        str(out)], capture_output=True, text=True, cwd=ROOT, timeout=240,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(out.read_text())
    one, two = res["runs"]
    assert (one["gpus"], one["tasks"], one["gpus_used"]) == (1, 1, ["0"])
    assert (two["gpus"], two["tasks"], two["task_sizes"], two["gpus_used"]) == \
        (2, 2, [2, 2], ["0", "1"])
    assert one["members"] == two["members"] == 4 and one["steps"] == two["steps"] == [2]
    assert two["ratio"] == pytest.approx(two["members_per_hour"] / one["members_per_hour"])
    for r in (one, two):  # --repeat (default 5): the median of the timed sweeps counts
        assert len(r["walls_s"]) == len(r["tasks_s"]) == 5
        assert r["wall_s"] == sorted(r["walls_s"])[2]
        assert all(0 < t <= w for t, w in zip(r["tasks_s"], r["walls_s"]))
    assert res["dtype"] == "float64" and res["mesh_cache"] is True
    assert "members/hour" in p.stdout and "ratio" in p.stdout
