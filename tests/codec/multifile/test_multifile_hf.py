"""Sharded Hugging Face checkpoints: one set across shards, problems naming shard and tensor, CLI verdicts."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests.codec.multifile.test_multifile_builders import hf_arrays, hf_checkpoint
from ztviewer.cli import main
from ztviewer.codec.check import check_file
from ztviewer.codec.content_hash import array_sha256, content_sha256
from ztviewer.codec.dense import to_dense
from ztviewer.codec.multifile import TensorSet, open_path, read_hf_index

SHARD1, SHARD2, SHARD3 = (f"model-0000{i}-of-00003.safetensors" for i in (1, 2, 3))


def messages(tf, severity: str | None = None) -> list[str]:
    return [p.describe() for p in tf.all_problems() if severity is None or p.severity.value == severity]


def test_clean_checkpoint_is_one_set_with_each_tensor_in_its_shard(tmp_path):
    arrays = hf_arrays()
    index = hf_checkpoint(tmp_path, arrays)
    with read_hf_index(index) as tf:
        assert isinstance(tf, TensorSet)
        assert (tf.format, tf.variant, tf.readable, tf.source) == ("safetensors-sharded", "hf-index", True, None)
        assert tf.path == str(index)
        assert messages(tf) == []
        assert tf.attributes == {"total_size": sum(a.nbytes for t in arrays.values() for a in t.values())}
        expected = {(name, shard) for shard, tensors in arrays.items() for name in tensors}
        assert {(t.name, t.shard) for t in tf.tensors} == expected
        assert [t.index for t in tf.tensors] == list(range(6))
        assert tf.size == sum((tmp_path / s).stat().st_size for s in arrays)
        assert [row["name"] for row in tf.extra["shards"]] == [SHARD1, SHARD2, SHARD3]
        assert [row["tensors"] for row in tf.extra["shards"]] == [2, 2, 2]
        for t in tf.tensors:
            want = arrays[t.shard][t.name]
            assert t.source.path == str(tmp_path / t.shard)
            np.testing.assert_array_equal(to_dense(tf, t), want)
            assert content_sha256(tf, t) == array_sha256(want, t.dtype)
        report = check_file(tf)
        assert report.ok and report.tensors_decoded == 6


@pytest.mark.parametrize("how", ["folder", "index", "shard"])
def test_every_gesture_opens_the_whole_set(tmp_path, how):
    index = hf_checkpoint(tmp_path)
    target = {"folder": tmp_path, "index": index, "shard": tmp_path / SHARD2}[how]
    with open_path(target) as tf:
        assert tf.format == "safetensors-sharded" and len(tf.tensors) == 6
        if how == "shard":
            assert tf.extra["opened_from"] == str(tmp_path / SHARD2)
            assert SHARD2 in tf.extra["note"] and "whole set" in tf.extra["note"]
        else:
            assert "opened_from" not in tf.extra


def test_a_lone_safetensors_file_stays_a_single_file(tmp_path):
    hf_checkpoint(tmp_path / "set")
    other = tmp_path / "set" / "unrelated.safetensors"
    other.write_bytes((tmp_path / "set" / SHARD1).read_bytes())
    with open_path(other) as tf:
        assert tf.format == "safetensors" and len(tf.tensors) == 2


def test_missing_shard_is_an_error_naming_it_and_the_rest_still_opens(tmp_path, capsys):
    index = hf_checkpoint(tmp_path, skip_write=(SHARD2,))
    with open_path(index) as tf:
        errors = messages(tf, "error")
        assert len(errors) == 1
        assert SHARD2 in errors[0] and "missing" in errors[0] and "2 mapped tensor(s)" in errors[0]
        assert "model.layers.1.weight" in errors[0]
        assert sorted(t.shard for t in tf.tensors) == [SHARD1, SHARD1, SHARD3, SHARD3]
        row = tf.extra["shards"][1]
        assert row["missing"] is True and row["problems"] == 1 and row["size"] is None
    assert main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert SHARD2 in out and "FAILED" in out


def test_mapped_tensor_absent_from_its_shard(tmp_path, capsys):
    arrays = hf_arrays()
    weight_map = {t: s for s, ts in arrays.items() for t in ts}
    weight_map["model.layers.9.extra"] = SHARD3
    index = hf_checkpoint(tmp_path, arrays, weight_map=weight_map)
    with open_path(index) as tf:
        ghost = tf.tensor("model.layers.9.extra")
        assert ghost.shard == SHARD3 and ghost.extra == {"missing": True} and ghost.components == {}
        assert ghost.has_errors and SHARD3 in ghost.problems[0].message
        assert [t.index for t in tf.tensors] == list(range(7))
        assert check_file(tf).tensors_decoded == 6
    assert main(["check", str(index)]) == 1
    out = capsys.readouterr().out
    assert "model.layers.9.extra" in out and SHARD3 in out and "does not contain it" in out


def test_tensor_in_a_shard_but_not_in_the_map_is_a_warning(tmp_path, capsys):
    arrays = hf_arrays()
    weight_map = {t: s for s, ts in arrays.items() for t in ts}
    del weight_map["model.layers.0.bias"]
    index = hf_checkpoint(tmp_path, arrays, weight_map=weight_map, total_size=None)
    with open_path(index) as tf:
        bias = tf.tensor("model.layers.0.bias")
        assert bias.shard == SHARD1 and not bias.has_errors
        assert [p.severity.value for p in bias.problems] == ["warning"]
        assert "does not list it" in bias.problems[0].message and SHARD1 in bias.problems[0].message
    assert main(["check", str(index)]) == 0
    out = capsys.readouterr().out
    assert "warning" in out and "model.layers.0.bias" in out and SHARD1 in out


def test_tensor_mapped_to_another_shard(tmp_path):
    arrays = hf_arrays()
    weight_map = {t: s for s, ts in arrays.items() for t in ts}
    weight_map["model.layers.0.bias"] = SHARD2
    with open_path(hf_checkpoint(tmp_path, arrays, weight_map=weight_map, total_size=None)) as tf:
        text = "\n".join(messages(tf))
        assert f"weight_map maps it to shard {SHARD2!r}" in text  # the copy found in shard 1
        assert "does not contain it" in text                     # and the one missing from shard 2


def test_wrong_total_size_is_a_warning_with_both_figures(tmp_path, capsys):
    index = hf_checkpoint(tmp_path, total_size=12345)
    with open_path(index) as tf:
        (text,) = messages(tf)
        assert text.startswith("metadata.total_size is 12,345 but the 6 mapped tensors' data add up to 168 bytes")
    assert main(["check", str(index)]) == 0
    assert "total_size" in capsys.readouterr().out


def test_total_size_equal_to_the_parameter_count_is_explained(tmp_path):
    with open_path(hf_checkpoint(tmp_path, total_size=48)) as tf:
        assert "parameter count" in messages(tf)[0]


def test_integral_float_total_size_is_accepted(tmp_path):
    with open_path(hf_checkpoint(tmp_path, total_size=168.0)) as tf:
        assert messages(tf) == []


@pytest.mark.parametrize("text, expect", [
    ("{not json", "not valid JSON"),
    ('{"metadata": {}}', "'weight_map' is missing"),
    ('{"weight_map": []}', "not an object"),
])
def test_unusable_index_is_unreadable_not_raised(tmp_path, capsys, text, expect):
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(text)
    tf = open_path(index)
    assert not tf.readable and tf.tensors == [] and expect in tf.problems[0].message
    assert main(["info", str(index)]) == 1
    assert main(["check", str(tmp_path)]) == 1
    assert expect in capsys.readouterr().out


def test_corrupt_shard_is_reported_on_the_set(tmp_path):
    index = hf_checkpoint(tmp_path)
    (tmp_path / SHARD3).write_bytes(struct.pack("<Q", 10**6) + b"{}")
    with open_path(index) as tf:
        (text,) = messages(tf, "error")
        assert SHARD3 in text and "not a readable safetensors file" in text and "header length" in text
        assert len(tf.tensors) == 4


def test_a_shards_own_tensor_problem_names_the_shard(tmp_path):
    index = hf_checkpoint(tmp_path)
    path = tmp_path / SHARD2
    data = bytearray(path.read_bytes())
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header["model.layers.1.bias"]["shape"] = [5]  # 5 × f16 = 10 bytes, but the offsets span 8
    text = json.dumps(header, separators=(",", ":")).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + bytes(data[8 + n:]))
    with open_path(index) as tf:
        bias = tf.tensor("model.layers.1.bias")
        assert bias.has_errors and all(p.message.startswith(f"shard {SHARD2!r}: ") for p in bias.problems)
        assert tf.extra["shards"][1]["problems"] == len(bias.problems)
        assert check_file(tf).tensors_decoded == 5


def test_index_pointing_outside_its_folder_is_refused(tmp_path):
    save_file({"x": np.arange(2, dtype=np.float32)}, str(tmp_path / "evil.safetensors"))   # there, and readable
    index = tmp_path / "sub" / "model.safetensors.index.json"
    index.parent.mkdir()
    index.write_text(json.dumps({"weight_map": {"x": "../evil.safetensors"}}))
    with open_path(index) as tf:
        assert "inside it" in messages(tf, "error")[0]
        assert all(t.source is None for t in tf.tensors)   # nothing was read from it
        assert all(s.source is None for s in tf.shards)


def test_close_closes_every_shard(tmp_path):
    tf = open_path(hf_checkpoint(tmp_path))
    sources = {id(s.source): s.source for s in tf.shards}
    assert len(sources) == 3
    tf.close()
    for source in sources.values():
        with pytest.raises(ValueError):
            source.view(0, 8)


def test_info_json_lists_every_tensor_with_its_shard(tmp_path, capsys):
    arrays = hf_arrays()
    hf_checkpoint(tmp_path, arrays)
    assert main(["info", "--json", "--hash", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "safetensors-sharded" and doc["size"] > 0
    listed = {(t["name"], t["shard"]) for t in doc["tensors"]}
    assert listed == {(n, s) for s, ts in arrays.items() for n in ts}
    for t in doc["tensors"]:
        assert t["sha256"] == array_sha256(arrays[t["shard"]][t["name"]], t["dtype"])
    assert [s["name"] for s in doc["extra"]["shards"]] == [SHARD1, SHARD2, SHARD3]


def test_info_text_shows_shards(tmp_path, capsys):
    hf_checkpoint(tmp_path)
    assert main(["info", str(tmp_path / SHARD1)]) == 0
    out = capsys.readouterr().out
    assert "shards: 3" in out and f"(shard {SHARD3})" in out and "whole set" in out


def test_export_from_a_set(tmp_path, capsys):
    arrays = hf_arrays()
    hf_checkpoint(tmp_path, arrays)
    out = tmp_path / "w.npy"
    assert main(["export", str(tmp_path), "model.layers.2.weight", "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out), arrays[SHARD3]["model.layers.2.weight"])


def test_shard_file_is_one_shard_with_its_header_regions(tmp_path):
    with open_path(hf_checkpoint(tmp_path)) as tf:
        for shard in tf.shards:
            one = tf.shard_file(shard.source)
            (length,) = struct.unpack("<Q", (tmp_path / shard.name).read_bytes()[:8])
            assert [(r.kind, r.offset, r.length) for r in one.regions] == [("header-length", 0, 8),
                                                                            ("header", 8, length)]
            assert [t.name for t in one.tensors] == [t.name for t in tf.tensors if t.shard == shard.name]
            assert one.source is shard.source and one.format == "safetensors"
