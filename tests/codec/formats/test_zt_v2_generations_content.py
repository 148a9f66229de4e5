"""Append generations written by ztensor 2.1.2 itself, and the zt.content/1 content digest."""
from __future__ import annotations

import hashlib
import json

import cbor2
import numpy as np
import pytest

from tests.gui.v2_files import with_generations
from ztviewer.cli import main
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.formats.zt_v2 import (
    content_digest,
    find_generations,
    object_content_digest,
    read_generation_at,
)

ztensor = pytest.importorskip("ztensor")


def test_earlier_generations_are_listed_and_readable(tmp_path):
    path = tmp_path / "gen.zt"
    with_generations(path)
    with open_file(path) as tf:
        assert [t.name for t in tf.tensors] == ["a", "b"] and tf.attributes == {"note": "third"}
        assert not list(tf.all_problems()) and check_file(tf).ok
        generations = find_generations(tf, budget=None)
        assert generations == tf.extra["_generations"]
        assert [g.objects for g in generations] == [2, 1]
        assert [row["objects"] for row in tf.extra["generations"]] == [2, 1]
        second, first = (read_generation_at(tf, g) for g in generations)
        assert [t.name for t in second.tensors] == ["a", "b"] and second.attributes == {}
        assert [t.name for t in first.tensors] == ["a"] and first.size == generations[1].end
        assert first.tensors[0].components["data"].offset == tf.tensor("a").components["data"].offset
        kinds = [r.kind for r in tf.regions]
        assert kinds.count("old-manifest") == 2 and kinds.count("old-footer") == 2


def test_a_fresh_file_has_no_earlier_generation(tmp_path):
    path = tmp_path / "one.zt"
    with ztensor.Writer(str(path)) as w:
        w.add("a", bytes(16), [4], "f32")
    with open_file(path) as tf:
        assert find_generations(tf, budget=None) == [] and "generations" not in tf.extra


def _expected_content_id(objects: dict) -> str:
    """The spec §6.4 value, built independently of the reader from what ztensor reports."""
    return "sha256:" + hashlib.sha256(cbor2.dumps(["zt.content/1", objects], canonical=True)).hexdigest()


def test_content_digest_ignores_layout_alignment_and_encoding(tmp_path):
    a = np.arange(1000, dtype=np.float32)
    b = np.arange(6, dtype=np.uint8) % 2
    digests = []
    for name, options, encoding in (("canonical", {}, None), ("aligned", {"canonical": False, "align": 4096}, None),
                                    ("zstd", {"canonical": False}, "zt.zstd-seekable/1")):
        path = tmp_path / f"{name}.zt"
        with ztensor.Writer(str(path), **options) as w:
            w.add("a", a.tobytes(), [10, 100], "f32", encoding=encoding)
            w.add("b", b.tobytes(), [6], "u8", logical="bool")
        with open_file(path) as tf:
            digests.append(content_digest(tf))
            parts = {t.name: t.components["data"] for t in tf.tensors}
            expected = _expected_content_id({
                "a": {"shape": [10, 100], "layout": "dense",
                      "parts": {"data": {"dtype": "f32", "digest": parts["a"].digest}}},
                "b": {"shape": [6], "layout": "dense",
                      "parts": {"data": {"dtype": "u8", "type": "bool", "digest": parts["b"].digest}}},
            })
            assert digests[-1] == expected
            assert object_content_digest(tf.tensor("b")) == _expected_content_id({"b": {
                "shape": [6], "layout": "dense",
                "parts": {"data": {"dtype": "u8", "type": "bool", "digest": parts["b"].digest}}}})
    assert len(set(digests)) == 1


def test_info_json_prints_the_content_id(tmp_path, capsys):
    path = tmp_path / "m.zt"
    with ztensor.Writer(str(path)) as w:
        w.add("w", np.ones(4, np.float32).tobytes(), [4], "f32")
    assert main(["info", "--json", "--hash", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    with open_file(path) as tf:
        assert doc["content_digest"] == content_digest(tf) and doc["content_digest"].startswith("sha256:")
    entry = doc["tensors"][0]
    assert entry["content_digest"].startswith("sha256:")
    assert entry["sha256"] == hashlib.sha256(np.ones(4, np.float32).tobytes()).hexdigest()
    assert main(["info", str(path)]) == 0
    assert f"content id: {doc['content_digest']}" in capsys.readouterr().out
