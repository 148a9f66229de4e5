"""Index and manifest JSON with integers past 64 bits are read exactly (orjson would round them to floats)."""
import json
import struct

from ztviewer.codec.multifile.detect import open_path
from ztviewer.codec.multifile.shards import read_json


def _shard(path, extra=b""):
    header = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)


def test_read_json_keeps_integers_exact(tmp_path):
    p = tmp_path / "index.json"
    p.write_text('{"a": 18446744073709551617, "b": -9223372036854775809}')
    doc = read_json(str(p))
    assert doc == {"a": 18446744073709551617, "b": -9223372036854775809}
    assert type(doc["a"]) is int


def test_hf_total_size_past_64_bits_is_reported_as_written(tmp_path):
    _shard(tmp_path / "a.safetensors")
    (tmp_path / "model.safetensors.index.json").write_text(
        '{"metadata": {"total_size": 18446744073709551617}, "weight_map": {"w": "a.safetensors"}}')
    tf = open_path(str(tmp_path))
    assert tf.attributes["total_size"] == 18446744073709551617 and type(tf.attributes["total_size"]) is int
    messages = [p.message for p in tf.all_problems()]
    assert any("18,446,744,073,709,551,617" in m for m in messages), messages


def test_spark_bytes_past_64_bits_is_a_size_mismatch_not_a_non_integer(tmp_path):
    name = "part-00000-0000-12345678-1234-1234-1234-123456789abc.safetensors"
    _shard(tmp_path / name)
    (tmp_path / "dataset_manifest.json").write_text(
        '{"format_version": "1.0", "safetensors_version": "1.0", "total_samples": 1, '
        '"total_bytes": 18446744073709551616, "shards": [{"shard_path": "%s", "samples_count": 1, '
        '"bytes": 18446744073709551616}]}' % name)
    tf = open_path(str(tmp_path))
    messages = [p.message for p in tf.all_problems()]
    assert not any("not a non-negative integer" in m for m in messages), messages
    assert any("the manifest says 18,446,744,073,709,551,616 bytes" in m for m in messages), messages
