"""Small copies are gathered; whether their source changed on disk is asked once per gathered buffer, and a change
is still noticed at the next one."""
from __future__ import annotations

import os

import pytest

from ztviewer.codec.errors import SourceChanged
from ztviewer.codec.source import Source
from ztviewer.codec.writers.output import GATHER, Output


def _source(tmp_path, monkeypatch) -> tuple[Source, list[int]]:
    path = tmp_path / "in.bin"
    path.write_bytes(bytes(range(256)) * 64)
    source = Source(path)
    asked: list[int] = []
    ask = source.require_unchanged

    def counting() -> None:
        asked.append(1)
        ask()

    monkeypatch.setattr(source, "require_unchanged", counting)
    return source, asked


def test_small_copies_ask_once_per_gathered_buffer(tmp_path, monkeypatch):
    source, asked = _source(tmp_path, monkeypatch)
    fd = os.open(tmp_path / "out.bin", os.O_WRONLY | os.O_CREAT)
    try:
        out = Output(fd)
        copies = 3 * GATHER // 1024
        for i in range(copies):
            out.copy_range(source, (i * 4) % 16384, 1024)
        out.flush()
    finally:
        os.close(fd)
        source.close()
    assert 1 <= len(asked) <= 4  # one per gathered MiB, not one per copy
    data = (tmp_path / "out.bin").read_bytes()
    assert len(data) == copies * 1024
    whole = bytes(range(256)) * 64
    assert data[1024 * 5:1024 * 6] == whole[20:20 + 1024]


def test_a_change_on_disk_is_noticed_at_the_next_gathered_buffer(tmp_path, monkeypatch):
    source, _ = _source(tmp_path, monkeypatch)
    fd = os.open(tmp_path / "out.bin", os.O_WRONLY | os.O_CREAT)
    try:
        out = Output(fd)
        out.copy_range(source, 0, 16)
        out.flush()
        stat = os.stat(source.path)
        os.utime(source.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # rewritten in place
        with pytest.raises(SourceChanged):
            out.copy_range(source, 16, 16)
    finally:
        os.close(fd)
        source.close()
