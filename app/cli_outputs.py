"""The files a `pdestudio run` writes: checked before the first step, written atomically, and
still written (with the last finite state) when the run diverges.

    --save S.npz            a checkpoint (solvers.load continues it)
    --export-data F         .npz (checkpoint + fields + mesh), .vti (grids), .vtu, or .pvd: a
                            ParaView time series (--export-every K steps or --export-dt Δt)
    --export-image F        .png/.jpg of the field as the viewer draws it
    --export-video F        .mp4/.gif, frames every K steps (--frame-every) or every Δt of
                            simulated time (--frame-dt); default: 100 frames over the run

Every path is checked up front (type by suffix, folder exists and can be written, no two outputs
on one path); a failed write names the file, removes its temporary file and leaves the previous
file as it was. `abort()` (an interrupt, a failure) removes everything half-done.
"""
from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pdestudio.solvers import MeshError, ParameterError

from .cli_log import log, one_line

DEFAULT_FRAMES = 100
LAND_RTOL = 1e-13  # the landing tolerance of the solvers' clock (docs/MODELS.md §0: runs land on t exactly)


class OutputError(Exception):
    """An output that cannot be written (exit 2, one line naming the file)."""


@contextlib.contextmanager
def writing(path, what: str = "write"):
    """Turn a failure to write `path` into OutputError naming the file (a full disk raises an
    OSError without a file name)."""
    try:
        yield
    except OutputError:
        raise
    except OSError as e:
        raise OutputError(f"cannot {what} '{path}': {e.strerror or one_line(e)}") from None
    except (ParameterError, MeshError):
        raise
    except (RuntimeError, ValueError, TypeError) as e:  # encoders (ffmpeg) report this way
        raise OutputError(f"cannot {what} '{path}': {one_line(e)[:300]}") from None


def landed(t: float, target: float) -> bool:
    return target - t <= LAND_RTOL * max(1.0, abs(target))


class Schedule:
    """Every K steps or every Δt of simulated time, from the start of the run."""

    def __init__(self, every: int | None, dt: float | None, t0: float, steps0: int):
        self.every, self.dt, self.t0, self.steps0 = every, dt, t0, steps0
        self.k = 0  # index of the next due instant

    @property
    def next_step(self) -> int | None:
        return None if self.every is None else self.steps0 + self.k * self.every

    @property
    def next_t(self) -> float | None:
        return None if self.dt is None else self.t0 + self.k * self.dt

    def due(self, t: float, steps: int) -> bool:
        if self.every is not None:
            return steps >= self.next_step
        return landed(t, self.next_t)

    def taken(self, t: float, steps: int) -> None:
        while self.due(t, steps):
            self.k += 1


@dataclass
class Written:
    kind: str
    path: str
    frames: int | None = None

    def as_dict(self) -> dict:
        d = {"kind": self.kind, "path": self.path, "format": Path(self.path).suffix.lower()}
        if self.frames is not None:
            d["frames"] = self.frames
        return d


