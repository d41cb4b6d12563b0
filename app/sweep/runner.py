"""Running a sweep on Dask distributed: a LocalCluster (worker processes: one per GPU where CuPy
works, else one per core, or `workers`) or an existing scheduler (`scheduler="tcp://host:port"`).
Finished members are skipped; each task's result is its members' rows; the table and the contact
sheet are rebuilt from the row files at the end, also after Ctrl-C or a failed task."""
from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

from pdestudio import solvers

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


def client_for(scheduler: str | None, workers: int | None, gpus: int):
    from distributed import Client, LocalCluster
    if scheduler:
        return Client(scheduler, timeout="20s"), None
    n = workers or gpus or max(1, (os.cpu_count() or 1))
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run_sweep(spec: dict, out, *, workers: int | None = None, scheduler: str | None = None,
              group_size: int = 256, batch: bool = True) -> dict:
    """Run the members of `spec` not yet finished in `out`; returns a summary. `batch`: on a
    GPU, members sharing a mesh run as batched ensembles (else every member alone)."""
    out = Path(out)
    specs.validate_members(spec)
    specs.check_folder(out, spec)
    n = len(specs.members(spec))
    todo = [i for i in range(n) if not run.is_done(out, i)]
    gpus = gpu_count() if spec["backend"] in ("cupy", "auto") else 0
    tasks = run.groups(spec, todo, gpu=gpus > 0 and batch, size=group_size)
    log.info("sweep: %d members (%d finished before, %d to run in %d tasks) into %s",
             n, n - len(todo), len(todo), len(tasks), out)
    progress = Progress(n, n - len(todo))
    failures: list[str] = []
    client = cluster = None
    t0 = time.perf_counter()
    try:
        if tasks:
            from distributed import as_completed
            client, cluster = client_for(scheduler, workers, gpus)
            futures = []
            for g in tasks:
                if len(g) == 1:
                    futures.append(client.submit(run.run_member, spec, g[0], str(out),
                                                 pure=False, key=f"pdestudio-member-{g[0]}"))
                else:
                    futures.append(client.submit(run.run_group, spec, g, str(out), pure=False,
                                                 key=f"pdestudio-group-{g[0]}-{g[-1]}"))
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
        sheet = write_contact(out, rows, spec["vary"]) if rows else None
    wall = time.perf_counter() - t0
    ran = len(rows) - (n - len(todo))
    return {"members": n, "skipped": n - len(todo), "ran": ran, "failed": failures,
            "diverged": sum(bool(r.get("diverged")) for r in rows), "wall_s": wall,
            "members_per_hour": 3600 * ran / wall if ran and wall > 0 else 0.0,
            "table": str(table) if table else None, "contact": str(sheet) if sheet else None}
