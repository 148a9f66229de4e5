"""The attributes editor: a table (model + delegates) of the file's or the selected tensor's attributes."""
from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ztviewer.session import value_text

from ..models.edit_stack import EditSession
from .attributes_model import KIND_ROLE, VALUE_ROLE, AttrColumn, AttributesModel

INVALID_STYLE = "QLineEdit { background: #fde2e1; }"
AnyIndex = QModelIndex | QPersistentModelIndex


class KindValidator(QValidator):
    """Accepts text that parses as the kind; anything else is Intermediate (the editor cannot commit it)."""

    def __init__(self, kind: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.kind = kind

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        try:
            value_text.parse(self.kind, text)
        except value_text.InvalidValue:
            return QValidator.State.Intermediate, text, pos
        return QValidator.State.Acceptable, text, pos


class AttributeDelegate(QStyledItemDelegate):
    """Type column: a combo of the kinds the format allows. Value column: a line edit validated as you type."""

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: AnyIndex) -> QWidget:
        if index.column() == AttrColumn.TYPE:
            combo = QComboBox(parent)
            combo.addItems(list(index.data(KIND_ROLE)))
            return combo
        editor = QLineEdit(parent)
        editor.setFrame(False)
        if index.column() == AttrColumn.VALUE:
            kind = value_text.kind_of(index.data(VALUE_ROLE))
            editor.setValidator(KindValidator(kind, editor))
            editor.textChanged.connect(lambda _t, e=editor, k=kind: self._mark(e, k))
        return editor

    @staticmethod
    def _mark(editor: QLineEdit, kind: str) -> None:
        try:
            value_text.parse(kind, editor.text())
        except value_text.InvalidValue as exc:
            editor.setStyleSheet(INVALID_STYLE)
            editor.setToolTip(str(exc))
        else:
            editor.setStyleSheet("")
            editor.setToolTip("")

    def setEditorData(self, editor: QWidget, index: AnyIndex) -> None:
        text = index.data(Qt.ItemDataRole.EditRole)
        if isinstance(editor, QComboBox):
            editor.setCurrentText(text)
        elif isinstance(editor, QLineEdit):
            editor.setText(text)

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: AnyIndex) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentText())
        elif isinstance(editor, QLineEdit) and (editor.validator() is None or editor.hasAcceptableInput()):
            model.setData(index, editor.text())


def scope_note(session: EditSession | None, scope: str | None) -> str:
    """What the format can hold in this scope, in one sentence."""
    if session is None:
        return "This file cannot be edited (it could not be read)."
    t = session.doc.target
    typed = "Values are typed: text, integer, float, bool, or list / map written as JSON."
    if scope is None:
        if t.file_attributes == "none":
            return f"{t.label} files have no file-level attributes; select a tensor" + (
                " to edit its attributes." if t.tensor_attributes else ".")
        if t.file_attributes == "str":
            where = "__metadata__" if t.key == "safetensors" else "file metadata"
            return f"{t.label} {where} holds strings only: every value is stored as text."
        return typed
    if not t.tensor_attributes:
        return f"{t.label} has no per-tensor attributes; select the file row for file metadata."
    reserved = f" Reserved keys: {', '.join(sorted(t.reserved))}." if t.reserved else ""
    return typed + reserved


class AttributesEditor(QWidget):
    """Scope title, a note on what the format allows, the table, Add / Remove, and the last refusal."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attributesEditor")
        self.model = AttributesModel(self)
        self.model.refused.connect(self.show_refusal)
        self.model.modelReset.connect(self._update_buttons)
        self.title = QLabel()
        self.title.setObjectName("attributesScope")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        # a long tensor name must not widen the dock (the full text is in the tooltip)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setObjectName("attributesNote")
        self.note.setStyleSheet("color: palette(placeholder-text);")
        self.table = QTableView()
        self.table.setObjectName("attributesTable")
        self.table.setModel(self.model)
        self.table.setItemDelegate(AttributeDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed
                                   | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(AttrColumn.KEY, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(AttrColumn.TYPE, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setColumnWidth(AttrColumn.KEY, 130)
        self.table.selectionModel().selectionChanged.connect(self._update_buttons)
        self.add_button = QToolButton()
        self.add_button.setText("Add")
        self.add_button.setToolTip("Add an attribute (then type its key and value)")
        self.add_button.clicked.connect(self.add_attribute)
        self.remove_button = QToolButton()
        self.remove_button.setText("Remove")
        self.remove_button.setToolTip("Remove the selected attributes (Del)")
        self.remove_button.clicked.connect(self.remove_selected)
        self.error = QLabel()
        self.error.setObjectName("attributesError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b3261e;")
        self.error.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        for widget in (self.title, self.note):
            layout.addWidget(widget)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.error)
        self.set_scope(None, None)

    def set_scope(self, session: EditSession | None, scope: str | None) -> None:
        """Show the file's attributes (``scope=None``) or those of the tensor currently named ``scope``."""
        self.error.hide()
        self.model.set_scope(session, scope)
        if session is None:
            self.title.setText("No file")
        else:
            self.title.setText("File attributes" if scope is None else f"Tensor “{scope}”")
        self.title.setToolTip(self.title.text())
        self.note.setText(scope_note(session, scope))
        self._update_buttons()

    def show_refusal(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def add_attribute(self) -> None:
        self.error.hide()
        row = self.model.add()
        if row >= 0:
            index = self.model.index(row, AttrColumn.KEY)
            self.table.setCurrentIndex(index)
            self.table.edit(index)

    def remove_selected(self) -> None:
        self.error.hide()
        self.model.remove([i.row() for i in self.table.selectionModel().selectedRows()])

    def _update_buttons(self, *args: object) -> None:
        holds = self.model.can_hold()
        self.table.setEnabled(holds)
        self.add_button.setEnabled(holds)
        self.remove_button.setEnabled(holds and self.table.selectionModel().hasSelection())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Delete) and self.table.hasFocus():
            self.remove_selected()
        else:
            super().keyPressEvent(event)
