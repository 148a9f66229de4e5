"""The attribute changes of a comparison: file attributes, then every tensor's (added / removed / changed)."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from ztviewer.analysis.diff import AttrChange, AttrKind
from ztviewer.codec.text import printable, value_text
from ztviewer.session.comparison import ComparisonSession

from ..theme import error_color, ok_color, warning_color
from .rows_model import RowsModel

HEADERS = ["where", "attribute", "change", "A", "B"]
FILE = "(file)"


class AttributeChangesModel(RowsModel):
    """One row per changed attribute: ``(where, AttrChange)``; ``where`` is :data:`FILE` or a tensor name."""

    headers = HEADERS

    def __init__(self, session: ComparisonSession, parent=None) -> None:
        super().__init__(parent)
        self.session = session
        self._rows: list[tuple[str, AttrChange]] = []
        self._seen = 0
        self.refresh()
        session.pairs_added.connect(self._on_pairs_added)
        session.state_changed.connect(lambda _state: self.refresh())

    def refresh(self) -> None:
        self.beginResetModel()
        self._rows = [(FILE, c) for c in self.session.file_attributes]
        self._seen = 0
        self._rows.extend(self._pair_rows(0))
        self._seen = len(self.session.pairs)
        self.endResetModel()

    def _pair_rows(self, start: int) -> list[tuple[str, AttrChange]]:
        return [(pair.name, c) for pair in self.session.pairs[start:] for c in pair.attributes]

    def _on_pairs_added(self, _numbers: list[int]) -> None:
        new = self._pair_rows(self._seen)
        self._seen = len(self.session.pairs)
        if new:
            self.beginInsertRows(QModelIndex(), len(self._rows), len(self._rows) + len(new) - 1)
            self._rows.extend(new)
            self.endInsertRows()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.item(index)
        if row is None:
            return None
        where, change = row
        column = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            if column == 0:
                return printable(where)
            if column == 1:
                return printable(change.key)
            if column == 2:
                return change.kind.value
            value = change.a if column == 3 else change.b
            absent = ((column == 3 and change.kind is AttrKind.ADDED)
                      or (column == 4 and change.kind is AttrKind.REMOVED))
            return "" if absent else value_text(value, 400 if role == Qt.ItemDataRole.ToolTipRole else 120)
        if role == Qt.ItemDataRole.ForegroundRole and column == 2:
            return {AttrKind.ADDED: ok_color(), AttrKind.REMOVED: error_color(),
                    AttrKind.CHANGED: warning_color()}[change.kind]
        return None
