"""What a Dask worker runs: one member (`run_member`), or the members of a group that share a
mesh as one batched ensemble on the GPU (`run_group`). Each finished member leaves
members/NNNN/{final.npz, thumb.png} and, last, row.json: its row of the results, and the mark
that it is done. Top-level functions of an importable module, so a worker needs only pdestudio
installed.

Crash safety: every file is written atomically (temp file + rename: while the system runs a
reader sees the whole file or none, whatever process dies), and final.npz and thumb.png are
synced (fsync) before the row that names them. A group's rows are not synced one by one: the
task syncs them together at its end (`sync_all`). A power loss or an OS crash before then can
leave a row empty or cut short: a row counts only if it reads as the JSON object of its member
(`read_row`), so such a member is simply run again (`is_done`) and left out of the table."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from pdestudio import solvers
from pdestudio.solvers import (MeshError, ParameterError, SimulationDiverged, atomic_write,
                               sync_all)

from . import spec as specs
from .thumbs import png_bytes, thumbnail


def member_dir(out, i: int) -> Path:
    return Path(out) / "members" / f"{i:04d}"


def read_row(path, i: int) -> dict | None:
    """Member i's row from its file `path`, or None where it has none or a damaged one (not the
    JSON object of member i: e.g. empty or cut short by a crash before the task's sync)."""
    try:
        row = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None
    ok = isinstance(row, dict) and type(row.get("member")) is int and row["member"] == i
    return row if ok else None


def is_done(out, i: int) -> bool:
    return read_row(member_dir(out, i) / "row.json", i) is not None


def device_index(name, count: int) -> int:
    """The GPU (of `count` visible) that the worker called `name` uses: k mod count for a name
    ending in a number k (LocalCluster's 0, 1, ...; runner.gpu_cluster's gpu-0, gpu-1, ...),
    else 0."""
    if count < 2:
        return 0
    try:
        k = name if isinstance(name, int) else int(str(name).rsplit("-", 1)[-1])
    except ValueError:
        return 0
    return k % count


