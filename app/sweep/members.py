"""What a Dask worker runs: one member (`run_member`), or the members of a group that share a
mesh as one batched ensemble on the GPU (`run_group`). Each finished member leaves
members/NNNN/{final.npz, thumb.png} and, last, row.json (atomically): its row of the results.
Top-level functions of an importable module, so a worker needs only pdestudio installed."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from pdestudio import solvers
from pdestudio.solvers import MeshError, ParameterError, SimulationDiverged, atomic_write

from . import spec as specs
from .thumbs import png_bytes, thumbnail


def member_dir(out, i: int) -> Path:
    return Path(out) / "members" / f"{i:04d}"


def is_done(out, i: int) -> bool:
    return (member_dir(out, i) / "row.json").is_file()


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


def _finish(out, i, row, sim, outputs=OUTPUTS) -> dict:
    """Write the member's checkpoint and thumbnail (those of `outputs`, if it has a
    simulation), then its row."""
    d = member_dir(out, i)
    d.mkdir(parents=True, exist_ok=True)
    if sim is not None:
        row.update(t=float(sim.t), steps=int(sim.steps), backend=sim.backend)
        try:
            row.update({f"q:{k}": v for k, v in sim.quantities().items()})
        except Exception as e:  # noqa: BLE001  (a quantity of a broken state: say so, go on)
            row["reason"] = (row["reason"] + "; " if row["reason"] else "") + f"quantities: {e}"
        if "checkpoint" in outputs:
            sim.save(d / "final.npz", include_fields=True)
            row["checkpoint"] = f"members/{i:04d}/final.npz"
        if "thumbnail" in outputs:
            field = sim.default_field or next(iter(sim.field_infos))
            img = thumbnail(sim.mesh, sim.fields()[field])
            with atomic_write(d / "thumb.png") as f:
                f.write(png_bytes(img))
            row["thumbnail"] = f"members/{i:04d}/thumb.png"
    with atomic_write(d / "row.json") as f:
        f.write(json.dumps(row, default=_plain).encode())
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
    on the GPU); each member's wall time is the group's divided by its size."""
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
    rows = []
    for k, i in enumerate(indices):
        row = _row(spec, i, params[k], gpu)
        row.update(wall_s=wall, diverged=bool(ens.diverged[k]), reason=ens.reasons[k])
        rows.append(_finish(out, i, row, ens.member(k), outputs))
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
