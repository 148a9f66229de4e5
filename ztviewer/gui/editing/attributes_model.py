"""Table model of one scope's attributes (the file's, or one tensor's), editing through an :class:`EditSession`.

Columns: key, type, value. Editing a key renames the attribute, editing the value or the type sets it; every
change is a codec command on the undo stack. A refused edit leaves the data as it was and emits
``refused(message)``.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from ztviewer.codec.edit import (
    Command,
    DeleteFileAttribute,
    DeleteTensorAttribute,
    RenameFileAttribute,
    RenameTensorAttribute,
    SetFileAttribute,
    SetTensorAttribute,
)
from ztviewer.codec.errors import EditRefused
from ztviewer.session import value_text

from ..models.edit_stack import EditSession

AnyIndex = QModelIndex | QPersistentModelIndex
KIND_ROLE = Qt.ItemDataRole.UserRole + 1      # allowed kinds of a type cell (tuple of str)
VALUE_ROLE = Qt.ItemDataRole.UserRole + 2     # the Python value of a row


class AttrColumn(IntEnum):
    KEY = 0
    TYPE = 1
    VALUE = 2


HEADERS = ("Key", "Type", "Value")


class AttributesModel(QAbstractTableModel):
    """Attributes of ``scope`` (None = file, else a tensor's current name) in ``session``'s document."""

    refused = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session: EditSession | None = None
        self.scope: str | None = None
        self._keys: list[str] = []

    # -- scope ---------------------------------------------------------------------------------------------
    def set_scope(self, session: EditSession | None, scope: str | None) -> None:
        if self.session is not session:
            if self.session is not None:
                self.session.changed.disconnect(self.refresh)
            if session is not None:
                session.changed.connect(self.refresh)
        self.session, self.scope = session, scope
        self.refresh()

    def attributes(self) -> dict[str, Any]:
        if self.session is None:
            return {}
        try:
            return self.session.attributes(self.scope)
        except EditRefused:        # the tensor was deleted or renamed away
            return {}

    def refresh(self) -> None:
        keys = list(self.attributes())
        if keys == self._keys:
            if keys:     # same rows: repaint values in place (keeps selection and an open editor)
                self.dataChanged.emit(self.index(0, 0), self.index(len(keys) - 1, len(AttrColumn) - 1))
            return
        self.beginResetModel()
        self._keys = keys
        self.endResetModel()

    def can_hold(self) -> bool:
        """Whether the document's format has attributes in this scope at all."""
        if self.session is None:
            return False
        target = self.session.doc.target
        return target.tensor_attributes if self.scope is not None else target.file_attributes != "none"

    def kinds(self) -> tuple[str, ...]:
        """Value kinds the format allows in this scope."""
        target = self.session.doc.target if self.session is not None else None
        if target is None or (self.scope is None and target.file_attributes == "str"):
            return value_text.STRING_ONLY
        return value_text.KINDS

    # -- Qt model --------------------------------------------------------------------------------------------
    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(AttrColumn)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < 3:
            return HEADERS[section]
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
        if index.column() != AttrColumn.TYPE or len(self.kinds()) > 1:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._keys):
            return None
        key = self._keys[index.row()]
        value = self.attributes().get(key)
        column = index.column()
        if role == VALUE_ROLE:
            return value
        if role == KIND_ROLE:
            return self.kinds()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if column == AttrColumn.KEY:
                return key
            if column == AttrColumn.TYPE:
                return value_text.kind_of(value)
            return value_text.to_text(value)
        if role == Qt.ItemDataRole.ToolTipRole and column == AttrColumn.VALUE:
            return value_text.to_text(value)
        return None

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or role != Qt.ItemDataRole.EditRole or self.session is None:
            return False
        key = self._keys[index.row()]
        column = index.column()
        if column == AttrColumn.KEY:
            new = str(value).strip()
            if not new or new == key:
                return False
            return self._push(self._rename(key, new))
        current = self.attributes().get(key)
        if column == AttrColumn.TYPE:
            new_value = value_text.convert(current, str(value))
        else:
            try:
                new_value = value_text.parse(value_text.kind_of(current), str(value)) if isinstance(value, str) \
                    else value
            except value_text.InvalidValue as exc:
                self.refused.emit(str(exc))
                return False
        if new_value == current and type(new_value) is type(current):
            return False
        return self._push(self._set(key, new_value))

    # -- edits -----------------------------------------------------------------------------------------------
    def _set(self, key: str, value: Any) -> Command:
        return SetFileAttribute(key, value) if self.scope is None else SetTensorAttribute(self.scope, key, value)

    def _rename(self, old: str, new: str) -> Command:
        return RenameFileAttribute(old, new) if self.scope is None else RenameTensorAttribute(self.scope, old, new)

    def _push(self, command: Command) -> bool:
        if self.session is None:        # no file (or one that could not be read): nothing to edit
            return False
        try:
            self.session.push(command)
        except EditRefused as exc:
            self.refused.emit(exc.message)
            return False
        return True

    def add(self, key: str | None = None, value: Any = "") -> int:
        """Add an attribute (a fresh ``new_key`` by default); returns its row or -1 when refused."""
        taken = set(self.attributes())
        if key is None:
            key, n = "new_key", 1
            while key in taken:
                n += 1
                key = f"new_key_{n}"
        if not self._push(self._set(key, value)):
            return -1
        return self._keys.index(key)

    def remove(self, rows: list[int]) -> None:
        for key in [self._keys[r] for r in sorted(set(rows)) if 0 <= r < len(self._keys)]:
            command = DeleteFileAttribute(key) if self.scope is None else DeleteTensorAttribute(self.scope, key)
            if not self._push(command):
                return