def _use_worker_gpu() -> str:
    """Make this worker's GPU current; returns its label for the member's row ("" where the
    worker has no GPU of its own). A worker of runner.gpu_cluster or dask-cuda sees one GPU
    (CUDA_VISIBLE_DEVICES, set before CUDA started): its device 0. A worker that sees several
    (an external scheduler's) takes GPU device_index(its name, count)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    ids = [v.strip() for v in visible.split(",") if v.strip()]
    try:
        import cupy
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001  (no CuPy, no driver: the label of the pinning, if any)
        return ids[0] if len(ids) == 1 else ""
    if count < 2:
        return ids[0] if ids else ("0" if count else "")
    try:
        from distributed import get_worker
        k = device_index(get_worker().name, count)
    except Exception:  # noqa: BLE001  (not in a worker: GPU 0)
        k = 0
    cupy.cuda.Device(k).use()
    return ids[k] if len(ids) == count else str(k)


# what a finished member writes besides its row (thin sweeps: --no-checkpoints, --no-thumbnails)
OUTPUTS = ("checkpoint", "thumbnail")


def _row(spec, i, params, gpu="") -> dict:
    return {"member": i, **params, "model": spec["model"], "scenario": spec["scenario"] or "",
            "backend": spec["backend"], "dtype": spec["dtype"], "t": float("nan"), "steps": 0,
            "wall_s": 0.0, "diverged": False, "reason": "", "checkpoint": "", "thumbnail": "",
            "gpu": gpu}


def _result(row, t, steps, backend, quantities) -> None:
    """The row's clock, backend and quantities (`quantities()`: the member's)."""
    row.update(t=float(t), steps=int(steps), backend=backend)
    try:
        row.update({f"q:{k}": v for k, v in quantities().items()})
    except Exception as e:  # noqa: BLE001  (a quantity of a broken state: say so, go on)
        row["reason"] = (row["reason"] + "; " if row["reason"] else "") + f"quantities: {e}"


def _write_row(out, i, row, sync=True) -> None:
    """Row i, atomically (not synced without `sync`: the caller syncs it)."""
    d = member_dir(out, i)
    d.mkdir(parents=True, exist_ok=True)
    with atomic_write(d / "row.json", sync=sync) as f:
        f.write(json.dumps(row, default=_plain).encode())


def _finish(out, i, row, sim, outputs=OUTPUTS, sync=True) -> dict:
    """Write the member's checkpoint and thumbnail (those of `outputs`, if it has a
    simulation), then its row (not synced without `sync`)."""
    d = member_dir(out, i)
    d.mkdir(parents=True, exist_ok=True)
    if sim is not None:
        _result(row, sim.t, sim.steps, sim.backend, sim.quantities)
        if "checkpoint" in outputs:
            sim.save(d / "final.npz", include_fields=True)
            row["checkpoint"] = f"members/{i:04d}/final.npz"
        if "thumbnail" in outputs:
            field = sim.default_field or next(iter(sim.field_infos))
            img = thumbnail(sim.mesh, sim.fields()[field])
            with atomic_write(d / "thumb.png") as f:
                f.write(png_bytes(img))
            row["thumbnail"] = f"members/{i:04d}/thumb.png"
    _write_row(out, i, row, sync)
    return row


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


def _advance(sim, spec) -> None:
    if spec["until"] is not None:
        sim.advance(float(spec["until"]))
    else:
        sim.step(int(spec["steps"]))


def run_member(spec: dict, i: int, out: str, outputs=OUTPUTS) -> dict:
    """Run member i of the sweep alone and write its files (`outputs` besides its row); never
    raises for the member's own failures (bad values, a divergence): they are its row's reason."""
    gpu = _use_worker_gpu()
    if spec.get("definition"):  # a model file's model, defined in this worker process
        solvers.define(spec["definition"])
    params = specs.members(spec)[i]
    row, sim = _row(spec, i, params, gpu), None
    t0 = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            sim = solvers.create(spec["model"], backend=spec["backend"], dtype=spec["dtype"],
                                 scenario=spec["scenario"], **spec["fixed"], **params)
            _advance(sim, spec)
    except SimulationDiverged as e:
        row.update(diverged=True, reason=str(e))
    except (ParameterError, MeshError, MemoryError) as e:
        row.update(diverged=False, reason=f"{type(e).__name__}: {e}")
    row["wall_s"] = time.perf_counter() - t0
    return _finish(out, i, row, sim, outputs)


def run_group(spec: dict, indices: list[int], out: str, outputs=OUTPUTS) -> list[dict]:
    """Members that share the mesh as one ensemble (solvers.create_ensemble: one launch per step
    on the GPU); each member's wall time is the group's divided by its size. Without `outputs`
    a row's numbers come straight from the ensemble (no member installed); the rows are synced
    once, at the end."""
    gpu = _use_worker_gpu()
    if spec.get("definition"):  # a model file's model, defined in this worker process
        solvers.define(spec["definition"])
    all_members = specs.members(spec)
    params = [all_members[i] for i in indices]
    t0 = time.perf_counter()
    with np.errstate(all="ignore"):
        ens = solvers.create_ensemble(spec["model"], params, backend=spec["backend"],
                                      dtype=spec["dtype"], scenario=spec["scenario"],
                                      **spec["fixed"])
        if spec["until"] is not None:
            ens.advance(float(spec["until"]))
        else:
            ens.step(int(spec["steps"]))
    wall = (time.perf_counter() - t0) / len(indices)
    qs = None
    if not outputs:  # the rows' numbers straight from the ensemble: no member installed
        try:
            qs = ens.all_quantities()  # (one synchronisation)
        except Exception:  # noqa: BLE001  (a broken state: each member's row says why)
            qs = None
    rows = []
    for k, i in enumerate(indices):
        row = _row(spec, i, params[k], gpu)
        row.update(wall_s=wall, diverged=bool(ens.diverged[k]), reason=ens.reasons[k])
        if outputs:
            rows.append(_finish(out, i, row, ens.member(k), outputs, sync=False))
            continue
        _result(row, ens.t[k], ens.steps[k], ens.backend,
                (lambda k=k: qs[k]) if qs is not None else (lambda k=k: ens.quantities(k)))
        _write_row(out, i, row, sync=False)
        rows.append(row)
    sync_all([member_dir(out, i) / "row.json" for i in indices])
    return rows


def groups(spec: dict, todo: list[int], gpu: bool, size: int = 256,
           parts: int = 1) -> list[list[int]]:
    """How the members to run are split into tasks: on a GPU, members of a model with ensembles
    whose varied parameters are all per-member ones go in batches of up to `size`, cut so that
    each of `parts` GPUs gets one (ceil(members / parts) each: 64 members on 2 GPUs are 2 tasks
    of 32); everything else runs alone (one task per member)."""
    per_member = set(solvers.describe(spec["model"]).get("ensemble", []))
    varied = {n for n, _ in spec["vary"]}
    if not (gpu and per_member and varied <= per_member):
        return [[i] for i in todo]
    size = max(1, min(size, -(-len(todo) // max(1, parts))))
    return [todo[k:k + size] for k in range(0, len(todo), size)]
