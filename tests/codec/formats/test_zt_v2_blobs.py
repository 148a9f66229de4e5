"""Blob placement of zTensor v2 (§2.4, §3.6): the column pass over plain tensors builds only the tensors whose
blobs are misplaced or meet another blob, and reports exactly what the general pass over every part reports."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.codec.formats.v2_builders import assemble, dense
from ztviewer.codec import open_file
from ztviewer.codec.formats.zt_v2 import columns, fast, reader
from ztviewer.codec.formats.zt_v2.blobs import check_blobs
from ztviewer.codec.model import Component, Tensor, dense_tensor
from ztviewer.codec.tensor_table import TensorTable

BLOB = 4096


def _tied_file(tmp_path):
    """300 one-page tensors; ``tied`` shares the blob of ``t007``, ``half`` overlaps ``t100`` and ``t101``,
    ``odd`` is misaligned, ``out`` runs past the data region."""
    objects = {f"t{i:03d}": dense("u8", [BLOB], BLOB * (i + 1), BLOB) for i in range(300)}
    objects["tied"] = dense("u8", [BLOB], BLOB * 8, BLOB)
    objects["half"] = dense("u8", [2 * BLOB], BLOB * 101, 2 * BLOB)
    objects["odd"] = dense("u8", [8], BLOB * 400 + 8, 8)
    objects["out"] = dense("u8", [BLOB], BLOB * 10_000, BLOB)
    path = tmp_path / "tied.zt"
    path.write_bytes(assemble({"objects": objects}, {BLOB * (i + 1): bytes(BLOB) for i in range(300)}))
    return path


def test_identical_blobs_build_only_the_tensors_involved(tmp_path, monkeypatch):
    path = _tied_file(tmp_path)
    lazy = open_file(path)
    with monkeypatch.context() as patch:           # every tensor built and swept: the full reader
        patch.setattr(reader, "read_plain", lambda data: None)
        patch.setattr(columns, "objects_table", lambda objects: None)
        patch.setattr(fast, "PART_KEYS", {})
        full = open_file(path)
    try:
        assert isinstance(lazy.tensors, TensorTable) and not isinstance(full.tensors, TensorTable)
        names = lazy.tensor_names()
        built = sorted(names[p] for p in lazy.tensors.positions().values())
        assert built == ["half", "odd", "out", "t007", "t100", "t101", "tied"]
        tied = lazy.tensor("tied").components["data"]
        assert tied.shared_with == ("t007/data",)
        assert lazy.tensors.plain_spans() is not None      # noting who shares a blob leaves it where it was
        assert [str(p) for p in lazy.all_problems()] == [str(p) for p in full.all_problems()]
        for mine, theirs in zip(lazy.tensors, full.tensors):
            assert (mine.name, mine.problems, mine.components["data"].shared_with) == \
                (theirs.name, theirs.problems, theirs.components["data"].shared_with)
        tied.offset += BLOB                                 # a part that moved: the columns no longer say
        assert lazy.tensors.plain_spans() is None
    finally:
        lazy.close()
        full.close()


def _eager(name: str, offset: int, length: int) -> Tensor:
    """A tensor whose part was built (so the general pass looks at it)."""
    component = Component("data", offset, length, "raw", None, "uint8", "little", None, {})
    return Tensor(name, "uint8", (length,), "dense", {"data": component}, {}, "dense", [], 0, {})


@st.composite
def _blobs(draw) -> tuple[list[tuple[int, int]], tuple[int, int] | None, int]:
    pages = st.integers(0, 12)
    spans = [(draw(pages) * BLOB + draw(st.sampled_from([0, 0, 0, 8])), draw(st.sampled_from([0, BLOB, 2 * BLOB, 8])))
             for _ in range(draw(st.integers(1, 8)))]
    manifest = draw(st.none() | st.tuples(pages.map(BLOB.__mul__), st.sampled_from([0, 100, BLOB])))
    return spans, manifest, draw(st.integers(0, 14)) * BLOB + 48


@settings(max_examples=500, deadline=None)
@given(_blobs())
def test_the_column_pass_reports_what_the_general_pass_reports(case):
    spans, manifest, size = case
    lazy = [dense_tensor(f"t{i}", "uint8", (n,), i, at, n) for i, (at, n) in enumerate(spans)]
    eager = [_eager(f"t{i}", at, n) for i, (at, n) in enumerate(spans)]
    check_blobs(lazy, manifest, size, {})
    check_blobs(eager, manifest, size, {})
    assert [(t.problems, t.components["data"].shared_with) for t in lazy] == \
        [(t.problems, t.components["data"].shared_with) for t in eager]


def test_a_blob_many_parts_share_names_a_few_owners_and_counts_the_rest(tmp_path):
    """Every owner naming every other is quadratic: 2,000 parts of one blob name 8 others and count the rest."""
    count = 2_000
    objects = {f"b{i:05d}": dense("u8", [BLOB], BLOB, BLOB) for i in range(count)}
    objects["alone"] = dense("u8", [BLOB], 2 * BLOB, BLOB)
    path = tmp_path / "many.zt"
    path.write_bytes(assemble({"objects": objects}, {BLOB: bytes(BLOB), 2 * BLOB: bytes(BLOB)}))
    with open_file(path) as tf:
        first, other = (tf.tensor(name).components["data"].shared_with for name in ("b00000", "b01234"))
        assert first == (*(f"b{i:05d}/data" for i in range(1, 9)), f"and {count - 9:,} other parts")
        assert other == (*(f"b{i:05d}/data" for i in range(8)), f"and {count - 9:,} other parts")
        assert tf.tensor("alone").components["data"].shared_with == ()
        assert not list(tf.all_problems())


def test_a_blob_shared_by_nine_parts_names_all_eight_others(tmp_path):
    objects = {f"b{i}": dense("u8", [BLOB], BLOB, BLOB) for i in range(9)}
    path = tmp_path / "nine.zt"
    path.write_bytes(assemble({"objects": objects}, {BLOB: bytes(BLOB)}))
    with open_file(path) as tf:
        assert tf.tensor("b4").components["data"].shared_with == tuple(f"b{i}/data" for i in range(9) if i != 4)


def test_properties_count_every_owner_of_a_blob_many_parts_share(tmp_path):
    """Past the few owners named, Properties still counts all of them, and the count line is not an owner."""
    from ztviewer.session.properties import component_v2_props

    count = 20
    objects = {f"b{i:02d}": dense("u8", [BLOB], BLOB, BLOB) for i in range(count)}
    path = tmp_path / "twenty.zt"
    path.write_bytes(assemble({"objects": objects}, {BLOB: bytes(BLOB)}))
    with open_file(path) as tf:
        tensor = tf.tensor("b03")
        component = tensor.components["data"]
        (shared,) = [p for p in component_v2_props(tf, tensor, component) if p.key == "shared blob"]
        assert shared.value == f"{count} owners"
        owners = [p.value for p in shared.children if p.key == "owner"]
        assert owners == ["b03/data (this part)", *(f"b{i:02d}/data" for i in (0, 1, 2, 4, 5, 6, 7, 8))]
        assert [p.value for p in shared.children if p.key != "owner"] == [f"and {count - 9} other parts"]
