"""Streaming video encoders: each frame goes to the file (or the encoder) as it arrives, so memory
does not grow with the length of a recording (imageio's Pillow plugin and
`Image.save(save_all=True)` keep every GIF frame until the end: a 6,000-frame recording needed
20 GB).

`GifWriter`: each frame quantised to its own 256-colour palette; the container (header, loop
extension, trailer) is written here, each frame's graphic control extension, image descriptor
with its local colour table and LZW data come from Pillow's per-frame encoder
`GifImagePlugin.getdata`.

`Mp4Writer`: H.264 by the ffmpeg that imageio-ffmpeg ships, fed raw RGB frames through a pipe.
Its messages go to a temporary file and its exit status is checked, so a failure (a full disk, a
file size limit, a killed encoder) is an error naming the cause, never a truncated video taken
for a complete one. It runs in its own session: a Ctrl-C in the terminal reaches pdestudio, which
then stops it, not the encoder in the middle of a frame.
"""
from __future__ import annotations

import signal
import struct
import subprocess
import tempfile

import numpy as np


class GifWriter:
    """`append_data(rgb)` frames of one size (uint8, (h, w, 3)); `close()` ends the file. The
    file object is closed by `close()`; it is the caller's to fsync and rename."""

    def __init__(self, fileobj, fps: int, loop: int = 0):
        self.f = fileobj
        self.delay_ms = 1000.0 / fps
        self.loop = loop
        self.size = None
        self.frames = 0
        self._elapsed = 0.0

    def _header(self, w: int, h: int) -> None:
        # GIF89a, logical screen w x h, no global colour table (each frame has its own)
        self.f.write(b"GIF89a" + struct.pack("<HHBBB", w, h, 0, 0, 0))
        # NETSCAPE2.0 application extension: loop count (0 = forever)
        self.f.write(b"!\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", self.loop) + b"\x00")

    def append_data(self, rgb: np.ndarray) -> None:
        from PIL import GifImagePlugin, Image
        rgb = np.ascontiguousarray(rgb[..., :3], dtype=np.uint8)
        h, w = rgb.shape[:2]
        if self.size is None:
            self.size = (w, h)
            self._header(w, h)
        elif self.size != (w, h):
            raise ValueError(f"GIF frame of {w}x{h}; the recording is {self.size[0]}x"
                             f"{self.size[1]}")
        img = Image.fromarray(rgb, "RGB").quantize(256, method=Image.Quantize.FASTOCTREE,
                                                   dither=Image.Dither.NONE)
        # GIF delays are whole centiseconds: carry the remainder so the average rate is exact
        end = self._elapsed + self.delay_ms
        duration = int(round(end / 10.0)) * 10 - int(round(self._elapsed / 10.0)) * 10
        self._elapsed = end
        for chunk in GifImagePlugin.getdata(img, duration=max(duration, 10),
                                            include_color_table=True, disposal=1):
            self.f.write(chunk)
        self.frames += 1

    def close(self) -> None:
        if self.f is None:
            return
        f, self.f = self.f, None
        try:
            if self.size is not None:
                f.write(b";")
            f.flush()
        finally:
            f.close()


class EncoderError(OSError):
    """The video encoder failed (its last message says why)."""


class Mp4Writer:
    """`append_data(rgb)` frames of one size (uint8, (h, w, 3), w and h even; multiples
    of 16 encode best);
    `close()` waits for ffmpeg and raises EncoderError if it failed; `kill()` stops it."""

    CRF = 15  # what imageio's quality=7 gave (1 - 7/10) * 51

    def __init__(self, path, fps: int):
        self.path, self.fps = str(path), fps
        self.proc = None
        self.log = None

    def _start(self, w: int, h: int) -> None:
        import imageio_ffmpeg
        cmd = [imageio_ffmpeg.get_ffmpeg_exe(), "-y", "-f", "rawvideo", "-vcodec", "rawvideo",
               "-s", f"{w}x{h}", "-pix_fmt", "rgb24", "-r", str(self.fps), "-i", "-", "-an",
               "-vcodec", "libx264", "-pix_fmt", "yuv420p", "-crf", str(self.CRF),
               "-threads", "1", "-v", "error", "-nostdin", self.path]
        self.log = tempfile.TemporaryFile()
        self.size = (w, h)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=self.log, start_new_session=True)

    def append_data(self, rgb: np.ndarray) -> None:
        rgb = np.ascontiguousarray(rgb[..., :3], dtype=np.uint8)
        h, w = rgb.shape[:2]
        if self.proc is None:
            self._start(w, h)
        elif self.size != (w, h):
            raise ValueError(f"video frame of {w}x{h}; the recording is {self.size[0]}x"
                             f"{self.size[1]}")
        try:
            self.proc.stdin.write(memoryview(rgb).cast("B"))
        except (BrokenPipeError, ValueError):
            self._fail()

    def close(self) -> None:
        if self.proc is None:
            raise EncoderError("no frames were recorded")
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        if self.proc.wait() != 0:
            self._fail()
        self._end()

    def _fail(self):
        self.kill()
        msg = self._message()
        code = self.proc.returncode
        how = (signal.strsignal(-code) or f"signal {-code}") if code is not None and code < 0 \
            else f"exit status {code}"
        why = f"the encoder (ffmpeg) failed ({how})"
        self._end()
        raise EncoderError(f"{why}: {msg}" if msg else why)

    def _message(self) -> str:
        try:
            self.log.seek(0)
            lines = [ln.strip() for ln in self.log.read().decode(errors="replace").splitlines()
                     if ln.strip()]
            return lines[-1] if lines else ""
        except (OSError, AttributeError):
            return ""

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc is not None and self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def _end(self) -> None:
        if self.log is not None:
            self.log.close()
            self.log = None

