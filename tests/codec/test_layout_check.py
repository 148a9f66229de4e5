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


def _table_file(spans: list[tuple[int, int]], regions: list[Region]) -> TensorFile:
    from ztviewer.codec.tensor_table import TensorTable

    table = TensorTable([f"t{i:03d}" for i in range(len(spans))], ["uint8"] * len(spans),
                        [(n,) for _, n in spans], [o for o, _ in spans], [n for _, n in spans])
    return TensorFile("x", "zt", regions=regions, tensors=table)


def test_a_table_builds_only_the_tensors_its_layout_names():
    """Empty tensors, aliases, overlaps, a region met, a misaligned or outlying part: only those are built, and
    each reads as the general pass over built tensors says (the same problems, in the same order)."""
    spans = [(64 + 64 * i, 64) for i in range(300)]
    spans[10] = (64 * 11, 0)                 # empty: exempt
    spans[20] = spans[21]                    # an alias of t021
    spans[30] = (64 * 31 + 32, 64)           # misaligned, and overlapping t031
    spans[40] = (64 * 400, 64)               # past the end
    spans[50] = (20, 64)                     # over the header and t000
    regions = [Region("header", 0, 64, "header")]
    lazy, eager = _table_file(spans, regions), _table_file(spans, regions)
    eager_tensors = list(eager.tensors)      # every tensor built, every component too
    for t in eager_tensors:
        _ = t.components
    check_layout(lazy, 64 * 302, alignment=64, aliases=True)
    check_layout(eager, 64 * 302, alignment=64, aliases=True)
    built = sorted(lazy.tensors.positions().values())
    assert built == [0, 20, 21, 30, 31, 40, 50]
    assert [t.problems for t in lazy.tensors] == [t.problems for t in eager_tensors]
    assert [p.rule for p in lazy.tensors[20].problems] == [
        "components are identical or disjoint (aliased blobs are shared, as zTensor v2 allows)"]
    assert any("overlaps the header" in p.message for p in lazy.tensors[50].problems)


def test_a_zt_file_with_an_empty_tensor_opens_without_building_its_tensors(tmp_path):
    import numpy as np

    from ztviewer.codec import open_file
    from ztviewer.codec.arrays import save_arrays

    path = tmp_path / "empty.zt"
    save_arrays(path, {**{f"w{i}": np.full(4, i, np.float32) for i in range(200)}, "empty": np.zeros((0, 3))})
    with open_file(path) as tf:
        assert not tf.tensors.positions() and not list(tf.all_problems())
