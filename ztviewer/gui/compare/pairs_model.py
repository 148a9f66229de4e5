"""The rows of a Compare tab: one per pair (or one-sided tensor), in the session's filtered and sorted order,
grouped by dotted name prefix like the file tree (:class:`~ztviewer.session.tree_nodes.Grouping`, the same
grouping); a group shows its worst verdict and how many of its pairs differ.

One model feeds both aligned trees: the A tree shows the A columns, the B tree the status, B and the
numbers, so a pair is always on the same row on both sides (the trees expand and collapse together).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from ztviewer.analysis.diff import PairDiff, TensorSide, Verdict
from ztviewer.codec.text import printable
from ztviewer.session.comparison import (
    METRICS,
    NAME,
    SEVERITY,
    VERDICT,
    ComparisonSession,
    metric,
)
from ztviewer.session.formatting import number_text, plural, shape_text
from ztviewer.session.tree_nodes import FILE_ID, GROUP_FLAG, Grouping, TensorGroup, tensor_id, tensor_position

from ..theme import is_dark, tint
from .rows_model import column_title

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


def notes(pair: PairDiff) -> str:
    parts = (["renamed"] if pair.renamed else []) + list(pair.changes) + ([pair.reason] if pair.reason else [])
    if pair.attributes:
        parts.append(plural(len(pair.attributes), "attribute change"))
    return printable("; ".join(parts))


def _side_text(side: TensorSide | None, column: int) -> str:
    if side is None:
        return ""
    return (printable(side.name), side.dtype, shape_text(side.shape))[column]


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """A group's worst verdict and its pairs per verdict."""

    worst: Verdict
    counts: dict[Verdict, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self) -> str:
        changed = self.total - sum(n for v, n in self.counts.items() if v.content_equal)
        parts = [f"{n} {STATUS_TEXT[v]}" for v, n in sorted(self.counts.items(), key=lambda i: SEVERITY[i[0]]) if n]
        return f"{changed} of {self.total} differ: " + ", ".join(parts)


class ComparePairsModel(QAbstractItemModel):
    """The session's shown pairs under their dotted-prefix groups. ``sort`` (header clicks) sets the session's
    sort: pairs are ordered by it within each group, groups by name."""

    def __init__(self, session: ComparisonSession, parent=None) -> None:
        super().__init__(parent)
        self.session = session
        self._set_rows(list(session.order))
        session.pairs_added.connect(self._on_pairs_added)
        session.order_changed.connect(self._on_order_changed)

    def detach(self) -> None:
        self.session.pairs_added.disconnect(self._on_pairs_added)
        self.session.order_changed.disconnect(self._on_order_changed)

    def _set_rows(self, rows: list[int]) -> None:
        self._rows = rows
        self._position = {number: position for position, number in enumerate(rows)}
        descending = self.session.descending and self.session.sort_key == NAME
        self._grouping = Grouping([self.session.pairs[n].name for n in rows], range(len(rows)), descending)
        self._summaries: dict[int, GroupSummary] = {}

    # -- access ---------------------------------------------------------------------------------------------
    def item(self, index: QModelIndex | QPersistentModelIndex) -> PairDiff | None:
        """The pair of a row (``None`` for a group row)."""
        if not index.isValid() or index.internalId() & GROUP_FLAG:
            return None
        position = tensor_position(index.internalId())
        return self.session.pairs[self._rows[position]] if 0 <= position < len(self._rows) else None

    def group(self, index: QModelIndex | QPersistentModelIndex) -> TensorGroup | None:
        if not index.isValid() or not index.internalId() & GROUP_FLAG:
            return None
        return self._grouping.group(index.internalId())

    def index_of(self, number: int) -> QModelIndex:
        """The row of pair ``number`` (invalid when it is not shown); its groups are built as needed."""
        position = self._position.get(number)
        if position is None:
            return QModelIndex()
        _, row = self._grouping.place_of_tensor(position)
        return self.createIndex(row, 0, tensor_id(position))

    def first_pair(self) -> QModelIndex:
        """The first pair row in display order (groups opened on the way)."""
        parent_id = FILE_ID
        while True:
            children = self._grouping.children(parent_id)
            if not children:
                return QModelIndex()
            leaves = [c for c in children if not c & GROUP_FLAG]
            if leaves:
                return self.createIndex(children.index(leaves[0]), 0, leaves[0])
            parent_id = children[0]

    def summary(self, group: TensorGroup) -> GroupSummary:
        found = self._summaries.get(group.node_id)
        if found is None:
            counts: dict[Verdict, int] = {}
            for position in group.members:
                verdict = self.session.pairs[self._rows[position]].verdict
                counts[verdict] = counts.get(verdict, 0) + 1
            found = GroupSummary(min(counts, key=lambda v: SEVERITY[v]), counts)
            self._summaries[group.node_id] = found
        return found

    # -- Qt model -------------------------------------------------------------------------------------------
    def _children(self, parent: QModelIndex | QPersistentModelIndex) -> list[int]:
        if not parent.isValid():
            return self._grouping.children(FILE_ID)
        if parent.column() != 0 or not parent.internalId() & GROUP_FLAG:
            return []
        return self._grouping.children(parent.internalId())

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:
        children = self._children(parent)
        if not (0 <= row < len(children) and 0 <= column < len(HEADERS)):
            return QModelIndex()
        return self.createIndex(row, column, children[row])

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = index.internalId()
        if node & GROUP_FLAG:
            parent_id, _ = self._grouping.place_of_group(node)
        else:
            parent_id, _ = self._grouping.place_of_tensor(tensor_position(node))
        if parent_id == FILE_ID:
            return QModelIndex()
        return self.createIndex(self._grouping.group(parent_id).row, 0, parent_id)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return len(self._children(parent))

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_title(HEADERS, section, orientation, role)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        group = self.group(index)
        if group is not None:
            return self._group_data(group, index.column(), role)
        pair = self.item(index)
        if pair is None:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(pair, column)
        if role == PAIR_ROLE:
            return self._rows[tensor_position(index.internalId())]
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

    def _group_data(self, group: TensorGroup, column: int, role: int) -> Any:
        summary = self.summary(group)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return f"{printable(group.label)}  ({summary.total})"
            if column == FIRST_B:
                return STATUS_TEXT[summary.worst]
            if column == NOTES:
                return summary.text()
            return None
        if role == Qt.ItemDataRole.ForegroundRole and column in (0, FIRST_B):
            return verdict_color(summary.worst) if not summary.worst.content_equal or column == FIRST_B else None
        if role == Qt.ItemDataRole.BackgroundRole and column == FIRST_B:
            return tint(verdict_color(summary.worst), 0.16)
        if role == Qt.ItemDataRole.ToolTipRole and column in (0, FIRST_B, NOTES):
            return f"{printable(group.prefix)}: {summary.text()}"
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
        self._reset(list(self.session.order))

    def _on_order_changed(self, _: None) -> None:
        self._reset(list(self.session.order))

    def _reset(self, rows: list[int]) -> None:
        """Groups are rebuilt (the views restore the selection and which groups are open)."""
        self.beginResetModel()
        self._set_rows(rows)
        self.endResetModel()
