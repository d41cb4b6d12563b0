"""Running a sweep on Dask distributed: a local cluster or an existing scheduler
(`scheduler="tcp://host:port"`). Finished members are skipped; each task's result is its members'
rows; the table and the contact sheet are rebuilt from the row files at the end, also after Ctrl-C
or a failed task.

The local cluster: on the CPU a LocalCluster of one worker process per core (or `workers`). With
GPUs (CuPy works; backend cupy or auto) one worker per GPU, each pinned to its own:
dask-cuda's LocalCUDACluster where dask_cuda is installed, else `gpu_cluster` (worker k starts
with CUDA_VISIBLE_DEVICES = GPU k, so its device 0 is its GPU). Members that run as ensembles are
cut into as many tasks as there are GPUs (members.groups), so every GPU gets work."""
from __future__ import annotations

import hashlib
import logging
import os
import sys
import time
from pathlib import Path

from pdestudio import solvers
from pdestudio.solvers import ParameterError

from . import members as run
from . import spec as specs
from .results import read_rows, write_contact, write_table

log = logging.getLogger("pdestudio")


def gpu_count() -> int:
    ok, _ = solvers.gpu_status()
    if not ok:
        return 0
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001
        return 0


class Progress:
    """Members done / running / failed with an ETA: a rich bar on a terminal, else a line per
    finished task (and none with -q)."""

    def __init__(self, total: int, skipped: int, tty: bool | None = None):
        self.total, self.skipped, self.done, self.failed, self.diverged = total, skipped, 0, 0, 0
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.bar = None
        if self.tty and log.isEnabledFor(logging.INFO):
            from rich.progress import BarColumn, Progress as Bar, TextColumn, TimeRemainingColumn
            self.bar = Bar(TextColumn("sweep"), BarColumn(), TextColumn("{task.description}"),
                           TimeRemainingColumn(), transient=False)
            self.bar.start()
            self.task = self.bar.add_task(self.text(0), total=max(total - skipped, 1))

    def text(self, running: int) -> str:
        return (f"{self.done + self.skipped}/{self.total} done ({self.skipped} skipped, "
                f"{self.diverged} diverged), {running} running, {self.failed} failed")

    def update(self, rows: list[dict], failed: int, running: int) -> None:
        self.done += len(rows)
        self.failed += failed
        self.diverged += sum(bool(r.get("diverged")) for r in rows)
        left = self.total - self.skipped - self.done - self.failed
        rate = (self.done + self.failed) / max(time.perf_counter() - self.t0, 1e-9)
        eta = f", ETA {left / rate:.0f} s" if rate > 0 and left > 0 else ""
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done + self.failed,
                            description=self.text(running))
        else:
            log.info("sweep: %s%s", self.text(running), eta)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def gpu_env(k: int, gpus: int, visible: str | None = None) -> dict:
    """The environment of worker k of a cluster on `gpus` GPUs: CUDA_VISIBLE_DEVICES = its GPU,
    k mod gpus (an entry of `visible`, the CUDA_VISIBLE_DEVICES this process was given, if
    any), set before the worker starts CUDA."""
    ids = [v.strip() for v in (visible or "").split(",") if v.strip()][:gpus]
    if len(ids) < gpus:
        ids = [str(i) for i in range(gpus)]
    return {"CUDA_VISIBLE_DEVICES": ids[k % gpus]}


def gpu_cluster(n: int, gpus: int):
    """A local cluster of n single-threaded worker processes, worker k pinned to GPU k mod gpus
    (`gpu_env`; the fallback where dask-cuda is not installed). Worker names: gpu-0, gpu-1..."""
    from distributed import Nanny, Scheduler, SpecCluster
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    workers = {f"gpu-{k}": {"cls": Nanny, "options": {
        "nthreads": 1, "env": gpu_env(k, gpus, visible), "silence_logs": logging.ERROR,
        "dashboard": False}} for k in range(n)}
    return SpecCluster(workers=workers, silence_logs=logging.ERROR, scheduler={
        "cls": Scheduler, "options": {"dashboard": False, "dashboard_address": ":0",
                                      "host": "127.0.0.1"}})


def worker_addresses(client) -> list[str]:
    """The cluster's workers, sorted by name (gpu-0, gpu-1, ...: each on its own GPU)."""
    info = client.scheduler_info().get("workers", {})
    return [a for a, _ in sorted(info.items(), key=lambda kv: str(kv[1].get("name", kv[0])))]


def submit(client, spec: dict, tasks: list[list[int]], out, outputs,
           workers: list[str] | None = None) -> list:
    """The tasks' futures: a group of members (run_group) or a lone member (run_member) each.
    Where there are no more tasks than workers (the ensembles cut into one task per GPU), task
    i prefers worker i (`workers`, default `worker_addresses`) so that every GPU gets one at
    once; Dask would otherwise be free to queue two on one worker while another idles. The
    preference is loose: a task whose worker is gone runs on another."""
    workers = worker_addresses(client) if workers is None else workers
    pin = 1 < len(tasks) <= len(workers)
    tag = hashlib.sha1(str(Path(out).resolve()).encode()).hexdigest()[:8]  # (keys: per folder)
    futures = []
    for i, g in enumerate(tasks):
        where = dict(workers=[workers[i]], allow_other_workers=True) if pin else {}
        if len(g) == 1:
            fn, arg, key = run.run_member, g[0], f"pdestudio-member-{g[0]}-{tag}"
        else:
            fn, arg, key = run.run_group, g, f"pdestudio-group-{g[0]}-{g[-1]}-{tag}"
        futures.append(client.submit(fn, spec, arg, str(out), outputs, pure=False, key=key,
                                     **where))
    return futures


