"""What the Compare tab's read-only tables share: fixed column titles over a list of rows."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt


def column_title(headers: Sequence[str], section: int, orientation: Qt.Orientation, role: int) -> str | None:
    """``headers[section]`` for a horizontal header's display text, else ``None``."""
    if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
            and 0 <= section < len(headers):
        return headers[section]
    return None


class RowsModel(QAbstractTableModel):
    """A flat, selectable, read-only table: one row per entry of ``_rows``, one column per entry of ``headers``."""

    headers: Sequence[str] = ()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []

    def item(self, index: QModelIndex | QPersistentModelIndex) -> Any:
        """The row ``index`` is in, ``None`` for an invalid index."""
        return self._rows[index.row()] if index.isValid() and 0 <= index.row() < len(self._rows) else None

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return column_title(self.headers, section, orientation, role)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
