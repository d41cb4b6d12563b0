"""A streaming GIF writer: each frame is quantised to its own 256-colour palette and encoded to
the file as it arrives, so memory does not grow with the number of frames (imageio's Pillow
plugin and `Image.save(save_all=True)` keep every frame until the end: a 6,000-frame recording
needed 20 GB).

The container (header, loop extension, trailer) is written here; each frame's graphic control
extension, image descriptor with its local colour table and LZW data come from Pillow's
`GifImagePlugin.getdata`, the documented per-frame encoder.
"""
from __future__ import annotations

import struct

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
