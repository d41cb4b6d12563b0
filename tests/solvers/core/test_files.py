"""atomic_write without its fsync, and sync_all: the files of many small writes put on disk with
one wait (syncfs on Linux), or an fsync each where there is no syncfs."""
import os

import pytest

from pdestudio.solvers import atomic_write, sync_all
from pdestudio.solvers.core import files


@pytest.fixture
def counted(monkeypatch):
    calls = []
    fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append("fsync") or fsync(fd))
    return calls


def test_a_write_without_sync_is_whole_and_not_flushed(tmp_path, counted):
    path = tmp_path / "row.json"
    path.write_bytes(b"old")
    with atomic_write(path, sync=False) as f:
        f.write(b'{"member": 1}')
    assert path.read_bytes() == b'{"member": 1}' and counted == []
    assert [p.name for p in tmp_path.iterdir()] == ["row.json"]  # no temporary file left
    with atomic_write(path) as f:  # the default still syncs
        f.write(b"{}")
    assert counted == ["fsync"]


def test_sync_all_waits_once_per_filesystem_or_fsyncs_each(tmp_path, counted, monkeypatch):
    paths = [tmp_path / f"{i}.json" for i in range(5)]
    for p in paths:
        p.write_bytes(b"{}")
    gone = tmp_path / "gone.json"
    if files._syncfs() is not None:
        real, waits = files._syncfs(), []
        monkeypatch.setattr(files, "_syncfs", lambda: lambda fd: waits.append(fd) or real(fd))
        sync_all(paths + [gone])
        assert len(waits) == 1 and counted == []
    monkeypatch.setattr(files, "_syncfs", lambda: None)  # no syncfs (not Linux)
    sync_all(paths + [gone])
    assert counted == ["fsync"] * 5
    sync_all([])
