"""The largest differences of the selected pair (kept by the comparison), largest first."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from ztviewer.analysis.diff import PairDiff
from ztviewer.session.inspect_data import format_value

from .rows_model import RowsModel

HEADERS = ["#", "index", "A", "B", "|Δ|"]


def _abs_difference(a: Any, b: Any) -> float | None:
    try:
        return float(abs(complex(b) - complex(a)))
    except (TypeError, ValueError, OverflowError):
        return None


class WorstModel(RowsModel):
    """Rows ``(index, a, b)`` of ``pair.stats.worst``; :meth:`position` gives a row's element index."""

    headers = HEADERS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[tuple[tuple[int, ...], Any, Any]] = []

    def set_pair(self, pair: PairDiff | None) -> None:
        self.beginResetModel()
        self._rows = list(pair.stats.worst) if pair is not None and pair.stats is not None else []
        self.endResetModel()

    def position(self, row: int) -> tuple[int, ...] | None:
        return tuple(self._rows[row][0]) if 0 <= row < len(self._rows) else None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.item(index)
        if row is None:
            return None
        position, a, b = row
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return str(index.row() + 1)
            if column == 1:
                return "[" + ", ".join(map(str, position)) + "]"
            if column in (2, 3):
                return format_value(a if column == 2 else b)
            difference = _abs_difference(a, b)
            return "" if difference is None else f"{difference:.4g}"
        if role == Qt.ItemDataRole.TextAlignmentRole and column != 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return "Click: show this element in A, B and Δ"
        return None
