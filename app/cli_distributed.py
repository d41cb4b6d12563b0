"""`pdestudio run ... --distributed`: one simulation decomposed over the ranks of an MPI launch
(docs/DISTRIBUTED.md), e.g.

    mpirun -n 4 pdestudio run shallow-water --set nx=512 --until 0.1 --distributed --save s.npz

Every rank runs the same command line and steps its strip of the grid; rank 0 checks the output
paths, logs, prints --json and writes --save (the whole state: loads on any number of ranks, one
included), --export-data and --export-image from the gathered field; the other ranks write and
log nothing (an error every rank meets is said once, by rank 0). Videos and time series would
need a gather per frame: refused for now.
"""
from __future__ import annotations

from pdestudio import solvers
from pdestudio.solvers import MeshError, ParameterError, SimulationDiverged

from .cli_log import log
from .cli_outputs import OutputError
from .cli_run import RunFailed, UsageError

import os

# the longest side of a picture's gathered field, in cells (decimated above)
PICTURE = int(os.environ.get("PDESTUDIO_PICTURE_CELLS", "4096"))

# exit codes of the errors every rank meets together (cli_main.main's mapping)
QUIET_CODES = ((UsageError, 2), (ParameterError, 2), (MeshError, 2), (OutputError, 2),
               (SimulationDiverged, 1), (RunFailed, 1))


class Ranks:
    """The MPI side of a distributed run: the world, who is rank 0, agreement between ranks."""

    def __init__(self, a):
        self.comm = solvers.mpi_world()
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.root = self.rank == 0
        if not self.root:
            log.disabled = True   # rank 0 speaks for all
            a.verbosity = -1      # no progress bar or lines

    @staticmethod
    def check(a) -> None:
        for opt, given in (("--export-video", a.export_video),
                           ("--export-every/--export-dt", a.export_every or a.export_dt)):
            if given:
                raise UsageError(f"{opt} is not available with --distributed yet (a gather per "
                                 "frame); allowed: --save, --export-data (.npz, .vti, .vtu), "
                                 "--export-image")

    def agree(self, fn):
        """fn() on rank 0 only; an error there is raised on every rank (same type and text)."""
        err = None
        if self.root:
            try:
                fn()
            except tuple(t for t, _ in QUIET_CODES) as e:
                err = e
        kind = self.comm.bcast(None if err is None else (type(err), str(err)))
        if err is not None:
            raise err
        if kind is not None:
            raise kind[0](kind[1])

    def slowest(self, seconds: float) -> float:
        """The longest of the ranks' times (the loop's chunk size must be the same on all)."""
        from mpi4py import MPI
        return self.comm.allreduce(seconds, op=MPI.MAX)

    def whole(self, sim, needed: bool):
        """The gathered one-process simulation on rank 0 where an output needs it (collective),
        else None."""
        return sim.gathered() if needed else None

    @staticmethod
    def every(sim) -> int:
        """The decimation of a picture: every k-th row and column, so that the longer side of
        the gathered copy is at most PICTURE cells (1: the whole field)."""
        d = sim.domain
        return max(1, -(-max(d.ny, d.nx) // max(PICTURE, 1)))

    def picture(self, sim):
        """The (decimated) gathered simulation a picture is drawn from, on rank 0."""
        return sim.decimated(self.every(sim))

    def summary(self, sim) -> dict:
        d = dict(sim.domain.describe())
        d["halo_s_max"] = self.slowest(d.pop("halo_s"))
        return d


def quiet_exit(e: BaseException) -> int | None:
    """The exit code of an error every rank meets (rank 0 reports it), None for others."""
    for kind, code in QUIET_CODES:
        if isinstance(e, kind):
            return code
    return None
