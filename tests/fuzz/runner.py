"""Runs fuzz cases through the public API in child processes with memory and time caps.

Parent side: `run(cases)` splits the cases into batches, runs each batch in a child process
(`python -m tests.fuzz.runner BATCH.json`, several at once) under RLIMIT_AS, and watches it: a case
that does not answer within `case_timeout` seconds is a hang (the child is killed and the batch
goes on in a new child from the next case); a child that dies is a crash (or OOM) of the case it
was running. `table(results)` counts the outcomes per surface.

Child side: each case goes through the public API (solvers.create(..., mesh=...),
solvers.load, the app's initial-condition loader, Simulation.set_field) and is classified:
    ok          success (and for a reloaded checkpoint: equal to its reference)
    clean       ParameterError / MeshError with a one-line message naming the file
    accepted    an invalid input was accepted            (a failure)
    refused     a valid input was refused                (a failure)
    badmsg      the right type, but a multi-line or anonymous message (a failure)
    wrong       any other exception type                 (a failure)
    mismatch    a checkpoint loaded with a different state (a failure)
    mutated     a refused input changed the simulation, or a formula changed the mesh (a failure)
and the parent adds hang and crash (including OOM kills).
"""
from __future__ import annotations

import collections
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAILURES = ("accepted", "refused", "badmsg", "wrong", "mismatch", "mutated", "hang", "crash")


# ---- child ---------------------------------------------------------------------------------------
def _message_ok(msg: str, case: dict) -> bool:
    if "\n" in msg or not msg or len(msg) > 600:
        return False
    if case["surface"] in ("mesh", "checkpoint"):
        return Path(case["path"]).name in msg
    return True


def _equal_to_ref(sim, ref: str) -> bool:
    import numpy as np
    with np.load(ref, allow_pickle=False) as z:
        if float(z["__t"]) != sim.t or int(z["__steps"]) != sim.steps:
            return False
        fields = sim.fields()
        return all(np.array_equal(fields[k], z[k], equal_nan=True)
                   for k in z.files if not k.startswith("__"))


def _snapshot(sim):
    import numpy as np
    mesh = sim.mesh
    geo = [np.array(getattr(mesh, n), copy=True) for n in ("x", "y", "points", "cells")
           if hasattr(mesh, n)]
    return {k: v.copy() for k, v in sim.fields().items()}, sim.t, sim.steps, geo


def _same(a, b) -> bool:
    import numpy as np
    fa, ta, sa, ga = a
    fb, tb, sb, gb = b
    return (ta, sa) == (tb, sb) and all(np.array_equal(fa[k], fb[k], equal_nan=True)
                                        for k in fa) and all(
        np.array_equal(x, y, equal_nan=True) for x, y in zip(ga, gb))


def execute(case: dict, rng, sims: dict) -> tuple[str, str]:
    """(outcome, detail) of one case."""
    from pdestudio import solvers
    from pdestudio.app import initial_conditions as ic
    expect, surface = case["expect"], case["surface"]
    before = sim = None
    try:
        if surface == "mesh":
            kw = ({"scenario": "file"} if case["model"] == "chemotaxis" else
                  {"geometry": "triangles", "scenario": "lake-at-rest"})
            solvers.create(case["model"], backend="numpy", mesh=case["path"], **kw)
        elif surface == "checkpoint":
            sim = solvers.load(case["path"], backend="numpy")
            if expect in ("same", "same-or-error") and not _equal_to_ref(sim, case["ref"]):
                return "mismatch", "loaded state differs from the reference"
            try:
                sim.step(1)  # whatever loaded is a working simulation
            except solvers.SimulationDiverged:
                if expect != "any":  # a forged state may be unphysical; a real one is not
                    raise
        else:
            key = (case["model"], json.dumps(case["params"]), case["dtype"])
            if key not in sims:
                sims[key] = solvers.create(case["model"], backend="numpy", dtype=case["dtype"],
                                           **case["params"])
            sim = sims[key]
            before = _snapshot(sim)
            if "spec" in case:
                ic.apply(sim, case["spec"])
            else:
                from tests.fuzz.inits import build_values
                shape = tuple(sim.field_shape(case["field"]))
                sim.set_field(case["field"], build_values(rng, case["values"], shape))
            after = _snapshot(sim)
            if not all(__import__("numpy").array_equal(x, y) for x, y in zip(before[3], after[3])):
                return "mutated", "the mesh changed"
            sims.pop(key)  # the state changed: start afresh next time
    except (solvers.ParameterError, solvers.MeshError) as e:
        msg = str(e)
        if before is not None and not _same(before, _snapshot(sim)):
            return "mutated", f"refused but changed the simulation: {msg[:200]}"
        if not _message_ok(msg, case):
            return "badmsg", msg[:300]
        if expect in ("ok", "same"):
            return "refused", msg[:300]
        return "clean", msg[:160]
    except BaseException as e:  # noqa: BLE001 - the point is to see every kind
        if isinstance(e, KeyboardInterrupt):
            raise
        return "wrong", f"{type(e).__name__}: {str(e)[:300]}"
    if expect == "error":
        return "accepted", "invalid input accepted"
    return "ok", ""


