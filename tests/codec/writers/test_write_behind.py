"""Large components are written (and hashed) on a thread while the next chunk is decoded: the output bytes and
digests are exact, decode buffers are never refilled while still being written, and a write error or a cancel
stops the save with nothing left behind."""
from __future__ import annotations

import errno
import threading

import crc32c
import numpy as np
import pytest
from safetensors.numpy import save_file

import ztviewer.codec.writers.output as output
from ztviewer.codec import open_file
from ztviewer.codec.convert import convert
from ztviewer.codec.decode import iter_decoded
from ztviewer.codec.decode_rules import CHUNK
from ztviewer.codec.errors import Cancelled
from ztviewer.codec.save import stale_temporaries

ELEMENTS = 5 * CHUNK // 4 + 12_345  # five full decode chunks and a short one


@pytest.fixture(scope="module")
def zstd_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("write_behind")
    values = (np.arange(ELEMENTS, dtype=np.uint32) % 1009).astype(np.float32)
    st = folder / "in.safetensors"
    save_file({"big": values, "small": np.arange(10, dtype=np.float32)}, str(st))
    path = folder / "zstd.zt"
    convert(st, path, to="zt", compress=("zstd", 1))
    return path, values


def _writers_started(monkeypatch) -> list[int]:
    started: list[int] = []
    enter = output.WriteBehind.__enter__

    def counting(self):
        started.append(1)
        return enter(self)

    monkeypatch.setattr(output.WriteBehind, "__enter__", counting)
    return started


def test_zstd_to_raw_bytes_and_digest_are_exact(zstd_file, tmp_path, monkeypatch):
    path, values = zstd_file
    started = _writers_started(monkeypatch)
    out = tmp_path / "raw.zt"
    convert(path, out, to="zt", compress="raw", digest="crc32c")
    assert len(started) == 1  # the big tensor only; the small one is written in line
    with open_file(out) as tf:
        component = tf.tensor("big").components["data"]
        stored = bytes(tf.source.view(component.offset, component.length))
    assert stored == values.tobytes()
    assert component.digest == f"crc32c:0x{crc32c.crc32c(values.tobytes()):08X}"
    assert not [t for t in threading.enumerate() if t.name == "ztviewer-write-behind"]


def test_a_chunk_stays_valid_until_that_many_more_are_requested(zstd_file):
    path, values = zstd_file
    expected = values.tobytes()
    with open_file(path) as tf:
        tensor = tf.tensor("big")
        held: list[tuple[int, memoryview]] = []
        position = 0
        for chunk in iter_decoded(tf, tensor, tensor.components["data"], buffers=3):
            held.append((position, chunk))
            position += len(chunk)
            for start, older in held[-3:]:  # this chunk and the two before it are intact
                assert bytes(older) == expected[start:start + len(older)]
        assert position == len(expected) and len(held) == 6


def test_a_write_error_on_the_writer_thread_stops_the_save(zstd_file, tmp_path, monkeypatch):
    path, _ = zstd_file
    real = output.Output._write_all
    calls = []

    def failing(self, part):
        calls.append(len(part))
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(self, part)

    monkeypatch.setattr(output.Output, "_write_all", failing)
    out = tmp_path / "full.zt"
    with pytest.raises(OSError, match="No space left"):
        convert(path, out, to="zt", compress="raw")
    assert not out.exists() and not stale_temporaries(str(out))
    assert not [t for t in threading.enumerate() if t.name == "ztviewer-write-behind"]


def test_cancel_while_writing_behind(zstd_file, tmp_path):
    path, _ = zstd_file
    seen = []
    out = tmp_path / "cancelled.zt"
    with pytest.raises(Cancelled):
        convert(path, out, to="zt", compress="raw", progress=lambda done, total: seen.append(done),
                cancelled=lambda: bool(seen) and seen[-1] > 2 * CHUNK)
    assert not out.exists() and not stale_temporaries(str(out))
    assert not [t for t in threading.enumerate() if t.name == "ztviewer-write-behind"]
