"""Renamed and deleted tensors shown in the tensor tree (an overlay on the read-only tree model), and the
tree's Rename (F2) / Delete (Del) actions and context menu."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QBrush, QColor, QFont
from PySide6.QtWidgets import QMenu

from ztviewer.codec import Tensor

from ..models.tree_roles import Column

if TYPE_CHECKING:
    from ..file_view import FileView
    from .session import EditSession

_DELETED = QColor(150, 150, 150)


class TreeEditOverlay(QObject):
    """Answers the tree model's name-column data for tensors the edits renamed or deleted."""

    roles = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ForegroundRole,
             Qt.ItemDataRole.ToolTipRole)

    def __init__(self, model, session: EditSession) -> None:
        super().__init__(model)
        self.model, self.session = model, session
        self.state: dict[int, tuple[Tensor, str | None]] = {}     # id(original) -> (tensor, new name or None)
        session.changed.connect(self.refresh)

    def refresh(self) -> None:
        names = {id(t.original): t.name for t in self.session.doc.tensors}
        state = {}
        for tensor in self.model.tensors:
            new = names.get(id(tensor))
            if new != tensor.name:
                state[id(tensor)] = (tensor, new)
        changed = [t for key, (t, _) in (self.state | state).items() if self.state.get(key) != state.get(key)]
        renamed_before = self.renamed()
        self.state = state
        if self.renamed() != renamed_before:       # before the repaint, so a filter re-matches first
            self.model.names_changed.emit()
        for tensor in changed:
            first = self.model.index_of(tensor)
            if first.isValid():
                last = first.siblingAtColumn(len(Column) - 1)
                self.model.dataChanged.emit(first, last, list(self.roles))

    def renamed(self) -> dict[int, str]:
        """id(original tensor) -> pending new name, of every tensor renamed by unsaved edits."""
        return {key: new for key, (_, new) in self.state.items() if new is not None}

    def data(self, index, role: int) -> Any:
        if index.column() != Column.NAME or not self.state:
            return None
        tensor = self.model.tensor_of(index)
        is_tensor_row = tensor is not None and isinstance(self.model.item(index), Tensor)
        entry = self.state.get(id(tensor)) if is_tensor_row else None
        if entry is None:
            return None
        new = entry[1]
        if role == Qt.ItemDataRole.DisplayRole:
            return new if new is not None else tensor.name
        if role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setItalic(new is not None)
            font.setStrikeOut(new is None)
            return font
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(_DELETED) if new is None else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"deleted: {tensor.name} will not be saved (Ctrl+Z to undo)" if new is None
                    else f"renamed from {tensor.name} (saved on Ctrl+S)")
        return None


class TreeEditing(QObject):
    """Rename / delete of the selected tensors of one FileView, through its edit session."""

    def __init__(self, view: FileView, session: EditSession, ask_text: Callable[[str, str, str], str | None],
                 report: Callable[[str], None]) -> None:
        super().__init__(view)
        self.view, self.session, self.ask_text, self.report = view, session, ask_text, report
        self.overlay = TreeEditOverlay(view.tree_model, session)
        view.tree_model.set_edit_overlay(self.overlay)
        self.rename_action = QAction("&Rename Tensor…", view.tree)
        self.rename_action.setShortcut("F2")
        self.rename_action.triggered.connect(self.rename_current)
        self.delete_action = QAction("&Delete Tensor", view.tree)
        self.delete_action.setShortcut("Del")
        self.delete_action.triggered.connect(self.delete_selected)
        for action in (self.rename_action, self.delete_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            view.tree.addAction(action)
        view.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.tree.customContextMenuRequested.connect(self._context_menu)

    def rename_current(self) -> None:
        tensor = self.view.current_tensor()
        name = self.session.current_name(tensor) if tensor is not None else None
        if name is None:
            return
        new = self.ask_text("Rename Tensor", f"New name for {name}:", name)
        if new is None or new == name:
            return
        from ztviewer.codec.edit import RenameTensor

        self._push([RenameTensor(name, new)], f"rename {name}")

    def delete_selected(self) -> None:
        names = [n for n in (self.session.current_name(t) for t in self.view.selected_tensors()) if n is not None]
        if names:
            from ztviewer.codec.edit import DeleteTensor

            self._push([DeleteTensor(n) for n in names], f"delete {len(names)} tensors")

    def _push(self, commands, macro: str) -> None:
        from ztviewer.codec.errors import EditRefused

        try:
            self.session.push_all(commands, macro)
        except EditRefused as exc:
            self.report(exc.message)

    def _context_menu(self, pos) -> None:
        tensors = self.view.selected_tensors()
        live = [t for t in tensors if self.session.current_name(t) is not None]
        self.rename_action.setEnabled(len(live) == 1)
        self.delete_action.setEnabled(bool(live))
        menu = QMenu(self.view.tree)
        menu.addAction(self.rename_action)
        menu.addAction(self.delete_action)
        menu.popup(self.view.tree.viewport().mapToGlobal(pos))