def child(batch_file: str) -> None:
    import resource

    import numpy as np
    limit = int(os.environ.get("FUZZ_MEMORY", 4 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints go to stderr, never into the protocol
    sys.stdout = sys.stderr
    cases = json.loads(Path(batch_file).read_text())
    rng = np.random.default_rng(len(cases))
    sims: dict = {}
    for case in cases:
        out.write(json.dumps({"start": case["id"]}) + "\n")
        t0 = time.perf_counter()
        outcome, detail = execute(case, rng, sims)
        out.write(json.dumps({"id": case["id"], "outcome": outcome, "detail": detail,
                              "seconds": round(time.perf_counter() - t0, 4)}) + "\n")


# ---- parent --------------------------------------------------------------------------------------
def run(cases: list[dict], workers: int = 2, batch: int = 100, case_timeout: float = 60.0,
        memory: int = 4 << 30, log=None) -> list[dict]:
    """Run every case; returns the cases with 'outcome', 'detail' and 'seconds' added."""
    by_id = {c["id"]: c for c in cases}
    queue = collections.deque(cases[i:i + batch] for i in range(0, len(cases), batch))
    tmp = Path(tempfile.mkdtemp(prefix="fuzz-"))
    env = {**os.environ, "FUZZ_MEMORY": str(memory), "PDESTUDIO_MESH_TIMEOUT": "20",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    running = []  # [proc, remaining cases, current id, started, buffer]
    done = 0

    def start(chunk):
        f = tmp / f"batch{time.monotonic_ns()}.json"
        f.write_text(json.dumps(chunk))
        proc = subprocess.Popen([sys.executable, "-m", "tests.fuzz.runner", str(f)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        running.append([proc, list(chunk), None, time.monotonic(), b""])

    def finish(entry, outcome, detail):
        nonlocal done
        proc, remaining, current = entry[0], entry[1], entry[2]
        if current is None and remaining:  # died between cases: blame the next one
            current = remaining[0]["id"]
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the child and its mesh reader
        except ProcessLookupError:
            pass
        proc.wait()
        proc.stdout.close()
        running.remove(entry)
        if current is not None and "outcome" not in by_id[current]:
            by_id[current].update(outcome=outcome, detail=detail, seconds=None)
            done += 1
        rest = [c for c in remaining if "outcome" not in c and c["id"] != current]
        if rest:
            queue.appendleft(rest)

    while queue or running:
        while queue and len(running) < workers:
            start(queue.popleft())
        fds = {e[0].stdout.fileno(): e for e in running}
        ready, _, _ = select.select(list(fds), [], [], 0.5)
        for fd in ready:
            entry = fds[fd]
            data = os.read(fd, 1 << 16)
            if not data:
                code = entry[0].wait()
                what = "OOM/killed" if code in (-9, 137) else f"exit {code}"
                finish(entry, "crash", what)
                continue
            entry[4] += data
            *lines, entry[4] = entry[4].split(b"\n")
            for line in lines:
                msg = json.loads(line)
                if "start" in msg:
                    entry[2], entry[3] = msg["start"], time.monotonic()
                else:
                    c = by_id[msg["id"]]
                    c.update(outcome=msg["outcome"], detail=msg["detail"],
                             seconds=msg["seconds"])
                    entry[1] = [x for x in entry[1] if x["id"] != msg["id"]]
                    entry[2] = None
                    done += 1
                    if log and done % 500 == 0:
                        log(f"{done}/{len(cases)}")
            if not entry[1] and entry in running:
                entry[0].wait()
                entry[0].stdout.close()
                running.remove(entry)
        for entry in list(running):
            if entry[2] is not None and time.monotonic() - entry[3] > case_timeout:
                finish(entry, "hang", f"no answer in {case_timeout:g} s")
    for c in cases:
        c.setdefault("outcome", "crash")
        c.setdefault("detail", "never ran")
    return cases


def table(results: list[dict]) -> str:
    """The Markdown table: cases per surface, and how they ended."""
    names = {"mesh": "mesh files", "checkpoint": "checkpoints", "init": "initial conditions"}
    rows = ["| surface | cases | clean error | valid accepted | wrong exception | "
            "crash / hang / OOM | other failures |", "| --- | --- | --- | --- | --- | --- | --- |"]
    totals = collections.Counter()
    for surface in ("mesh", "checkpoint", "init"):
        rs = [r for r in results if r["surface"] == surface]
        if not rs:
            continue
        n = collections.Counter(r["outcome"] for r in rs)
        other = n["accepted"] + n["refused"] + n["badmsg"] + n["mismatch"] + n["mutated"]
        row = [len(rs), n["clean"], n["ok"], n["wrong"], n["crash"] + n["hang"], other]
        totals.update(dict(zip(range(6), row)))
        rows.append(f"| {names[surface]} | " + " | ".join(f"{v:,}" for v in row) + " |")
    rows.append("| **all** | " + " | ".join(f"**{totals[i]:,}**" for i in range(6)) + " |")
    return "\n".join(rows)


def failures(results: list[dict]) -> list[dict]:
    return [r for r in results if r.get("outcome") in FAILURES]


if __name__ == "__main__":
    child(sys.argv[1])
