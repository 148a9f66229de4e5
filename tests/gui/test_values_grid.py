"""The values grid follows the heatmap's plane, passes qtmodeltester, goes to an index and copies exactly."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtGui import QGuiApplication

from ztviewer.codec.dtypes import to_float32
from ztviewer.codec.sparse import SparseCSR
from ztviewer.gui.views.inspect.values_grid import (
    MAX_ROWS,
    ValuesModel,
    ValuesView,
    parse_index,
)
from ztviewer.session.inspect_data import DenseData
from ztviewer.session.value_grid import PlaneCells, SparseEntries


def cell(view: ValuesView, row: int, col: int) -> str:
    return view.model.data(view.model.index(row, col))


def test_model_passes_qtmodeltester(qtmodeltester):
    model = ValuesModel()
    model.set_source(PlaneCells(np.arange(300 * 70, dtype=np.int32).reshape(300, 70), "int32"))
    qtmodeltester.check(model)
    csr = SparseCSR((3, 4), np.array([0, 2, 2, 3], np.uint64), np.array([1, 3, 0], np.uint64),
                    np.array([1.5, -2, 7], np.float32), "float32")
    model.set_source(SparseEntries(csr))
    qtmodeltester.check(model)
    model.set_source(None)
    qtmodeltester.check(model)


def test_grid_shows_the_heatmaps_plane_and_follows_axes_and_slices(qtbot, heatmap):
    bits = (np.arange(2 * 3 * 4, dtype=np.uint32).reshape(2, 3, 4) * 0x40 + 0x3F80).astype(np.uint16)
    heatmap.set_data(DenseData(bits, "bfloat16"), "w")
    heatmap.values_button.setChecked(True)
    assert heatmap.stack.currentWidget() is heatmap.values
    grid = heatmap.values
    shown = to_float32(bits, "bfloat16")
    assert (grid.model.rowCount(), grid.model.columnCount()) == (3, 4)
    assert cell(grid, 2, 3) == f"{shown[0, 2, 3]:.4g}"
    heatmap.axes.set_index(0, 1)
    qtbot.waitUntil(lambda: cell(grid, 2, 3) == f"{shown[1, 2, 3]:.4g}", timeout=5000)
    assert grid.model.headerData(2, Qt.Orientation.Vertical) == "2"
    assert "axis 0 = 1" in grid.caption.text()
    grid.go_to(1, 2)
    assert grid.position.text() == "[1, 1, 2]"
    heatmap.axes.set_axes(2, 0)       # rows along axis 2, columns along axis 0, axis 1 sliced
    qtbot.waitUntil(lambda: grid.model.rowCount() == 4, timeout=5000)
    assert grid.model.columnCount() == 2
    assert cell(grid, 3, 1) == f"{shown[1, 0, 3]:.4g}"
    heatmap.values_button.setChecked(False)
    assert heatmap.stack.currentWidget() is heatmap.image


def test_millions_of_rows_read_only_whats_asked(qtbot):
    reads = []

    class Counting(PlaneCells):
        def texts(self, r0, r1, c0, c1):
            reads.append((r1 - r0) * (c1 - c0))
            return super().texts(r0, r1, c0, c1)

    big = np.lib.stride_tricks.as_strided(np.arange(3, dtype=np.float32), (5_000_000, 3), (0, 4))
    view = ValuesView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    view.set_source(Counting(big, "float32"), "big")
    assert view.go_to(4_999_999, 2)
    qtbot.wait(50)
    assert cell(view, 4_999_999, 2) == "2.0"
    assert sum(reads) < 20_000      # a few blocks on screen, never the 15 million cells
    assert view.model.rowCount() == 5_000_000 <= MAX_ROWS


def test_copy_selection_as_tsv_and_numpy(qtbot):
    a = np.arange(20, dtype=np.float32).reshape(4, 5) / 4
    view = ValuesView()
    qtbot.addWidget(view)
    view.set_source(PlaneCells(a, "float32"))
    view.go_to(1, 1)
    view.table.selectionModel().select(QItemSelection(view.model.index(1, 1), view.model.index(2, 3)),
                                       QItemSelectionModel.SelectionFlag.ClearAndSelect)
    messages = []
    view.message.connect(messages.append)
    view.copy_action.trigger()
    assert QGuiApplication.clipboard().text() == "1.5\t1.75\t2.0\n2.75\t3.0\t3.25\n"
    view.copy_numpy_action.trigger()
    np.testing.assert_array_equal(eval(QGuiApplication.clipboard().text(), {"np": np}), a[1:3, 1:4])
    assert messages[-1] == "Copied 2 × 3 cells as a NumPy literal"
    assert view.copy_action.shortcut().toString() == "Ctrl+C"
    assert view.copy_numpy_action.shortcut().toString() == "Ctrl+Shift+C"
    assert view.goto_action.shortcut().toString() == "Ctrl+J"


def test_parse_index():
    assert parse_index("12, 40") == (12, 40)
    assert parse_index("(3 4)") == (3, 4)
    assert parse_index("7") == (7, 0)
    assert parse_index("-1, -1") == (-1, -1)
    assert parse_index("1_000, 2") == (1000, 2)
    assert parse_index("a, b") is None and parse_index("1,2,3") is None


def test_a_hidden_grid_is_filled_when_shown(qtbot, heatmap):
    """The grid follows the plane only while on screen (a hidden grid would lay out its headers on the way to the
    image's first paint) and catches up when shown, holding no plane of an earlier tensor meanwhile."""
    first = np.arange(12, dtype=np.float32).reshape(3, 4)
    heatmap.set_data(DenseData(first, "float32"), "a")
    assert heatmap.values.model.source is None
    heatmap.values_button.setChecked(True)
    assert (heatmap.values.model.rowCount(), heatmap.values.model.columnCount()) == (3, 4)
    heatmap.values_button.setChecked(False)
    heatmap.set_data(DenseData(np.ones((5, 2), np.float32), "float32"), "b")
    assert heatmap.values.model.source is None
    heatmap.values_button.setChecked(True)
    assert (heatmap.values.model.rowCount(), heatmap.values.model.columnCount()) == (5, 2)
    assert cell(heatmap.values, 4, 1) == "1.0"
