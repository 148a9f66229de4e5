"""The tensor tree's Rename (F2) / Delete (Del) actions and context menu (the tree shows pending renames and
deletions from the session: :class:`ztviewer.session.tree_marks.PendingNames`)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QTreeView

from ztviewer.codec import Tensor

if TYPE_CHECKING:
    from ztviewer.codec.edit import Command

    from ..models.edit_stack import EditSession


class EditableTree(Protocol):
    """The tensor tree of a file's view, as its Rename / Delete actions use it."""

    @property
    def tree(self) -> QTreeView: ...

    def current_tensor(self) -> Tensor | None: ...

    def selected_tensors(self) -> list[Tensor]: ...


class TreeEditing(QObject):
    """Rename / delete of the selected tensors of one file's view, through its edit session."""

    def __init__(self, view: EditableTree, session: EditSession, ask_text: Callable[[str, str, str], str | None],
                 report: Callable[[str], None]) -> None:
        super().__init__(view.tree)
        self.view, self.session, self.ask_text, self.report = view, session, ask_text, report
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

    def _push(self, commands: list[Command], macro: str) -> None:
        from ztviewer.codec.errors import EditRefused

        try:
            self.session.push_all(commands, macro)
        except EditRefused as exc:
            self.report(exc.message)

    def _context_menu(self, pos: QPoint) -> None:
        tensors = self.view.selected_tensors()
        live = [t for t in tensors if self.session.current_name(t) is not None]
        self.rename_action.setEnabled(len(live) == 1)
        self.delete_action.setEnabled(bool(live))
        menu = QMenu(self.view.tree)
        menu.addAction(self.rename_action)
        menu.addAction(self.delete_action)
        menu.popup(self.view.tree.viewport().mapToGlobal(pos))