def check_writable(path, what: str) -> None:
    """The folder of `path` exists and a file can be created in it; `path` is not a folder."""
    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{what} '{p}' is a folder; give a file name")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.exists():
        raise OutputError(f"{what} '{p}': folder '{folder}' does not exist")
    if not folder.is_dir():
        raise OutputError(f"{what} '{p}': '{folder}' is not a folder")
    try:
        fd, probe = tempfile.mkstemp(prefix=".pdestudio-probe.", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        if e.errno == errno.ENOENT:  # the folder exists, yet refuses a new file (/proc, /sys)
            why = "it does not accept new files"
        else:
            why = e.strerror or one_line(e)
        raise OutputError(f"{what} '{p}' cannot be written in folder '{folder}': {why}") from None


class Outputs:
    """The outputs of one run, from the parsed arguments `a`."""

    def __init__(self, a):
        self.a = a
        self.recorder = self.series = None
        self.frames = self.snapshots = None  # Schedules
        self.written: list[Written] = []
        self._last_frame = self._last_snapshot = None

    # ---- before the simulation exists ----------------------------------------------------
    def check_paths(self) -> None:
        from . import export
        a = self.a
        named = [("checkpoint", a.save), ("data file", a.export_data),
                 ("image file", a.export_image), ("video file", a.export_video)]
        seen = {}
        for what, path in named:
            if path is None:
                continue
            key = os.path.realpath(path)
            if key in seen:
                raise OutputError(f"{what} '{path}' is also the {seen[key]}; give each output "
                                  "its own file")
            seen[key] = what
            if what == "data file":
                export.check_data_path(path)
            elif what == "image file":
                export.check_image_path(path)
            elif what == "video file":
                export.check_video_path(path)
            check_writable(path, what)
        series = a.export_data is not None and Path(a.export_data).suffix.lower() == ".pvd"
        if (a.export_every or a.export_dt) and not series:
            raise OutputError("--export-every/--export-dt write a time series: give "
                              "--export-data OUT.pvd")
        if series and not (a.export_every or a.export_dt):
            raise OutputError(f"time series '{a.export_data}' needs --export-every K (steps) or "
                              "--export-dt DT (simulated time)")
        if (a.frame_every or a.frame_dt) and not a.export_video:
            opt = "--frame-every" if a.frame_every else "--frame-dt"
            raise OutputError(f"{opt} applies to a video: give --export-video OUT.mp4|gif")
        if a.range and not (a.export_video or a.export_image):
            raise OutputError("--range applies to pictures: give --export-video or "
                              "--export-image")

    # ---- once the simulation exists, before the first step -------------------------------
    def check_for(self, sim) -> None:
        from . import export
        a = self.a
        if a.field is not None:
            sim.field_info(a.field)
        if a.export_data:
            export.check_data_path(a.export_data, sim.mesh)

    def open(self, sim, end_t: float | None, end_steps: int | None) -> None:
        from . import export
        from .vtk import Series
        a = self.a
        t0, s0 = sim.t, sim.steps
        if a.export_video:
            every, dt = a.frame_every, a.frame_dt
            if every is None and dt is None:  # default: DEFAULT_FRAMES frames over the run
                if end_t is not None:
                    dt = (end_t - t0) / DEFAULT_FRAMES
                else:
                    every = max(1, -(-(end_steps - s0) // DEFAULT_FRAMES))
            self.frames = Schedule(every, dt, t0, s0)
            with writing(a.export_video, "start the video"):
                self.recorder = export.VideoRecorder(a.export_video, sim, field=a.field,
                                                     fps=a.fps, color_range=a.range or "follow")
            log.debug("video %s: drawn by %s; %s", a.export_video, self.recorder.how,
                      export.describe_range(a.range or "follow"))
        if a.export_data and Path(a.export_data).suffix.lower() == ".pvd":
            self.snapshots = Schedule(a.export_every, a.export_dt, t0, s0)
            with writing(a.export_data, "start the time series"):
                self.series = Series(a.export_data, sim.mesh)
        self.record(sim)

    def limits(self):
        """(steps until the next due frame or None, time of the next due frame or None)."""
        steps, t = None, None
        for s in (self.frames, self.snapshots):
            if s is None:
                continue
            if s.every is not None:
                k = s.next_step
                steps = k if steps is None else min(steps, k)
            else:
                t = s.next_t if t is None else min(t, s.next_t)
        return steps, t

    def record(self, sim, final: bool = False) -> None:
        """Take the frames and snapshots that are due (all of them at the end of a run)."""
        from .export import data_arrays
        now = (sim.t, sim.steps)
        if self.recorder is not None and now != self._last_frame and \
                (final or self.frames.due(*now)):
            with writing(self.a.export_video):
                self.recorder.add(sim)
            self._last_frame = now
            self.frames.taken(*now)
        if self.series is not None and now != self._last_snapshot and \
                (final or self.snapshots.due(*now)):
            with writing(self.a.export_data):
                self.series.add(*data_arrays(sim), sim.t, sim.steps)
            self._last_snapshot = now
            self.snapshots.taken(*now)

    # ---- at the end (also after a divergence: the last finite state) ---------------------
    def finish(self, sim, picture=None) -> list[dict]:
        """Write the outputs of the finished run `sim`; `picture`: the simulation the image is
        drawn from where it is not `sim` (a distributed run's decimated copy)."""
        from . import export
        a = self.a
        self.record(sim, final=True)
        if a.save:
            with writing(a.save):
                sim.save(a.save)
            self._done("checkpoint", a.save)
        if a.export_data and self.series is None:
            with writing(a.export_data):
                export.write_data(sim, a.export_data)
            self._done("data", a.export_data)
        if a.export_image:
            with writing(a.export_image):
                how = export.render_image(picture or sim, a.export_image, field=a.field,
                                          color_range=a.range)
            extra = f"drawn by {how}"
            if picture is not None:
                ny, nx = picture.field_shape(a.field or picture.default_field)
                extra += f"; from a decimated copy of {nx} × {ny} cells"
            self._done("image", a.export_image, extra=extra)
        if self.series is not None:
            series, self.series = self.series, None
            try:
                with writing(a.export_data):
                    series.close()
            except BaseException:
                series.abort()
                raise
            self._done("series", a.export_data, frames=series.frames,
                       extra=f"{series.frames} files in {series.folder}")
        if self.recorder is not None:
            rec, self.recorder = self.recorder, None
            try:
                with writing(a.export_video):
                    rec.close()
            except BaseException:
                rec.abort()
                raise
            r = rec.renderer
            seen = f"; the field spanned {r.seen[0]:.4g} .. {r.seen[1]:.4g}" \
                if r is not None and r.seen else ""
            self._done("video", a.export_video, frames=rec.frames,
                       extra=f"{rec.frames} frames, drawn by {rec.how}; "
                             f"{export.describe_range(a.range or 'follow')}{seen}")
        return [w.as_dict() for w in self.written]

    def _done(self, kind, path, frames=None, extra="") -> None:
        self.written.append(Written(kind, str(path), frames))
        log.info("wrote %s%s", path, f" ({extra})" if extra else "")

    def abort(self) -> None:
        """Remove everything half-done (temporary video file, series folder)."""
        for attr in ("recorder", "series"):
            obj = getattr(self, attr)
            setattr(self, attr, None)
            if obj is not None:
                with contextlib.suppress(Exception):
                    obj.abort()
