"""The decoded-data cache keys by the opened file (each open, each generation of a v2 file), never by path alone:
an earlier generation shown beside the current one gets its own values, and closing one tab keeps the other's."""
from __future__ import annotations

import struct
from pathlib import Path

import cbor2
import numpy as np

from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.registry import open_file
from ztviewer.codec.writers.cbor import dumps_deterministic
from ztviewer.codec.writers.zt_v2_append import append_manifest
from ztviewer.session.decode_cache import DecodedCache
from ztviewer.session.inspect_data import load_dense
from ztviewer.session.zt_v2_facts import generation_rows, open_generation_row


def _two_generations(path: Path) -> None:
    """Generation 1 holds a = 1.0 and b = 2.0 (zstd, so decoded data is cached); generation 2 deleted a."""
    save_arrays(path, {"a": np.full(64, 1.0, np.float32), "b": np.full(64, 2.0, np.float32)}, to="zt-v2",
                compress=("zstd", 3))
    data = path.read_bytes()
    offset, length = struct.unpack("<QQ", data[-40:-24])
    root = cbor2.loads(data[offset:offset + length])
    del root["objects"]["a"]
    append_manifest(path, dumps_deterministic(root), 65536)


def _value(tf, name: str, cache: DecodedCache) -> float:
    tensor = tf.tensor(name)
    assert tensor.components["data"].encoding != "raw"
    return float(load_dense(tf, tensor, cache=cache).array.ravel()[0])


def test_an_earlier_generation_and_the_current_file_do_not_share_decoded_values(tmp_path: Path) -> None:
    path = tmp_path / "g.zt"
    _two_generations(path)
    cache = DecodedCache()
    with open_file(path) as current:
        assert [t.name for t in current.tensors] == ["b"]
        assert _value(current, "b", cache) == 2.0          # cached as the current file's tensor 0
        rows = generation_rows(current)
        first = open_generation_row(str(path), next(r for r in rows if r.number == 1))
        try:
            assert first.tensor("a").index == 0 == current.tensor("b").index
            assert _value(first, "a", cache) == 1.0        # its own tensor 0, not the current file's
            assert _value(first, "b", cache) == 2.0
            cache.drop_file(first)                          # closing the generation's tab
            assert len(cache) == 1                          # keeps the current file's entry
            cache.drop_file(current)
            assert len(cache) == 0
        finally:
            first.close()


def test_a_file_reopened_after_a_rewrite_is_not_served_the_old_values(tmp_path: Path) -> None:
    path = tmp_path / "r.zt"
    save_arrays(path, {"x": np.full(64, 3.0, np.float32)}, to="zt-v2", compress=("zstd", 3))
    cache = DecodedCache()
    with open_file(path) as before:
        assert _value(before, "x", cache) == 3.0
    save_arrays(path, {"x": np.full(64, 4.0, np.float32)}, to="zt-v2", compress=("zstd", 3))
    with open_file(path) as after:
        assert _value(after, "x", cache) == 4.0
