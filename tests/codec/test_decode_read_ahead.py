"""A large zstd part is decoded from stored bytes a thread reads ahead of the decompressor (never from the map):
the same bytes as without it, an error (never SIGBUS, never a hang) for a file that shrank or a corrupt frame, and
the reader thread gone once the decode ends, whatever way it ends."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import zstandard

from benchmarks.files import ZtV10Writer
from ztviewer.codec import open_file, zstd_decode
from ztviewer.codec.decode import component_bytes
from ztviewer.codec.errors import CodecError, DecodeError

N = 200_000  # float32: 800 kB decoded; random, so the frame stays about as large


def _values() -> np.ndarray:
    return np.random.default_rng(7).standard_normal(N).astype(np.float32)


def _zstd_file(path, frame: bytes) -> None:
    writer = ZtV10Writer(path)
    writer.add("w", "float32", [N], [frame], encoding="zstd")
    writer.finish()


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ztviewer-read-ahead"]


@pytest.fixture
def ahead(monkeypatch):
    """Every zstd part read ahead, in chunks small enough that the ring turns many times."""
    monkeypatch.setattr(zstd_decode, "AHEAD_BYTES", 1)
    monkeypatch.setattr(zstd_decode, "AHEAD_CHUNK", 4096)


def test_read_ahead_decodes_the_same_bytes(tmp_path, ahead):
    values = _values()
    path = tmp_path / "w.zt"
    _zstd_file(path, zstandard.ZstdCompressor(level=3, write_content_size=False).compress(values.tobytes()))
    with open_file(path) as tf:
        tensor = tf.tensor("w")
        component = tensor.components["data"]
        assert component.length > 100 * 4096  # read in many chunks
        assert bytes(component_bytes(tf, tensor, component)) == values.tobytes()
    assert not _readers()


def test_a_file_that_shrank_is_an_error_and_the_reader_stops(tmp_path, ahead):
    path = tmp_path / "w.zt"
    _zstd_file(path, zstandard.ZstdCompressor(level=3).compress(_values().tobytes()))
    with open_file(path) as tf:
        tensor = tf.tensor("w")
        component = tensor.components["data"]
        with open(path, "r+b") as other:
            other.truncate(component.offset + component.length // 2)
        with pytest.raises(CodecError, match="ends at byte") as caught:
            component_bytes(tf, tensor, component)
        assert (caught.value.tensor, caught.value.component) == ("w", "data")
    assert not _readers()


def test_a_corrupt_frame_is_an_error_and_the_reader_stops(tmp_path, ahead):
    frame = bytearray(zstandard.ZstdCompressor(level=3).compress(_values().tobytes()))
    frame[len(frame) // 2: len(frame) // 2 + 64] = bytes(64)
    path = tmp_path / "w.zt"
    _zstd_file(path, bytes(frame))
    with open_file(path) as tf:
        tensor = tf.tensor("w")
        with pytest.raises(DecodeError):
            component_bytes(tf, tensor, tensor.components["data"])
    assert not _readers()
