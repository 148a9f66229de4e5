"""The zTensor v2 files ztensor 2.1.2 wrote (shared corpus) read exactly: names, dtypes, shapes, layouts and
the content sha256 of every tensor as MANIFEST.json records it, and the bytes ztensor itself returns."""
from __future__ import annotations

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_manifest
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.decode import component_bytes
from ztviewer.codec.dense import to_dense

ztensor = pytest.importorskip("ztensor")
V2 = [e for e in corpus_manifest() if e["path"].startswith("zt_v2/")]
pytestmark = pytest.mark.skipif(not V2, reason="shared corpus not found")


def test_all_seven_files_are_listed():
    assert len(V2) == 7


@pytest.mark.parametrize("entry", V2, ids=lambda e: e["path"].rsplit("/", 1)[-1])
def test_corpus_file_reads_exactly(entry):
    path = CORPUS / entry["path"]
    with open_file(path) as tf:
        assert tf.readable and tf.format == "zt-v2" and not list(tf.all_problems())
        assert sorted(t.name for t in tf.tensors) == sorted(t["name"] for t in entry["tensors"])
        reference = ztensor.open(str(path))
        for expected in entry["tensors"]:
            tensor = tf.tensor(expected["name"])
            assert tensor.dtype == expected["dtype"]
            assert list(tensor.shape) == expected["shape"]
            assert (tensor.layout_spelling or tensor.layout) == expected["layout"]
            assert {c.encoding for c in tensor.components.values()} == {expected["encoding"]}
            assert content_sha256(tf, tensor) == expected["sha256"]
            if "nnz" in expected:
                assert tensor.extra["nnz"] == expected["nnz"]
            if tensor.layout == "dense":
                theirs = reference[expected["name"]].tobytes()
                assert bytes(component_bytes(tf, tensor, tensor.components["data"])) == theirs
                to_dense(tf, tensor)
        report = check_file(tf)
        assert report.ok and report.digests_verified == sum(len(t.components) for t in tf.tensors)


def test_file_attributes_are_the_manifest_attributes():
    path = CORPUS / "zt_v2/ztensor-2.1.2/sparse_attrs.zt"
    with open_file(path) as tf:
        assert tf.attributes == {"framework": "numpy", "license": "MIT", "n": 3,
                                 "nested": {"a": [1, 2.5, True, None]}}
        assert tf.tensor("csr_f32_5x6").attributes == {"origin": "scipy-like"}
        dense = to_dense(tf, tf.tensor("coo_f64_2x3x4"))
        assert dense.shape == (2, 3, 4) and np.count_nonzero(dense) <= 8
