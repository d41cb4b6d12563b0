"""Communicators of the decomposition layer (core/decomp.py; docs/DISTRIBUTED.md): what the ranks
of one simulation say to each other.

    comm.rank, comm.size
    comm.exchange(send_lo, send_hi, lo, hi) -> (recv_lo, recv_hi)
                        send_lo goes to rank `lo` (None: no neighbour there), send_hi to `hi`;
                        recv_lo comes from `lo`, recv_hi from `hi` (None where no neighbour);
                        arrays of the simulation's backend, the same shape on both sides
    comm.allreduce_min(x) -> float      the exact minimum of one float over the ranks
    comm.allreduce_max(x) -> float
    comm.allgather(obj), comm.bcast(obj, root)   small Python objects
    comm.gather_rows(a, root) -> the blocks of rows stacked in rank order on root (host
                        array), None elsewhere
    comm.scatter_rows(a, counts, root) -> this rank's rows of a (host array on root)

SelfComm is one rank alone (tests, and the single-process code path); MPIComm runs on mpi4py with
host arrays (NumPy; CuPy arrays are staged through the host); NCCLComm moves the halos on the
device through cupy.cuda.nccl and everything else through MPI (the fused strip scheme of
shallow water also all-reduces its Δt slot and sends its halo rows through `nc` directly).
"""
from __future__ import annotations

import abc

import os

import numpy as np

from .errors import ParameterError

# Environment variables that launchers set in every rank (Open MPI, MPICH/Hydra, PMIx, Slurm).
LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_PROCID",
                 "MPI_LOCALNRANKS")
LOCAL_RANK_VARS = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                   "LOCAL_RANK")
CHUNK = 1 << 27  # elements per message of a gather/scatter (MPI counts are 32-bit ints)


def launched_by_mpi() -> bool:
    """Whether this process was started by mpirun/mpiexec/srun (checked before MPI starts)."""
    return any(v in os.environ for v in LAUNCHER_VARS)


def mpi_world():
    """mpi4py's COMM_WORLD; ParameterError when this process was not started by an MPI launcher
    (a lone process would silently run as one rank) or mpi4py is missing."""
    if not launched_by_mpi():
        raise ParameterError("a distributed run is started by an MPI launcher, one process per "
                             "rank: mpirun -n 4 pdestudio run ... --distributed (or srun); this "
                             "process was not (no MPI launcher variables such as "
                             "OMPI_COMM_WORLD_SIZE or PMI_SIZE are set)")
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ParameterError(f"distributed runs need mpi4py and an MPI library ({e}); install "
                             "Open MPI (apt-get install openmpi-bin libopenmpi-dev) and "
                             "pip install 'pdestudio[mpi]'") from None
    return MPI.COMM_WORLD


def _host(a):
    return a.get() if hasattr(a, "get") else np.ascontiguousarray(a)


class Communicator(abc.ABC):
    """The interface (see the module docstring); `halo_s` sums the seconds spent in exchange.
    SelfComm, MPIComm and NCCLComm implement it."""

    rank = 0
    size = 1
    name = "?"
    halo_s = 0.0

    @abc.abstractmethod
    def exchange(self, send_lo, send_hi, lo, hi):
        ...

    @abc.abstractmethod
    def allreduce_min(self, x: float) -> float:
        ...

    def allreduce_max(self, x: float) -> float:
        return -self.allreduce_min(-x)

    @abc.abstractmethod
    def allgather(self, obj) -> list:
        ...

    @abc.abstractmethod
    def bcast(self, obj, root: int = 0):
        ...

    @abc.abstractmethod
    def gather_rows(self, a, root: int = 0):
        ...

    @abc.abstractmethod
    def scatter_rows(self, a, counts, root: int = 0):
        ...

    def barrier(self) -> None:
        pass


