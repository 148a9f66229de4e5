"""The tensor tree model: structure equals the codec model, roles, sorting, filtering, grouping, scale."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt

from tests._work import total_lines
from tests.gui.synthetic_files import Spec, build_file
from ztviewer.codec import Component, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.gui.models.tensor_tree import Column, TensorTreeModel, TreeRole
from ztviewer.gui.models.tree_proxy import TensorFilterProxy, name_matcher
from ztviewer.session.tree_nodes import NodeKind, TensorGroup


def rows(model, parent: QModelIndex) -> list[QModelIndex]:
    return [model.index(r, 0, parent) for r in range(model.rowCount(parent))]


def cell(model, index: QModelIndex, column: Column, role=Qt.ItemDataRole.DisplayRole):
    return model.data(index.siblingAtColumn(column), role)


@pytest.fixture
def tf(sample_file):
    return sample_file


@pytest.mark.parametrize("grouped", [False, True])
def test_qtmodeltester_passes(qtmodeltester, tf, grouped):
    model = TensorTreeModel(tf, grouped=grouped)
    qtmodeltester.check(model)
    proxy = TensorFilterProxy()
    proxy.setSourceModel(model)
    qtmodeltester.check(proxy)
    proxy.set_pattern("*.weight")
    qtmodeltester.check(proxy)


def test_rows_and_fields_equal_the_codec_model(tf):
    model = TensorTreeModel(tf)
    (file_index,) = rows(model, QModelIndex())
    assert model.item(file_index) is tf
    tensor_rows = rows(model, file_index)
    assert [model.item(i) for i in tensor_rows] == tf.tensors
    for index, tensor in zip(tensor_rows, tf.tensors, strict=True):
        assert cell(model, index, Column.NAME) == tensor.name
        assert cell(model, index, Column.DTYPE) == tensor.dtype
        assert cell(model, index, Column.LAYOUT) == tensor.layout
        assert cell(model, index, Column.STORED, TreeRole.SORT) == tensor.stored_nbytes
        assert model.data(index, TreeRole.KIND) == NodeKind.TENSOR.value
        components = rows(model, index)
        assert [model.item(i) for i in components] == list(tensor.components.values())
        for component_index, component in zip(components, tensor.components.values(), strict=True):
            assert cell(model, component_index, Column.NAME) == component.role
            assert cell(model, component_index, Column.OFFSET) == f"0x{component.offset:X}"
            assert cell(model, component_index, Column.STORED, TreeRole.SORT) == component.length
            assert cell(model, component_index, Column.ENCODING) == component.encoding
            assert model.data(component_index, TreeRole.BYTE_RANGE) == (component.offset, component.length)
            assert model.data(component_index, TreeRole.TENSOR) is tensor
            expected = "none" if component.digest is None else "unchecked"
            assert cell(model, component_index, Column.DIGEST, TreeRole.DIGEST_STATE) == expected


def test_index_of_finds_tensors_and_components(tf):
    model = TensorTreeModel(tf, grouped=True)
    sparse = tf.tensor("sparse.csr")
    index = model.index_of(sparse, "indices")
    assert model.item(index) is sparse.components["indices"]
    assert model.item(index.parent()) is sparse
    assert model.item(index.parent().parent()).prefix == "sparse"


def test_sorting_by_size_and_back_to_manifest_order(tf):
    model = TensorTreeModel(tf)
    file_index = model.file_index()
    model.sort(Column.STORED, Qt.SortOrder.DescendingOrder)
    sizes = [model.item(i).stored_nbytes for i in rows(model, file_index)]
    assert sizes == sorted(sizes, reverse=True)
    model.sort(Column.NAME, Qt.SortOrder.AscendingOrder)
    assert model.item(next(iter(rows(model, file_index)))).name == "bias"
    model.sort(-1)
    assert [model.item(i) for i in rows(model, file_index)] == tf.tensors


def test_the_order_in_force_is_not_sorted_again_unless_digest_states_changed(qtbot, tf):
    model = TensorTreeModel(tf)
    model.sort(Column.NAME)
    with qtbot.assertNotEmitted(model.layoutChanged):
        model.sort(Column.NAME)              # what a view asks when it is given the model again
    model.sort(Column.DIGEST, Qt.SortOrder.DescendingOrder)
    assert model.item(model.index(0, 0, model.file_index())).name != "bias"
    model.set_digest_states([(tf.tensor("bias"), "data", DigestState.MISMATCH)])
    with qtbot.waitSignal(model.layoutChanged, timeout=1000):
        model.sort(Column.DIGEST, Qt.SortOrder.DescendingOrder)
    assert model.item(model.index(0, 0, model.file_index())).name == "bias"


def test_sorting_keeps_persistent_indexes_on_their_items(tf):
    from PySide6.QtCore import QPersistentModelIndex

    model = TensorTreeModel(tf)
    embed = tf.tensor("model.embed.weight")
    persistent = QPersistentModelIndex(model.index_of(embed))
    component = QPersistentModelIndex(model.index_of(embed, "data"))
    model.sort(Column.NAME, Qt.SortOrder.DescendingOrder)
    assert model.item(persistent) is embed
    assert model.item(component) is embed.components["data"]
    assert persistent.row() == model.index_of(embed).row()


def test_groups_sort_naturally(tmp_path):
    tf = build_file(tmp_path / "n.zt", [Spec(f"layers.{i}.w") for i in (10, 2, 1)])
    model = TensorTreeModel(tf, grouped=True)
    (layers,) = rows(model, model.file_index())
    assert [model.data(i) for i in rows(model, layers)] == ["1", "2", "10"]
    tf.close()


def test_grouping_by_dotted_prefix(tf):
    model = TensorTreeModel(tf, grouped=True)
    top = {model.data(i): model.item(i) for i in rows(model, model.file_index())}
    assert set(top) == {"model", "sparse", "bias"}
    assert isinstance(top["model"], TensorGroup) and len(top["model"].members) == 4
    embed = model.index_of(tf.tensor("model.embed.weight"))
    assert model.data(embed) == "weight"
    assert [model.item(embed.parent()).prefix, model.item(embed.parent().parent()).prefix] == ["model.embed", "model"]
    model_group = embed.parent().parent()
    assert [model.data(i) for i in rows(model, model_group)] == ["embed", "layers"]
    layers = [model.data(i) for i in rows(model, model.index(1, 0, model_group))]
    assert layers == ["0", "1", "2"]


@pytest.mark.parametrize("pattern, expected", [
    ("embed", {"model.embed.weight"}),
    ("*.weight", {"model.layers.0.attn.q_proj.weight", "model.layers.1.attn.q_proj.weight",
                  "model.layers.2.attn.q_proj.weight", "model.embed.weight"}),
    ("model.layers.[01].*", {"model.layers.0.attn.q_proj.weight", "model.layers.1.attn.q_proj.weight"}),
    ("BIAS", {"bias"}),
    ("nothing-matches", set()),
])
def test_filter_substring_and_glob(tf, pattern, expected):
    model = TensorTreeModel(tf)
    proxy = TensorFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_pattern(pattern)
    file_index = proxy.index(0, 0)
    shown = {proxy.data(proxy.index(r, 0, file_index)) for r in range(proxy.rowCount(file_index))}
    assert shown == expected
    assert proxy.match_count() == len(expected)
    for row in range(proxy.rowCount(file_index)):   # a shown tensor keeps all its components
        index = proxy.index(row, 0, file_index)
        assert proxy.rowCount(index) == len(model.item(proxy.mapToSource(index)).components)


def test_name_matcher_empty_pattern_matches_everything():
    assert name_matcher("  ") is None
    assert name_matcher("a*")("ABC") and name_matcher("*.weight")("x.WEIGHT")
    assert not name_matcher("*.weight")("x.weight.t")


def test_digest_states_update_rows_and_aggregate(qtbot, tf):
    model = TensorTreeModel(tf, grouped=True)
    embed = tf.tensor("model.embed.weight")
    sparse = tf.tensor("sparse.csr")
    model.index_of(sparse, "values")     # component rows exist only once asked for
    with qtbot.waitSignal(model.dataChanged, timeout=1000):
        model.set_digest_states([(embed, "data", DigestState.OK), (sparse, "values", DigestState.MISMATCH)])
    assert cell(model, model.index_of(embed), Column.DIGEST, TreeRole.DIGEST_STATE) == "ok"
    assert cell(model, model.index_of(sparse, "values"), Column.DIGEST) == "✗ mismatch"
    assert cell(model, model.index_of(sparse), Column.DIGEST, TreeRole.DIGEST_STATE) == "mismatch"
    assert cell(model, model.index_of(sparse).parent(), Column.DIGEST, TreeRole.DIGEST_STATE) == "mismatch"
    assert cell(model, model.file_index(), Column.DIGEST, TreeRole.DIGEST_STATE) == "mismatch"
    bias = tf.tensor("bias")
    assert cell(model, model.index_of(bias), Column.DIGEST, TreeRole.DIGEST_STATE) == "none"


def test_problem_tensors_are_marked(tmp_path):
    from tests.gui.synthetic_files import warning

    tf = build_file(tmp_path / "p.zt", [Spec("odd", problems=[warning("odd thing", tensor="odd")]), Spec("fine")])
    model = TensorTreeModel(tf)
    odd, fine = rows(model, model.file_index())
    assert model.data(odd, Qt.ItemDataRole.DecorationRole) is not None
    assert "odd thing" in model.data(odd, Qt.ItemDataRole.ToolTipRole)
    assert model.data(fine, Qt.ItemDataRole.DecorationRole) is None
    tf.close()


def big_file(count: int) -> TensorFile:
    tensors = [Tensor(f"model.layers.{i // 10}.block{i % 10}.weight", "float32", (64, 64),
                      components={"data": Component("data", 64 + 16384 * i, 16384, digest="crc32c:0x00000000")},
                      index=i) for i in range(count)]
    return TensorFile("/nonexistent/big.zt", "zt", "test", tensors=tensors)


class CountingTreeModel(TensorTreeModel):
    """Counts the rows the view asks ``data`` for: what showing the tree costs, whatever the machine's load."""

    def __init__(self, tf) -> None:
        super().__init__(tf)
        self.rows_asked: set[tuple[int, int]] = set()

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if index.isValid():
            self.rows_asked.add((index.row(), index.internalId()))
        return super().data(index, role)


