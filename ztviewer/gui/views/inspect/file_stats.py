"""Whole-file statistics: one row per tensor, filled in progressively by a worker, sortable to find outliers
(largest magnitude, NaN / Inf counts, std, sparsity)."""
from __future__ import annotations

import math
import time
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ztviewer.analysis.stats import TensorStats
from ztviewer.analysis.tensor_stats import file_statistics
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.session.formatting import shape_text

from .runner import JobSlot

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
BATCH_SECONDS = 0.1


class Col(IntEnum):
    NAME = 0
    DTYPE = 1
    SHAPE = 2
    LAYOUT = 3
    ELEMENTS = 4
    MIN = 5
    MAX = 6
    ABSMAX = 7
    MEAN = 8
    STD = 9
    ZEROS = 10
    NAN = 11
    POS_INF = 12
    NEG_INF = 13
    NOTE = 14


WIDTHS = {0: 220, 1: 76, 2: 84, 3: 80, 4: 84, 5: 96, 6: 96, 7: 96, 8: 96, 9: 96, 10: 70, 11: 52, 12: 52, 13: 52}
HEADERS = ("Tensor", "DType", "Shape", "Layout", "Elements", "Min", "Max", "Max |x|", "Mean", "Std", "Zeros %",
           "NaN", "+Inf", "−Inf", "Note")


def _abs_max(s: TensorStats) -> float | int | None:
    if s.min is None or s.max is None:
        return None
    return max(abs(s.min), abs(s.max))


_VALUES = {
    Col.MIN: lambda s: s.min, Col.MAX: lambda s: s.max, Col.ABSMAX: _abs_max, Col.MEAN: lambda s: s.mean,
    Col.STD: lambda s: s.std, Col.ZEROS: lambda s: s.sparsity * 100 if s.count else None,
    Col.NAN: lambda s: s.nan, Col.POS_INF: lambda s: s.pos_inf, Col.NEG_INF: lambda s: s.neg_inf,
}


def _text(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) or abs(value) >= 10**12:
        return f"{value:.6g}"
    return f"{value:,}"


