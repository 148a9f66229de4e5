"""The v2 objects map read as columns (:mod:`ztviewer.codec.formats.zt_v2.columns`) builds exactly what the
per-object loop and the full reader build, and leaves any unusual map to them."""
from __future__ import annotations

import pytest
import xxhash

from tests.codec.formats.v2_builders import assemble, dense
from ztviewer.codec import open_file
from ztviewer.codec.formats.zt_v2 import columns, fast, reader
from ztviewer.codec.tensor_table import TensorTable

DIGEST = f"xxh3:{xxhash.xxh3_64_intdigest(bytes(24)):016x}"


def _objects(**extra_fields):
    """Mixed dtypes, a logical type, digests on some parts only, a scalar and an empty tensor."""
    return {
        "a": dense("f32", [2, 3], 4096, 24, digest=DIGEST),
        "b": dense("u8", [3], 8192, 3, type="f8_e4m3fn"),
        "c": dense("i64", [], 12288, 8),
        "d": dense("bf16", [0, 5], 16384, 0),
        "bb": dense("f32", extra_fields.pop("shape", [1]), 20480, 8, **{"type": "complex64", **extra_fields}),
    }


def _file(tmp_path, objects, name="m.zt"):
    blobs = {4096: bytes(24), 8192: bytes(3), 12288: bytes(8), 20480: bytes(8)}
    path = tmp_path / name
    path.write_bytes(assemble({"objects": objects}, blobs))
    return path


def _three_ways(path, monkeypatch):
    """The file read by the columns (the bytes path off), by the per-object loop, by the full reader."""
    with monkeypatch.context() as patch:
        patch.setattr(reader, "read_plain", lambda data: None)
        table_tf = open_file(path)
        patch.setattr(columns, "objects_table", lambda objects: None)
        loop_tf = open_file(path)
        patch.setattr(fast, "PART_KEYS", {})
        full_tf = open_file(path)
    return table_tf, loop_tf, full_tf


def test_a_plain_map_becomes_a_table_equal_to_the_loop_and_the_full_reader(tmp_path, monkeypatch):
    path = _file(tmp_path, _objects())
    bytes_tf = open_file(path)
    table_tf, loop_tf, full_tf = _three_ways(path, monkeypatch)
    assert isinstance(table_tf.tensors, TensorTable) and not isinstance(loop_tf.tensors, TensorTable)
    assert isinstance(bytes_tf.tensors, TensorTable) and list(bytes_tf.tensors) == list(full_tf.tensors)
    assert table_tf.tensor_names() == ["a", "b", "c", "d", "bb"]
    b = table_tf.tensors[1]  # built alone, then with the rest
    assert b.components["data"].extra == {"dtype": "u8", "type": "f8_e4m3fn", "digest_over": "decoded"}
    assert table_tf.tensors[4].dtype == "complex64" and table_tf.tensors[4].components["data"].dtype == "float32"
    for tf in (table_tf, loop_tf):
        assert list(tf.tensors) == list(full_tf.tensors)
        assert list(tf.all_problems()) == list(full_tf.all_problems()) == []
    assert table_tf.tensors[0].components["data"].digest == DIGEST
    assert table_tf.tensors[0].components["data"].uncompressed_length == 24


@pytest.mark.parametrize("unusual", [
    {"digest": "xxh3:0123"},                # digest syntax
    {"digest": "sha256:" + "0" * 63},        # one hex digit short
    {"shape": [16], "type": "f4_e2m1"},      # a packed logical type (f32 is not even its storage)
    {"encoding": "zt.zstd-seekable/1"},      # a key the table does not take
])
def test_an_unusual_part_sends_the_map_to_the_loop(tmp_path, monkeypatch, unusual):
    path = _file(tmp_path, _objects(**unusual))
    table_tf, _, full_tf = _three_ways(path, monkeypatch)
    assert not isinstance(table_tf.tensors, TensorTable)
    assert list(table_tf.all_problems()) == list(full_tf.all_problems())


def test_a_size_that_does_not_match_sends_the_map_to_the_loop(tmp_path, monkeypatch):
    objects = _objects()
    objects["c"] = dense("i64", [], 12288, 16)
    table_tf, _, full_tf = _three_ways(_file(tmp_path, objects), monkeypatch)
    assert not isinstance(table_tf.tensors, TensorTable)
    assert [p.rule for p in table_tf.all_problems()] == [p.rule for p in full_tf.all_problems()] != []


def test_a_name_with_nul_is_not_taken_by_the_table():
    def plain():  # keys in deterministic order, as a canonical manifest decodes
        return {"parts": {"data": {"blob": [4096, 4], "dtype": "f32"}}, "shape": [1], "layout": "dense"}

    assert columns.objects_table({"a\0b": plain()}) is None
    assert columns.objects_table({"ab": plain()}) is not None