class SelfComm(Communicator):
    """One rank alone: no neighbours, every reduction is the value itself."""

    name = "self"

    def exchange(self, send_lo, send_hi, lo, hi):
        if lo is not None or hi is not None:
            raise ValueError("SelfComm has no neighbours")
        return None, None

    def allreduce_min(self, x):
        return x

    def allreduce_max(self, x):
        return x

    def allgather(self, obj):
        return [obj]

    def bcast(self, obj, root=0):
        return obj

    def gather_rows(self, a, root=0):
        return _host(a)

    def scatter_rows(self, a, counts, root=0):
        return a


class MPIComm(Communicator):
    """mpi4py on host arrays: halos by Sendrecv (no pickling), Δt by Allreduce(MIN) of the very
    float each rank computed (so it is the one-process value bit for bit)."""

    name = "mpi"

    def __init__(self, comm):
        from mpi4py import MPI
        self.MPI, self.comm = MPI, comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()

    def _peer(self, r):
        return self.MPI.PROC_NULL if r is None else r

    def exchange(self, send_lo, send_hi, lo, hi):
        import time
        t0 = time.perf_counter()
        xp_out = None if isinstance(send_lo, np.ndarray) else type(send_lo)
        s_lo, s_hi = _host(send_lo), _host(send_hi)
        r_lo, r_hi = np.empty_like(s_hi), np.empty_like(s_lo)
        # upward (my top rows to hi, lo's top rows to me), then downward
        self.comm.Sendrecv(s_hi, dest=self._peer(hi), sendtag=1,
                           recvbuf=r_lo, source=self._peer(lo), recvtag=1)
        self.comm.Sendrecv(s_lo, dest=self._peer(lo), sendtag=2,
                           recvbuf=r_hi, source=self._peer(hi), recvtag=2)
        if xp_out is not None:  # CuPy arrays staged through the host
            import cupy
            r_lo, r_hi = cupy.asarray(r_lo), cupy.asarray(r_hi)
        self.halo_s += time.perf_counter() - t0
        return (r_lo if lo is not None else None), (r_hi if hi is not None else None)

    def allreduce_min(self, x):
        return float(self.comm.allreduce(float(x), op=self.MPI.MIN))

    def allreduce_max(self, x):
        return float(self.comm.allreduce(float(x), op=self.MPI.MAX))

    def allgather(self, obj):
        return self.comm.allgather(obj)

    def bcast(self, obj, root=0):
        return self.comm.bcast(obj, root=root)

    def barrier(self):
        self.comm.Barrier()

    def gather_rows(self, a, root=0):
        a = np.ascontiguousarray(_host(a))
        shapes = self.comm.allgather(a.shape)
        if self.rank != root:
            _chunked(self.comm.Send, a, root)
            return None
        out = np.empty((sum(s[0] for s in shapes),) + a.shape[1:], dtype=a.dtype)
        r0 = 0
        for r, s in enumerate(shapes):
            if r == root:
                out[r0:r0 + s[0]] = a
            else:
                _chunked(self.comm.Recv, out[r0:r0 + s[0]], r)
            r0 += s[0]
        return out

    def scatter_rows(self, a, counts, root=0):
        meta = self.comm.bcast(None if a is None else (a.shape[1:], a.dtype.str), root=root)
        tail, dtype = meta
        if self.rank == root:
            a = np.ascontiguousarray(a)
            r0 = 0
            for r, n in enumerate(counts):
                if r == root:
                    mine = a[r0:r0 + n].copy()
                else:
                    _chunked(self.comm.Send, a[r0:r0 + n], r)
                r0 += n
            return mine
        mine = np.empty((counts[self.rank],) + tuple(tail), dtype=np.dtype(dtype))
        _chunked(self.comm.Recv, mine, root)
        return mine


def _chunked(op, a, peer) -> None:
    """Send or receive a contiguous array in pieces of at most CHUNK elements."""
    flat = a.reshape(-1)
    for i in range(0, max(flat.size, 1), CHUNK):
        op(flat[i:i + CHUNK], peer, tag=3)


