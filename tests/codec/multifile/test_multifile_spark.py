"""safetensors-spark datasets: manifest against shards, schema, naming, tensor index, CLI verdicts."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from tests.codec.multifile.test_multifile_builders import spark_dataset, spark_name
from ztviewer.cli import main
from ztviewer.codec.check import check_file
from ztviewer.codec.dense import to_dense
from ztviewer.codec.multifile import open_path, read_spark_dataset


def messages(tf, severity: str | None = None) -> list[str]:
    return [p.describe() for p in tf.all_problems() if severity is None or p.severity.value == severity]


def test_clean_batch_dataset(tmp_path, capsys):
    manifest = spark_dataset(tmp_path)
    with read_spark_dataset(manifest) as tf:
        assert (tf.format, tf.variant, tf.readable) == ("safetensors-spark", "manifest v1.0", True)
        assert messages(tf) == []
        assert tf.attributes["total_samples"] == 12 and "shards" not in tf.attributes
        assert tf.attributes["schema"]["image"] == {"dtype": "F32", "shape": [4, 3, 2]}
        names = [spark_name(i) for i in range(3)]
        pairs = [(t.shard, t.name) for t in tf.tensors]  # shard by shard, each in its header's order
        assert sorted(pairs) == [(s, n) for s in names for n in ("image", "label")]
        assert [shard for shard, _ in pairs] == [s for s in names for _ in range(2)]
        rows = tf.extra["shards"]
        assert [(r["name"], r["samples_count"], r["samples_found"], r["tensors"]) for r in rows] == \
            [(n, 4, 4, 2) for n in names]
        assert all(r["bytes"] == r["size"] for r in rows)
        for i, t in enumerate(t for t in tf.tensors if t.name == "image"):
            np.testing.assert_array_equal(to_dense(tf, t), np.full((4, 3, 2), i, np.float32))
        assert check_file(tf).ok
    assert main(["check", str(tmp_path)]) == 0
    assert "OK" in capsys.readouterr().out


def test_schema_with_per_sample_shapes_is_accepted(tmp_path):
    schema = {"image": {"dtype": "F32", "shape": [3, 2]}, "label": {"dtype": "I64", "shape": []}}
    with open_path(spark_dataset(tmp_path, schema=schema)) as tf:
        assert messages(tf) == []


def test_short_last_batch_is_not_a_shape_error(tmp_path):
    tail = {"image": np.zeros((1, 3, 2), np.float32), "label": np.zeros(1, np.int64)}
    manifest = spark_dataset(tmp_path, shard_tensors={2: tail}, entry_overrides={2: {"samples_count": 1}})
    with open_path(manifest) as tf:
        assert messages(tf) == []
        assert tf.extra["shards"][2]["samples_found"] == 1


def test_dataset_without_schema_still_counts_samples(tmp_path):
    manifest = spark_dataset(tmp_path, schema=None, entry_overrides={1: {"samples_count": 5}})
    with open_path(manifest) as tf:
        (text,) = messages(tf)
        assert spark_name(1) in text and "samples_count 5" in text and "holds 4" in text


def test_kv_mode_counts_distinct_keys(tmp_path):
    schema = {"image": {"dtype": "F32", "shape": [3, 2]}, "label": {"dtype": "I64", "shape": []}}
    manifest = spark_dataset(tmp_path, mode="kv", rows=5, schema=schema)
    with open_path(manifest) as tf:
        assert messages(tf) == [] and len(tf.tensors) == 30
        assert {r["samples_found"] for r in tf.extra["shards"]} == {5}


def test_names_repeating_across_shards_are_all_kept(tmp_path):
    with open_path(spark_dataset(tmp_path, n_shards=4)) as tf:
        assert [t.name for t in tf.tensors].count("image") == 4
        assert len({t.shard for t in tf.tensors}) == 4
        assert [t.index for t in tf.tensors] == list(range(8))
        assert [t.index_in_shard for t in tf.tensors] == [0, 1] * 4


def test_wrong_counts_and_bytes(tmp_path, capsys):
    manifest = spark_dataset(tmp_path, entry_overrides={0: {"samples_count": 7}, 1: {"bytes": 99}},
                             manifest={"total_samples": 1000, "total_bytes": 1})
    with open_path(manifest) as tf:
        text = "\n".join(messages(tf, "error"))
    assert f"shard {spark_name(0)!r}: the manifest says samples_count 7 but the shard holds 4" in text
    assert f"shard {spark_name(1)!r}: the manifest says 99 bytes but the file has" in text
    assert "total_samples is 1,000 but the shards' samples_count add up to 15" in text
    assert "total_bytes is 1 but the shards' bytes add up to" in text
    assert main(["check", str(manifest)]) == 1
    out = capsys.readouterr().out
    assert spark_name(0) in out and spark_name(1) in out and "FAILED" in out


def test_schema_dtype_and_shape_mismatch_name_shard_and_tensor(tmp_path, capsys):
    bad = {"image": np.zeros((4, 3, 5), np.float32), "label": np.zeros(4, np.int32)}
    manifest = spark_dataset(tmp_path, shard_tensors={1: bad})
    with open_path(manifest) as tf:
        shard = spark_name(1)
        image = next(t for t in tf.tensors if t.shard == shard and t.name == "image")
        label = next(t for t in tf.tensors if t.shard == shard and t.name == "label")
        assert "per-sample shape [3, 5] (tensor shape [4, 3, 5]) does not match" in image.problems[0].message
        assert "dtype is I32 but the manifest schema says I64" in label.problems[0].message
        assert all(p.message.startswith(f"shard {shard!r}: ") for p in image.problems + label.problems)
    assert main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"tensor 'image': shard {spark_name(1)!r}" in out


def test_tensor_outside_the_schema_and_schema_tensor_missing(tmp_path):
    odd = {"image": np.zeros((4, 3, 2), np.float32), "weight": np.zeros(4, np.float32)}
    with open_path(spark_dataset(tmp_path, shard_tensors={0: odd})) as tf:
        text = "\n".join(messages(tf, "error"))
    assert "tensor 'weight': shard" in text and "not in the manifest schema" in text
    assert "lacks schema tensor(s) 'label'" in text


def test_tensors_disagreeing_on_sample_count(tmp_path):
    odd = {"image": np.zeros((4, 3, 2), np.float32), "label": np.zeros(3, np.int64)}
    with open_path(spark_dataset(tmp_path, shard_tensors={0: odd})) as tf:
        assert any("disagree on the number of samples" in m for m in messages(tf, "error"))


def test_bad_shard_names_are_warnings(tmp_path, capsys):
    names = ["shard-a.safetensors", f"part-00001-{spark_name(0)[16:]}", spark_name(2)]
    manifest = spark_dataset(tmp_path, names=names)
    with open_path(manifest) as tf:
        warnings = messages(tf, "warning")
        assert len(warnings) == 2 and not messages(tf, "error")
        assert "shard-a.safetensors" in warnings[0] and "part-{taskId:05d}-{shardIndex:04d}-{uuid}" in warnings[0]
        assert "older" in warnings[1]
    assert main(["check", str(tmp_path)]) == 0
    assert "shard-a.safetensors" in capsys.readouterr().out


def test_missing_shard_and_orphan_file(tmp_path):
    manifest = spark_dataset(tmp_path, skip_write=(1,))
    np.save(tmp_path / "ignored.npy", np.zeros(1))
    (tmp_path / "part-00099-0000-stray.safetensors").write_bytes((tmp_path / spark_name(0)).read_bytes())
    with open_path(manifest) as tf:
        errors, warnings = messages(tf, "error"), messages(tf, "warning")
    assert len(errors) == 1 and spark_name(1) in errors[0] and "missing" in errors[0]
    assert any("not in the manifest" in w and "part-00099-0000-stray" in w for w in warnings)


@pytest.mark.parametrize("patch, expect", [
    ({"format_version": "2.0"}, "format_version is '2.0'"),
    ({"total_samples": -1}, "total_samples is -1"),
    ({"shards": []}, "lists no shards"),
    ({"schema": {"image": {"dtype": "F99", "shape": [1]}}}, "schema entry 'image' has dtype 'F99'"),
])
def test_manifest_field_problems(tmp_path, patch, expect):
    with open_path(spark_dataset(tmp_path, manifest=patch)) as tf:
        assert any(expect in m for m in messages(tf))


def test_legacy_file_key_and_duplicate_entries(tmp_path):
    manifest = spark_dataset(tmp_path, n_shards=2)
    doc = json.loads(manifest.read_text())
    doc["shards"][0]["file"] = doc["shards"][0].pop("shard_path")
    doc["shards"].append(dict(doc["shards"][1]))
    manifest.write_text(json.dumps(doc))
    with open_path(tmp_path) as tf:
        text = "\n".join(messages(tf))
        assert "'file' (an early connector spelling)" in text and "again; the repeat is ignored" in text
        assert len(tf.tensors) == 4


@pytest.mark.parametrize("text", ["[]", '{"shards": 3, "total_samples": 1}', "{bad"])
def test_unusable_manifest_is_unreadable(tmp_path, capsys, text):
    (tmp_path / "dataset_manifest.json").write_text(text)
    tf = open_path(tmp_path)
    assert not tf.readable and tf.format == "safetensors-spark"
    assert main(["check", str(tmp_path)]) == 1


def test_spark_shard_opened_alone_points_at_its_dataset(tmp_path):
    manifest = spark_dataset(tmp_path)
    with open_path(tmp_path / spark_name(0)) as tf:
        assert tf.format == "safetensors" and tf.extra["dataset_manifest"] == str(manifest)


def test_info_json_lists_every_tensor_with_its_shard(tmp_path, capsys):
    spark_dataset(tmp_path, n_shards=2)
    assert main(["info", "--json", str(tmp_path / "dataset_manifest.json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted((t["shard"], t["name"]) for t in doc["tensors"]) == \
        [(spark_name(i), n) for i in range(2) for n in ("image", "label")]
    assert [s["samples_count"] for s in doc["extra"]["shards"]] == [4, 4]


# ------------------------------------------------------------------------------------- _tensor_index.parquet

def _write_index(folder, rows):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table({"tensor_key": [r[0] for r in rows], "file_name": [r[1] for r in rows],
                      "shape": pa.array([r[2] for r in rows], type=pa.list_(pa.int32())),
                      "dtype": [r[3] for r in rows]})
    pq.write_table(table, folder / "_tensor_index.parquet")


def _index_rows(n_shards=3):
    return [(key, spark_name(i), shape, dtype) for i in range(n_shards)
            for key, shape, dtype in (("image", [4, 3, 2], "F32"), ("label", [4], "I64"))]


def test_tensor_index_that_matches(tmp_path):
    spark_dataset(tmp_path)
    _write_index(tmp_path, _index_rows())
    with open_path(tmp_path) as tf:
        assert messages(tf) == []
        assert tf.extra["tensor_index"]["rows"] == 6


def test_tensor_index_disagreements(tmp_path, capsys):
    spark_dataset(tmp_path)
    rows = _index_rows()
    rows[0] = ("image", spark_name(0), [4, 3, 2], "F16")
    rows[3] = ("label", spark_name(1), [5], "I64")
    rows[4] = ("ghost", spark_name(2), [1], "F32")
    rows.append(("image", "part-elsewhere.safetensors", [1], "F32"))
    del rows[5]
    _write_index(tmp_path, rows)
    with open_path(tmp_path) as tf:
        text = "\n".join(messages(tf))
    assert "dtype 'F16', but the shard header says 'F32'" in text
    assert "shape [5], but the shard header says [4]" in text
    assert "tensor 'ghost'" in text and "the shard has no such tensor" in text
    assert "'part-elsewhere.safetensors', which is not a shard" in text
    assert "does not list 2 shard tensor(s)" in text
    assert main(["check", str(tmp_path)]) == 1


def test_unreadable_tensor_index_is_an_error(tmp_path):
    pytest.importorskip("pyarrow")
    spark_dataset(tmp_path)
    (tmp_path / "_tensor_index.parquet").write_bytes(b"not parquet")
    with open_path(tmp_path) as tf:
        assert any("_tensor_index.parquet cannot be read" in m for m in messages(tf, "error"))


def test_tensor_index_without_pyarrow_is_a_warning(tmp_path, monkeypatch, capsys):
    spark_dataset(tmp_path)
    (tmp_path / "_tensor_index.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with open_path(tmp_path) as tf:
        (text,) = messages(tf)
        assert "not checked" in text and "ztviewer[parquet]" in text and not tf.has_errors
    assert main(["check", str(tmp_path)]) == 0
