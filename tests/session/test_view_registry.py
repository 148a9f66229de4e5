"""The inspect view registry: the best fitting view wins, new views register with their own priority."""
from __future__ import annotations

import pytest

from ztviewer.codec import Component, Tensor, open_file
from ztviewer.session.view_registry import FITS, UNSUPPORTED, ViewRegistry, builtin_views, view_kind


def test_each_corpus_tensor_gets_the_view_made_for_its_layout(corpus_dir):
    kinds = {}
    for path in ("zt_v1.0/ztensor-1.0.1/sparse.zt", "blz/mat_6x8_exact.blz", "zt_v1.x/ztensor-1.2.3/types_attrs.zt"):
        with open_file(corpus_dir / path) as tf:
            kinds.update({t.layout: view_kind(t) for t in tf.tensors})
    assert kinds == {"sparse_csr": "sparse", "sparse_coo": "sparse", "tensor_train": "tt", "dense": "dense",
                     "quantized_group": "quantized"}


def test_a_registered_view_wins_where_it_fits_better_and_ties_go_to_the_first():
    registry = builtin_views()
    quantized = Tensor("q", "uint8", (4,), layout="zt.mx/1", components={"data": Component("data", 0, 4)})
    dense = Tensor("d", "float32", (4,), components={"data": Component("data", 0, 16)})
    assert registry.best(quantized).key == "structural"
    registry.register("mx", lambda t: FITS + 1 if t.layout == "zt.mx/1" else UNSUPPORTED, None)
    assert registry.best(quantized).key == "mx" and registry.best(dense).key == "dense"
    assert [e.key for _, e in registry.ranked(quantized)] == ["mx", "structural"]
    registry.register("also-dense", lambda t: FITS, None)                  # as good as "dense", registered later
    assert registry.best(dense).key == "dense"
    registry.unregister("structural")
    assert ViewRegistry().best(dense) is None and "structural" not in registry


def test_packed_or_componentless_dense_tensors_are_not_given_to_the_heatmap():
    packed = Tensor("p", "int4", (8,), components={"data": Component("data", 0, 4)}, extra={"packed": "int4"})
    empty = Tensor("e", "float32", (4,), components={})
    assert view_kind(packed) == view_kind(empty) == "structural"


@pytest.mark.parametrize("layout", ["dense", "sparse_csr", "tensor_train", "weird"])
def test_every_tensor_has_some_view(layout):
    assert builtin_views().best(Tensor("t", "float32", (2,), layout=layout, components={})) is not None
