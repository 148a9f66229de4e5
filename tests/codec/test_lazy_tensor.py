"""Tensors built by fast readers defer their containers; they must read exactly like eagerly built ones."""
from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from ztviewer.codec.layout_check import check_layout
from ztviewer.codec.model import Component, Region, Tensor, TensorFile, dense_tensor, error
from ztviewer.codec.span_columns import plain_spans


def _eager(name="w", dtype="float32", shape=(2, 3), index=4, offset=64, length=24, encoding="raw", digest=None,
           uncompressed=None, spelling="dense") -> Tensor:
    component = Component("data", offset, length, encoding, digest, dtype, "little", uncompressed, {})
    return Tensor(name, dtype, shape, "dense", {"data": component}, {}, spelling, [], index, {})


def test_a_deferred_tensor_equals_the_eager_one_and_builds_its_component_once():
    lazy = dense_tensor("w", "float32", (2, 3), 4, 64, 24, "zstd", "crc32c:0x0000ABCD", 24, "dense")
    eager = _eager(encoding="zstd", digest="crc32c:0x0000ABCD", uncompressed=24)
    assert lazy.component_count == 1 and lazy.stored_nbytes == 24
    assert lazy.component_encodings() == ("zstd",) and lazy.byte_span() == (64, 24) and lazy._components is None
    assert lazy.component_digests() == ("crc32c:0x0000ABCD",) and lazy._components is None
    assert lazy == eager and repr(lazy) == repr(eager)
    assert lazy.components is lazy.components
    assert lazy.component_digests() == eager.component_digests() == ("crc32c:0x0000ABCD",)
    assert lazy.component_encodings() == eager.component_encodings() and lazy.byte_span() == eager.byte_span()
    assert Tensor("none", "uint8", (0,)).byte_span() is None
    assert lazy.components["data"].dtype == "float32" and lazy.components["data"].uncompressed_length == 24


def test_containers_are_created_on_first_use_and_stay_per_tensor():
    a, b = dense_tensor("a", "uint8", (1,), 0, 0, 1), dense_tensor("b", "uint8", (1,), 1, 1, 1)
    a.attributes["k"] = 1
    a.problems.append(error("bad", tensor="a"))
    a.extra["nnz"] = 3
    assert b.extra_value("nnz", "none") == "none" and b._extra is None
    assert a.extra_value("nnz") == 3
    assert (b.attributes, b.problems, b.extra) == ({}, [], {})
    assert a.has_errors and not b.has_errors
    b.components["data"].offset = 9
    assert a.components["data"].offset == 0 and b.stored_nbytes == 1


def test_replaced_copies_fields_and_shares_containers():
    t = dense_tensor("a", "uint16", (4,), 2, 64, 8)
    view = t.replaced(dtype="float16")
    assert (view.name, view.dtype, view.shape, view.index) == ("a", "float16", (4,), 2)
    assert view.components is t.components and view.components["data"].dtype == "uint16"
    assert t.dtype == "uint16"


def test_deep_copies_and_comparisons_see_through_the_deferral():
    t = dense_tensor("a", "int32", (2,), 0, 64, 8)
    clone = copy.deepcopy(t)
    assert clone == t and clone is not t
    clone.components["data"].length = 4
    assert clone != t and t.components["data"].length == 8
    assert t != "a" and (t == object()) is False


def test_plain_spans_only_for_untouched_deferred_tensors():
    tensors = [dense_tensor("a", "uint8", (8,), 0, 64, 8), dense_tensor("b", "uint8", (8,), 1, 128, 8)]
    assert plain_spans(tensors) == ([64, 128], [8, 8])
    _ = tensors[1].components  # now anything may change it
    assert plain_spans(tensors) is None
    assert plain_spans([_eager()]) is None
    emptied = dense_tensor("c", "uint8", (8,), 0, 64, 8)
    emptied.components.pop("data")
    assert plain_spans([emptied]) is None


@st.composite
def _spans(draw) -> tuple[list[tuple[int, int]], list[Region], int]:
    at, spans = draw(st.integers(0, 200)), []
    for _ in range(draw(st.integers(1, 6))):
        at += draw(st.sampled_from([0, 0, 8, 64, -8, -64]))
        length = draw(st.sampled_from([0, 8, 16, 64]))
        spans.append((at, length))
        at += length
    regions = [Region(kind, draw(st.integers(0, 400)), draw(st.sampled_from([0, 8, 64])), kind)
               for kind in draw(st.lists(st.sampled_from(["magic", "manifest"]), max_size=2))]
    return spans, regions, draw(st.integers(0, 600))


@settings(max_examples=600, deadline=None)
@given(_spans(), st.sampled_from([None, 64]))
def test_the_column_check_of_plain_tensors_reports_what_the_general_pass_reports(case, alignment):
    spans, regions, size = case
    lazy = TensorFile("x", "zt", regions=regions, tensors=[
        dense_tensor(f"t{i}", "uint8", (n,), i, at, n) for i, (at, n) in enumerate(spans)])
    eager = TensorFile("x", "zt", regions=regions, tensors=[
        _eager(f"t{i}", "uint8", (n,), i, at, n) for i, (at, n) in enumerate(spans)])
    check_layout(lazy, size, alignment=alignment)
    check_layout(eager, size, alignment=alignment)
    assert [t.problems for t in lazy.tensors] == [t.problems for t in eager.tensors]
