"""Tools that build damaged and hostile .npz files from good ones: rewrite a checkpoint's manifest
(keeping or breaking its checksums), swap an array, lie about zip member sizes, compression bombs.
Used by the checkpoint tests and the fuzz generator."""
from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np


def members(path) -> dict[str, bytes]:
    """The raw (uncompressed) bytes of every member, in order."""
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def write_zip(path, parts: dict[str, bytes], compress: bool = False) -> Path:
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return Path(path)


def npy(a) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(a), allow_pickle=True)
    return buf.getvalue()


def meta_of(path) -> dict:
    raw = members(path)["__meta__.npy"]
    return json.loads(str(np.load(io.BytesIO(raw), allow_pickle=False)))


def meta_bytes(meta) -> bytes:
    text = meta if isinstance(meta, str) else json.dumps(meta)
    return npy(np.array(text))


def with_meta(src, dst, meta) -> Path:
    """`src` with its manifest replaced (a dict, or raw JSON text)."""
    parts = members(src)
    parts["__meta__.npy"] = meta_bytes(meta)
    return write_zip(dst, parts)


def with_array(src, dst, name: str, a, fix_manifest: bool = True) -> Path:
    """`src` with array `name` (e.g. 'state/T') replaced by `a`; with fix_manifest the manifest
    declares the new shape, dtype and checksum (a consistent file whose content is wrong)."""
    parts = members(src)
    a = np.asarray(a)
    parts[name + ".npy"] = npy(a)
    if fix_manifest:
        meta = meta_of(src)
        c = np.ascontiguousarray(a)
        meta.setdefault("arrays", {})[name] = {
            "shape": list(a.shape), "dtype": str(a.dtype),
            "sha256": hashlib.sha256(c.tobytes()).hexdigest()}
        parts["__meta__.npy"] = meta_bytes(meta)
    return write_zip(dst, parts)


def lie_about_size(src, dst, member: str, file_size: int) -> Path:
    """Patch the uncompressed size of `member` in its local header and in the central directory
    (the bytes stay as they are): a small member that claims to be huge, or the reverse."""
    data = bytearray(Path(src).read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo(member)
    lh = info.header_offset
    struct.pack_into("<L", data, lh + 22, file_size & 0xFFFFFFFF)
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        n = struct.unpack_from("<H", data, pos + 28)[0]
        name = bytes(data[pos + 46:pos + 46 + n]).decode()
        if name == member:
            struct.pack_into("<L", data, pos + 24, file_size & 0xFFFFFFFF)
            break
        pos = data.find(b"PK\x01\x02", pos + 4)
    Path(dst).write_bytes(bytes(data))
    return Path(dst)


def bomb(src, dst, name: str, nbytes: int, honest: bool = True) -> Path:
    """`src` with member `name` replaced by a deflated stream of `nbytes` zero bytes after a
    valid .npy header (a compression bomb: a few hundred KB that inflate to `nbytes`). With
    honest=False the zip declares the original member's size instead (a lying bomb)."""
    parts = members(src)
    original = len(parts[name + ".npy"])
    header = npy(np.zeros(0))[:128]
    body, crc = zeros_deflated(nbytes, raw=True, prefix=header)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for n, d in parts.items():
            if n == name + ".npy":
                info = zipfile.ZipInfo(n)
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, b"")  # placeholder, rewritten below
            else:
                z.writestr(n, d)
    raw = _replace_deflated(buf.getvalue(), name + ".npy", body, crc,
                            nbytes + 128 if honest else original)
    Path(dst).write_bytes(raw)
    return Path(dst)


def _replace_deflated(zipped: bytes, member: str, body: bytes, crc: int, declared: int) -> bytes:
    """Rebuild the archive with `member` holding the raw deflate stream `body`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(zipped)) as zin:
        entries = []
        for info in zin.infolist():
            data = zin.read(info)
            offset = out.tell()
            name = info.filename.encode()
            if info.filename == member:
                comp, method, size, c = body, 8, declared, crc
            else:
                comp, method, size, c = data, 0, len(data), zlib.crc32(data)
            out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 0, c,
                                  len(comp), size, len(name), 0) + name + comp)
            entries.append((name, method, c, len(comp), size, offset))
        cd = out.tell()
        for name, method, c, csize, size, offset in entries:
            out.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, method, 0, 0, c, csize,
                                  size, len(name), 0, 0, 0, 0, 0, offset) + name)
        end = out.tell()
        out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries),
                              end - cd, cd, 0))
    return out.getvalue()


def flip_bit(src, dst, position: int, bit: int = 0) -> Path:
    data = bytearray(Path(src).read_bytes())
    data[position % len(data)] ^= 1 << bit
    Path(dst).write_bytes(bytes(data))
    return Path(dst)


def truncate(src, dst, length: int) -> Path:
    Path(dst).write_bytes(Path(src).read_bytes()[:length])
    return Path(dst)


def zeros_deflated(nbytes: int, raw: bool = False, prefix: bytes = b"") -> tuple[bytes, int]:
    """A deflate stream of `prefix` + `nbytes` zero bytes (rounded down to MiB) built in
    milliseconds: one full-flushed 1 MiB block repeated (each one starts afresh, so the copies
    concatenate). zlib format (header, Adler-32), or raw deflate with raw=True. Returns the
    stream and the CRC-32 of the data (for zip members)."""
    mib = bytes(1 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, -15 if raw else 15)
    first = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    assert again == block
    tail = c.flush()
    k = nbytes >> 20
    crc, adler = zlib.crc32(prefix), zlib.adler32(prefix)
    for _ in range(k):
        crc, adler = zlib.crc32(mib, crc), zlib.adler32(mib, adler)
    if raw:
        return first + block * k + tail, crc
    return first + block * k + tail[:-4] + struct.pack(">I", adler), crc


def bomb_zip(member: str, nbytes: int) -> bytes:
    """An .npz holding one deflated member: a valid .npy header and `nbytes` zeros (declared
    honestly), a few hundred KB on disk."""
    header = npy(np.zeros(0))[:128]
    body, crc = zeros_deflated(nbytes, raw=True, prefix=header)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(member, b"")
    return _replace_deflated(buf.getvalue(), member, body, crc, nbytes + len(header))
