"""Format-independent layout checks (bounds, overlaps, alignment) and the file map's padding / gaps."""
from __future__ import annotations

from tests.codec.formats.zt_builders import V1, dense_v10, open_bytes, zt_bytes
from ztviewer.codec.layout_check import check_layout, find_gaps
from ztviewer.codec.model import Component, Region, Tensor, TensorFile


def tensor(name: str, index: int, **components: tuple[int, int]) -> Tensor:
    return Tensor(name, "uint8", (1,), "custom", {role: Component(role, o, n) for role, (o, n) in components.items()},
                  index=index)


def test_bounds_overlaps_and_optional_alignment():
    tf = TensorFile("x", "custom", tensors=[
        tensor("a", 0, values=(10, 20), indices=(25, 10)),       # its own roles overlap
        tensor("b", 1, data=(40, 10)), tensor("c", 2, data=(45, 0)),   # empty inside b: exempt
        tensor("d", 3, data=(2 ** 64 - 1, 2)), tensor("e", 4, data=(95, 6)),
        tensor("f", 5, data=(0, 4)), tensor("g", 6, data=(60, 5)), tensor("h", 7, data=(65, 3)),
        tensor("i", 8, data=(64, 1))], regions=[Region("header", 0, 8, "header")])
    check_layout(tf, 100)
    text = {t.name: [p.describe() for p in t.problems] for t in tf.tensors}
    assert any("'values'" in m and "overlaps tensor 'a' component 'indices'" in m for m in text["a"])
    assert any("'indices'" in m and "overlaps tensor 'a' component 'values'" in m for m in text["a"])
    assert text["b"] == [] and text["c"] == []
    assert any("overflows an unsigned 64-bit integer" in m for m in text["d"])
    assert any("[95, 101) runs past the end of the file (100 bytes)" in m for m in text["e"])
    assert any("overlaps the header [0, 8)" in m for m in text["f"])
    assert text["h"] == [] and any("[64, 65) overlaps tensor 'g'" in m for m in text["i"])   # a one-byte overlap
    assert all(p.is_error for t in tf.tensors for p in t.problems)


def test_alignment_warnings_only_when_asked():
    tf = TensorFile("x", "custom", tensors=[tensor("a", 0, data=(10, 4)), tensor("z", 1, data=(11, 0))])
    check_layout(tf, 100)
    assert not tf.tensors[0].problems
    check_layout(tf, 100, alignment=8)
    (p,) = tf.tensors[0].problems
    assert not p.is_error and p.offset == 10 and "not a multiple of 8" in p.message
    assert not tf.tensors[1].problems


def test_gaps_and_padding_between_known_regions():
    tensors = {"a": dense_v10("float32", [6], 64, 24), "b": dense_v10("float32", [6], 192, 24)}
    blobs = {64: bytes(range(1, 25)), 128: b"\x01" * 24, 192: bytes(range(1, 25))}
    data = zt_bytes(V1, {"version": "1.0", "tensors": tensors}, blobs, manifest_at=216)
    tf = open_bytes(data)
    assert not tf.has_errors
    got = [(r.kind, r.offset, r.end) for r in find_gaps(tf)]
    assert got == [("padding", 8, 64), ("padding", 88, 128), ("gap", 128, 192)]


def test_nonzero_padding_is_a_gap():
    tensors = {"a": dense_v10("uint8", [4], 64, 4)}
    data = bytearray(zt_bytes(V1, {"version": "1.0", "tensors": tensors}, {64: b"abcd"}, manifest_at=128))
    data[100] = 7
    tf = open_bytes(bytes(data))
    assert [(r.kind, r.offset, r.end) for r in find_gaps(tf)] == [("padding", 8, 64), ("gap", 68, 128)]
