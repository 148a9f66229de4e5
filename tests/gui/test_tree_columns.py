"""The tensor tree's column widths: what Qt's own measurement finds, for a fraction of the model reads."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from tests.gui.window_helpers import open_in_window
from ztviewer.codec.arrays import save_arrays
from ztviewer.gui.models.tensor_tree import TensorTreeModel
from ztviewer.gui.models.tree_roles import Column
from ztviewer.gui.tree_columns import EXACT_ROWS, SAMPLE_ROWS

LONG_NAME = "model.layers.17.self_attention.query_key_value.weight"


def test_measured_widths_are_what_the_tree_itself_measures(qtbot, window, tmp_path):
    path = tmp_path / "names.zt"
    arrays = {LONG_NAME: np.zeros((3, 4), np.float32), "b": np.zeros(2, np.int64),
              "model.norm.bias": np.zeros(7, np.float16)}
    save_arrays(path, arrays, "zt", digest="crc32c")
    view = open_in_window(qtbot, window, path)
    tree = view.tree
    tree.expand(tree.model().index(0, 0, tree.model().index(0, 0)))     # a component row, one level deeper
    measured = view.columns._measure_rows()
    assert measured == {c: tree.sizeHintForColumn(c) for c in Column}
    # the name column's content is the whole name (its delegate elides only when painting)
    assert measured[Column.NAME] > tree.fontMetrics().horizontalAdvance(LONG_NAME)


def test_sizing_the_columns_reads_a_sample_of_rows_once(qtbot, window, tmp_path, monkeypatch):
    """Opening a 10,000-tensor file sizes its columns from ``SAMPLE_ROWS`` rows: one text per cell and every
    role of a few rows per column (Qt's sizeHintForColumn asked every role of 1,000 rows per column, and the
    window asked it again on each resize: about 50,000 reads)."""
    from benchmarks.files import many_zt

    path, count, _, _ = many_zt(tmp_path, quick=False)
    reads = []
    original = TensorTreeModel.data

    def counted(self, index, role=Qt.ItemDataRole.DisplayRole):
        reads.append((index.row(), index.column(), role))
        return original(self, index, role)

    monkeypatch.setattr(TensorTreeModel, "data", counted)
    view = open_in_window(qtbot, window, path)
    qtbot.waitUntil(lambda: view.tree.viewport().isVisible())
    view.tree.viewport().repaint()
    assert view.tree_model.rowCount(view.tree_model.file_index()) == count
    columns = len(Column)
    shown_rows = view.tree.viewport().height() // max(1, view.tree.sizeHintForRow(0)) + 2
    every_role = 20
    assert len(reads) <= columns * (SAMPLE_ROWS + (EXACT_ROWS + shown_rows) * every_role), len(reads)
    measured_rows = {row for row, _column, role in reads if role == Qt.ItemDataRole.DisplayRole}
    assert len(measured_rows) <= SAMPLE_ROWS + shown_rows


def test_a_filter_widens_the_columns_its_group_counts_need_unless_the_user_sized_them(qtbot, window, tmp_path):
    """Under a filter a group row reads "1 of 12 tensors": the column it sits in grows to show it whole (never
    narrowing), and a column the user sized stays as the user left it."""
    from tests.gui.test_tree_filter import set_filter

    path = tmp_path / "groups.zt"
    save_arrays(path, {f"model.layers.{i}.weight": np.zeros((3, 4), np.float32) for i in range(12)}, "zt")
    view = open_in_window(qtbot, window, path)
    view.set_grouped(True)
    tree, header = view.tree, view.tree.header()
    view.columns.fit()
    metrics = tree.fontMetrics()
    set_filter(view, "layers.7.")
    group = tree.model().index(0, 0, tree.model().index(0, 0))
    counts = [tree.model().index(group.row(), c, group.parent()).data() for c in Column]
    column = next(c for c, text in zip(Column, counts, strict=True) if text and " of " in str(text))
    assert counts[column] == "1 of 12 tensors"
    assert header.sectionSize(column) >= metrics.horizontalAdvance(counts[column])
    widths = [header.sectionSize(c) for c in Column]
    set_filter(view, "")
    assert [header.sectionSize(c) for c in Column if c != Column.NAME] == \
        [w for c, w in zip(Column, widths, strict=True) if c != Column.NAME]       # never narrowed

    narrow = header.minimumSectionSize() + 4
    header.resizeSection(column, narrow)                                        # the user's choice
    set_filter(view, "layers.7.")
    assert header.sectionSize(column) == narrow