def client_for(scheduler: str | None, workers: int | None, gpus: int):
    """(client, cluster): the scheduler's client (cluster None), or a local cluster (see the
    module docstring) and its client. Returns also the kind of cluster: "scheduler",
    "dask-cuda", "gpu" or "cpu"."""
    from distributed import Client, LocalCluster
    if scheduler:
        return Client(scheduler, timeout="20s"), None, "scheduler"
    if gpus:
        n = workers or gpus
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError:
            LocalCUDACluster = None
        if LocalCUDACluster is not None and n == gpus:
            cluster = LocalCUDACluster(n_workers=gpus, threads_per_worker=1,
                                       dashboard_address=None, silence_logs=logging.ERROR)
            return Client(cluster), cluster, "dask-cuda"
        cluster = gpu_cluster(n, gpus)
        return Client(cluster), cluster, "gpu"
    n = workers or max(1, (os.cpu_count() or 1))
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster, "cpu"


def run_sweep(spec: dict, out, *, workers: int | None = None, scheduler: str | None = None,
              group_size: int = 256, batch: bool = True, gpus: int | None = None,
              outputs=run.OUTPUTS) -> dict:
    """Run the members of `spec` not yet finished in `out`; returns a summary. `batch`: on a
    GPU, members sharing a mesh run as batched ensembles (else every member alone). `gpus`: how
    many of the visible GPUs to use (default all). `outputs`: what each member writes besides
    its row: "checkpoint" (members/NNNN/final.npz), "thumbnail" (thumb.png; the contact sheet
    is drawn from them, and is not written without them)."""
    out = Path(out)
    bad = sorted(set(outputs) - set(run.OUTPUTS))
    if bad:
        raise ParameterError(f"sweep outputs: '{bad[0]}' is unknown; allowed: "
                             + ", ".join(run.OUTPUTS))
    specs.validate_members(spec)
    found = gpu_count() if spec["backend"] in ("cupy", "auto") else 0
    if gpus is not None and not 1 <= gpus <= found:
        raise ParameterError(f"--gpus {gpus}; allowed: 1 to {found} (the GPUs CuPy sees)" if found
                             else f"--gpus {gpus}: no GPU is usable here (backend "
                             f"{spec['backend']}); leave --gpus out")
    gpus = found if gpus is None else min(gpus, found)
    specs.check_folder(out, spec)
    n = len(specs.members(spec))
    todo = [i for i in range(n) if not run.is_done(out, i)]
    progress = Progress(n, n - len(todo))
    failures: list[str] = []
    client = cluster = kind = None
    tasks: list[list[int]] = []
    outputs = tuple(outputs)
    t0 = time.perf_counter()
    try:
        if todo:
            from distributed import as_completed
            client, cluster, kind = client_for(scheduler, workers, gpus)
            # ensembles cut so that every worker (one per GPU) gets one
            parts = (workers or gpus) if scheduler is None else \
                len(client.scheduler_info().get("workers", {}))
            tasks = run.groups(spec, todo, gpu=gpus > 0 and batch, size=group_size,
                               parts=max(1, parts))
            log.info("sweep: %d members (%d finished before, %d to run in %d tasks on %s) "
                     "into %s", n, n - len(todo), len(todo), len(tasks),
                     f"{gpus} GPU{'s' if gpus != 1 else ''}" if gpus else kind, out)
            futures = submit(client, spec, tasks, out, outputs)
            left = len(futures)
            for fut in as_completed(futures):
                left -= 1
                try:
                    res = fut.result()
                    rows = res if isinstance(res, list) else [res]
                    progress.update(rows, 0, left)
                except Exception as e:  # noqa: BLE001  (a worker died, a bug: not a member's row)
                    failures.append(f"{fut.key}: {type(e).__name__}: {e}")
                    progress.update([], 1, left)
    finally:
        progress.close()
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        rows = read_rows(out)
        table = write_table(out, rows, spec["vary"]) if rows else None
        sheet = (write_contact(out, rows, spec["vary"])
                 if any(r.get("thumbnail") for r in rows) else None)
    wall = time.perf_counter() - t0
    ran = len(rows) - (n - len(todo))
    return {"members": n, "skipped": n - len(todo), "ran": ran, "failed": failures,
            "tasks": len(tasks), "gpus": gpus, "cluster": kind,
            "diverged": sum(bool(r.get("diverged")) for r in rows), "wall_s": wall,
            "members_per_hour": 3600 * ran / wall if ran and wall > 0 else 0.0,
            "table": str(table) if table else None, "contact": str(sheet) if sheet else None}
