"""The rows of a Compare tab: one per pair (or one-sided tensor), in the session's filtered and sorted order.

One flat model feeds both aligned trees: the A tree shows the A columns, the B tree the status, B and the
numbers, so a pair is always on the same row on both sides.
"""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from ztviewer.analysis.diff import PairDiff, TensorSide, Verdict
from ztviewer.codec.text import printable
from ztviewer.session.comparison import (
    METRICS,
    NAME,
    VERDICT,
    ComparisonSession,
    metric,
)
from ztviewer.session.formatting import shape_text

from ..theme import is_dark, tint

PAIR_ROLE = Qt.ItemDataRole.UserRole + 1       # the pair's number in the session
SORT_ROLE = Qt.ItemDataRole.UserRole + 2       # the number sorted on (None when the pair has none)

A_COLUMNS = ["A tensor", "A dtype", "A shape"]
B_COLUMNS = ["status", "B tensor", "B dtype", "B shape"]
METRIC_COLUMNS = list(METRICS)
HEADERS = A_COLUMNS + B_COLUMNS + METRIC_COLUMNS + ["notes"]
FIRST_B = len(A_COLUMNS)
FIRST_METRIC = FIRST_B + len(B_COLUMNS)
NOTES = len(HEADERS) - 1
SORT_KEYS: dict[int, str] = {0: NAME, FIRST_B: VERDICT, FIRST_B + 1: NAME,
                             **{FIRST_METRIC + k: key for k, key in enumerate(METRIC_COLUMNS)}}

STATUS_TEXT = {Verdict.IDENTICAL: "identical", Verdict.SAME_CONTENT: "same content", Verdict.CLOSE: "within tol.",
               Verdict.DIFFERENT: "different", Verdict.INCOMPARABLE: "incomparable", Verdict.ONLY_A: "only in A",
               Verdict.ONLY_B: "only in B"}
_HUES = {Verdict.IDENTICAL: QColor(0x1E, 0x84, 0x49), Verdict.SAME_CONTENT: QColor(0x17, 0xA5, 0x89),
         Verdict.CLOSE: QColor(0x7D, 0xB3, 0x2B), Verdict.DIFFERENT: QColor(0xD3, 0x54, 0x00),
         Verdict.INCOMPARABLE: QColor(0x8E, 0x44, 0xAD), Verdict.ONLY_A: QColor(0xC0, 0x39, 0x2B),
         Verdict.ONLY_B: QColor(0x29, 0x80, 0xB9)}


def verdict_color(verdict: Verdict) -> QColor:
    """The colour of a verdict (lighter on a dark palette)."""
    hue = _HUES[verdict]
    return hue.lighter(150) if is_dark() else hue


def number_text(value: float | None, digits: int = 4) -> str:
    if value is None:
        return ""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "−inf"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.{digits}g}"


def notes(pair: PairDiff) -> str:
    parts = (["renamed"] if pair.renamed else []) + list(pair.changes) + ([pair.reason] if pair.reason else [])
    if pair.attributes:
        parts.append(f"{len(pair.attributes)} attribute change{'s' if len(pair.attributes) != 1 else ''}")
    return printable("; ".join(parts))


def _side_text(side: TensorSide | None, column: int) -> str:
    if side is None:
        return ""
    return (printable(side.name), side.dtype, shape_text(side.shape))[column]


class ComparePairsModel(QAbstractTableModel):
    """Rows = the session's shown pairs. ``sort`` (header clicks) sets the session's sort."""

    def __init__(self, session: ComparisonSession, parent=None) -> None:
        super().__init__(parent)
        self.session = session
        self._rows: list[int] = list(session.order)
        session.pairs_added.connect(self._on_pairs_added)
        session.order_changed.connect(self._on_order_changed)

    def detach(self) -> None:
        self.session.pairs_added.disconnect(self._on_pairs_added)
        self.session.order_changed.disconnect(self._on_order_changed)

    # -- access ---------------------------------------------------------------------------------------------
    def item(self, index: QModelIndex | QPersistentModelIndex) -> PairDiff | None:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        return self.session.pairs[self._rows[index.row()]]

    def row_of(self, number: int) -> int | None:
        try:
            return self._rows.index(number)
        except ValueError:
            return None

    # -- Qt model -------------------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(HEADERS):
            return HEADERS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        pair = self.item(index)
        if pair is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(pair, column)
        if role == PAIR_ROLE:
            return self._rows[index.row()]
        if role == SORT_ROLE:
            key = SORT_KEYS.get(column)
            return metric(pair, key) if key in METRICS else None
        if role == Qt.ItemDataRole.ForegroundRole and column in (0, FIRST_B, FIRST_B + 1):
            return verdict_color(pair.verdict) if not pair.verdict.content_equal or column == FIRST_B else None
        if role == Qt.ItemDataRole.BackgroundRole and column == FIRST_B:
            return tint(verdict_color(pair.verdict), 0.16)
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= FIRST_METRIC and column != NOTES:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(pair, column)
        return None

    def _text(self, pair: PairDiff, column: int) -> str:
        if column < FIRST_B:
            return _side_text(pair.a, column)
        if column == FIRST_B:
            return STATUS_TEXT[pair.verdict]
        if column < FIRST_METRIC:
            return _side_text(pair.b, column - FIRST_B - 1)
        if column == NOTES:
            return notes(pair)
        key = METRIC_COLUMNS[column - FIRST_METRIC]
        value = metric(pair, key)
        if key == "max |Δ|" and value is not None and pair.stats is not None and pair.stats.max_abs_index:
            return f"{number_text(value)} @[{','.join(map(str, pair.stats.max_abs_index))}]"
        return number_text(value, 7 if key == "cosine" else 4)

    def _tooltip(self, pair: PairDiff, column: int) -> str | None:
        if column == FIRST_B:
            return pair.verdict.value + (f": {printable(pair.reason)}" if pair.reason else "")
        if column == NOTES:
            return notes(pair) or None
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.session.set_sort(SORT_KEYS.get(column), order == Qt.SortOrder.DescendingOrder)

    # -- following the session -------------------------------------------------------------------------------
    def _on_pairs_added(self, _numbers: list[int]) -> None:
        new = list(self.session.order)
        old = self._rows
        if new[:len(old)] == old:
            if len(new) > len(old):
                self.beginInsertRows(QModelIndex(), len(old), len(new) - 1)
                self._rows = new
                self.endInsertRows()
            return
        self._reorder(new)

    def _on_order_changed(self, _: None) -> None:
        self._reorder(list(self.session.order))

    def _reorder(self, new: list[int]) -> None:
        if sorted(new) != sorted(self._rows):      # rows come or go: the views rebuild (selection from session)
            self.beginResetModel()
            self._rows = new
            self.endResetModel()
            return
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        numbers = [self._rows[i.row()] if 0 <= i.row() < len(self._rows) else None for i in persistent]
        self._rows = new
        position = {n: r for r, n in enumerate(new)}
        moved = [self.index(position[n], i.column()) if n is not None else QModelIndex()
                 for i, n in zip(persistent, numbers)]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()