class NCCLComm(MPIComm):
    """Halos on the device through NCCL (cupy.cuda.nccl, one GPU per rank), on the current
    stream; Δt, gathers and small objects through MPI (Δt is a host float already).
    Run on H200 pairs and quadruples (docs/DISTRIBUTED.md)."""

    name = "nccl"

    def __init__(self, comm):
        super().__init__(comm)
        from cupy.cuda import nccl
        self.nccl = nccl
        uid = comm.bcast(nccl.get_unique_id() if self.rank == 0 else None, root=0)
        self.nc = nccl.NcclCommunicator(self.size, uid, self.rank)
        # destroyed before MPI finalizes (atexit runs last-registered first; mpi4py registered
        # its finalize when MPI was imported): left to the interpreter's teardown, the
        # communicator's destructor hung ranks at exit after their work was done (2 and 4 ranks
        # on H200s, 2026-11-26)
        import atexit
        atexit.register(self.close)

    def close(self) -> None:
        """Destroy the NCCL communicator (after the device finished its queued work)."""
        nc, self.nc = getattr(self, "nc", None), None
        if nc is None:
            return
        try:
            import cupy
            cupy.cuda.Device().synchronize()
            nc.destroy()
        except Exception:  # noqa: BLE001 - at exit: never raise, never hang on a broken peer
            try:
                nc.abort()
            except Exception:  # noqa: BLE001
                pass

    def _type(self, a):
        n = self.nccl
        return {np.dtype(np.float32): n.NCCL_FLOAT32, np.dtype(np.float64): n.NCCL_FLOAT64}[a.dtype]

    def exchange(self, send_lo, send_hi, lo, hi):
        import time

        import cupy
        t0 = time.perf_counter()
        s_lo, s_hi = cupy.ascontiguousarray(send_lo), cupy.ascontiguousarray(send_hi)
        r_lo, r_hi = cupy.empty_like(s_hi), cupy.empty_like(s_lo)
        stream = cupy.cuda.get_current_stream().ptr
        self.nccl.groupStart()
        for peer, snd, rcv in ((lo, s_lo, r_lo), (hi, s_hi, r_hi)):
            if peer is not None:
                self.nc.send(snd.data.ptr, snd.size, self._type(snd), peer, stream)
                self.nc.recv(rcv.data.ptr, rcv.size, self._type(rcv), peer, stream)
        self.nccl.groupEnd()
        self.halo_s += time.perf_counter() - t0  # time to queue (the copies run on the stream)
        return (r_lo if lo is not None else None), (r_hi if hi is not None else None)


def local_rank(comm) -> int:
    """This rank's index among the ranks of its machine (launcher variables, else MPI's
    shared-memory split)."""
    for v in LOCAL_RANK_VARS:
        if v in os.environ:
            return int(os.environ[v])
    from mpi4py import MPI
    return comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()


def use_local_gpu(comm) -> int:
    """Make GPU (local rank) current; ParameterError when this machine has fewer GPUs than
    ranks. Returns the device index."""
    import cupy
    lr = local_rank(comm)
    n = cupy.cuda.runtime.getDeviceCount()
    if lr >= n:
        raise ParameterError(f"distributed run: local rank {lr} has no GPU of its own (this "
                             f"machine has {n}); allowed: at most {n} ranks per machine on the "
                             "GPU (mpirun -n ...), or --backend numpy")
    cupy.cuda.Device(lr).use()
    return lr


def wrap(comm, gpu: bool) -> Communicator:
    """A Communicator from an mpi4py communicator (NCCL halos on the GPU where CuPy has NCCL,
    else MPI), or `comm` itself when it is one already; None -> SelfComm."""
    if comm is None:
        return SelfComm()
    if isinstance(comm, Communicator):
        return comm
    if not hasattr(comm, "Get_rank"):
        raise ParameterError(f"comm: expected an mpi4py communicator (MPI.COMM_WORLD) or a "
                             f"pdestudio Communicator, not {type(comm).__name__}")
    if gpu and comm.Get_size() > 1 and os.environ.get("PDESTUDIO_HALOS", "nccl") == "nccl":
        try:
            from cupy.cuda import nccl  # noqa: F401
            return NCCLComm(comm)
        except ImportError:
            pass
    return MPIComm(comm)