def tree_work(qtbot, count: int) -> dict[str, int]:
    """Python lines ztviewer runs to open, scroll, filter and group a tree of ``count`` tensors."""
    from PySide6.QtWidgets import QTreeView

    tf = big_file(count)
    model = TensorTreeModel(tf)
    proxy = TensorFilterProxy()
    view = QTreeView()
    qtbot.addWidget(view)
    view.setUniformRowHeights(True)
    view.resize(900, 600)

    def open_tree() -> None:
        proxy.setSourceModel(model)
        view.setModel(proxy)
        view.show()
        view.expand(proxy.index(0, 0))
        qtbot.wait(1)

    def scroll() -> None:
        view.verticalScrollBar().setValue(count * 7 // 10)
        view.viewport().repaint()

    def group() -> None:
        model.set_grouped(True)
        view.expand(proxy.index(0, 0))

    work = {"opened": total_lines(open_tree), "scrolled": total_lines(scroll)}
    work["filtered"] = total_lines(lambda: proxy.set_pattern("layers.99.*"))
    assert proxy.rowCount(proxy.index(0, 0)) == 10
    work["grouped"] = total_lines(group)
    return work


def test_large_trees_stay_fluid(qtbot):
    """Opening, filtering and grouping cost work linear in the tensor count, and scrolling only the rows shown
    (the figures: the start-up row of ``benchmarks/bench_app.py``)."""
    tree_work(qtbot, 5000)  # lazy imports and first-use caches
    small, large = tree_work(qtbot, 5000), tree_work(qtbot, 20_000)
    for phase in ("opened", "filtered", "grouped"):
        assert large[phase] <= 5 * small[phase], (phase, small, large)
    assert large["scrolled"] <= 1.25 * small["scrolled"], (small, large)


@pytest.mark.parametrize("pattern, expected", [
    ("*block_3*", ["model.block_3.weight"]), ("**.bias", ["a.bias"]), ("*", ["a.bias", "model.block_3.weight"]),
    ("*?ias", ["a.bias"]), ("*[ab].bias", ["a.bias"]),
])
def test_leading_stars_of_a_glob_change_nothing(pattern, expected):
    from ztviewer.gui.models.tree_proxy import name_matcher

    names = ["a.bias", "model.block_3.weight"]
    assert [n for n in names if name_matcher(pattern)(n)] == expected