class FileStatsModel(QAbstractTableModel):
    """Rows are the file's tensors in manifest order; ``set_result`` fills one in."""

    def __init__(self, tensor_file: TensorFile | None = None, parent=None) -> None:
        super().__init__(parent)
        self.tensors: list[Tensor] = []
        self.results: list[TensorStats | str | None] = []
        self.filled = 0
        if tensor_file is not None:
            self.set_file(tensor_file)

    def set_file(self, tensor_file: TensorFile | None) -> None:
        self.beginResetModel()
        self.tensors = list(tensor_file.tensors) if tensor_file is not None else []
        self.results = [None] * len(self.tensors)
        self.filled = 0
        self.endResetModel()

    def item(self, index: QModelIndex) -> Tensor | None:
        return self.tensors[index.row()] if index.isValid() and index.row() < len(self.tensors) else None

    def set_result(self, row: int, result: TensorStats | str) -> None:
        if self.results[row] is None:
            self.filled += 1
        self.results[row] = result
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(HEADERS) - 1))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.tensors)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(HEADERS):
            return HEADERS[section]
        return None

    def value(self, row: int, column: int):
        """The raw (sortable) value of a cell: numbers for statistics, None when unknown."""
        tensor, result = self.tensors[row], self.results[row]
        if column == Col.NAME:
            return tensor.name
        if column == Col.DTYPE:
            return tensor.dtype
        if column == Col.SHAPE:
            return tensor.numel
        if column == Col.LAYOUT:
            return tensor.layout
        if column == Col.ELEMENTS:
            return tensor.numel
        if column == Col.NOTE:
            return result if isinstance(result, str) else ("" if result is not None else "pending")
        if isinstance(result, TensorStats):
            return _VALUES[Col(column)](result)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == SORT_ROLE:
            return self.value(row, column)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == Col.SHAPE:
                return shape_text(self.tensors[row].shape)
            value = self.value(row, column)
            if column in (Col.NAME, Col.DTYPE, Col.LAYOUT, Col.NOTE):
                return value
            if self.results[row] is None and column != Col.ELEMENTS:
                return "…"
            return _text(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= Col.ELEMENTS and column != Col.NOTE:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column in (Col.NAME, Col.NOTE):
            return self.tensors[row].name if column == Col.NAME else self.value(row, column) or None
        return None


def _known(value):
    return None if isinstance(value, float) and math.isnan(value) else value


class FileStatsProxy(QSortFilterProxyModel):
    """Sorts by the numeric values (unknown ones last) and filters names by substring."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setFilterKeyColumn(Col.NAME)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

    def lessThan(self, left: QModelIndex | QPersistentModelIndex, right: QModelIndex | QPersistentModelIndex) -> bool:
        a, b = _known(left.data(SORT_ROLE)), _known(right.data(SORT_ROLE))
        if a is None or b is None:  # unknown values go last in either order
            ascending = self.sortOrder() == Qt.SortOrder.AscendingOrder
            return (a is not None and b is None) == ascending if (a is None) != (b is None) else False
        if isinstance(a, str) or isinstance(b, str):
            return str(a).lower() < str(b).lower()
        return a < b


def file_stats_job(tf: TensorFile):
    """Statistics of every tensor (no histograms), sent as ``partial`` batches of ``(row, result)``."""

    def job(task) -> int:
        batch, last = [], time.monotonic()
        count = 0
        for row, (_, result) in enumerate(file_statistics(tf, bins=0, cancelled=task.is_cancelled,
                                                          progress=task.report_progress)):
            batch.append((row, result))
            count += 1
            if time.monotonic() - last >= BATCH_SECONDS:
                task.emit_partial(batch)
                batch, last = [], time.monotonic()
        if batch:
            task.emit_partial(batch)
        return count

    return job


class FileStatsView(QWidget):
    """The table, a filter box and a progress bar. ``tensor_activated(Tensor)`` on double-click."""

    tensor_activated = Signal(object)
    finished = Signal()

    def __init__(self, pool=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = FileStatsModel(parent=self)
        self.proxy = FileStatsProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setObjectName("fileStatsTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in WIDTHS.items():
            self.table.setColumnWidth(column, width)
        self.table.doubleClicked.connect(self._activated)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter tensors by name")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.status = QLabel()
        self.progress = QProgressBar()
        self.progress.setMaximumHeight(12)
        self.progress.setMaximumWidth(200)
        self.progress.setTextVisible(False)
        self.progress.hide()
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.progress)
        top.addWidget(self.status)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        self.slot = JobSlot(pool, self)
        self.slot.progress.connect(self._progress)
        self.tensor_file: TensorFile | None = None

    def set_file(self, tf: TensorFile | None, start: bool = False) -> None:
        self.slot.cancel()
        self.tensor_file = tf
        self.model.set_file(tf)
        self.status.setText("" if tf is None else f"{len(tf.tensors):,} tensors")
        if start:
            self.start()

    @property
    def started(self) -> bool:
        return self.slot.busy or self.model.filled > 0

    def start(self) -> None:
        tf = self.tensor_file
        if tf is None or not tf.tensors:
            return
        self.progress.setRange(0, len(tf.tensors))
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText("computing…")
        self.slot.start(file_stats_job(tf), self._done, partial=self._partial, failed=self._failed)

    def _partial(self, batch) -> None:
        for row, result in batch:
            self.model.set_result(row, result)

    def _progress(self, done, total) -> None:
        self.progress.setValue(int(done))
        self.status.setText(f"{done:,} / {total:,}")

    def _done(self, count: int) -> None:
        self.progress.hide()
        self.status.setText(f"{count:,} tensors")
        self.finished.emit()

    def _failed(self, text: str) -> None:
        self.progress.hide()
        self.status.setText(f"failed: {text}")

    def _activated(self, index: QModelIndex) -> None:
        tensor = self.model.item(self.proxy.mapToSource(index))
        if tensor is not None:
            self.tensor_activated.emit(tensor)

    def shutdown(self) -> None:
        self.slot.shutdown()
