"""Editing in the main window: undo group and history, the attributes dock, edit/save actions, and the
unsaved-changes prompt. The window calls :meth:`attach` for each new tab and the ``on_*`` hooks."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QUndoGroup
from PySide6.QtWidgets import (
    QDockWidget,
    QInputDialog,
    QLineEdit,
    QMessageBox,
    QStyle,
    QUndoView,
    QWidget,
)

from ztviewer.codec import Tensor

from ..file_view import FileView
from ..models.edit_stack import EditSession
from .host import EditingHost

if TYPE_CHECKING:
    from ..dialogs.save_as import SaveAsDialog
    from ..window_actions import WindowMenus
    from .attributes_editor import AttributesEditor
    from .saving import SaveFlow

SAVE, DISCARD, CANCEL = "save", "discard", "cancel"
Shortcut = str | QKeySequence.StandardKey


class EditController(QObject):
    """Undo / redo across the tabs, the Attributes and History docks, Save / Save As / Rename / Delete, and the
    unsaved-edits questions; built by the window (given as :class:`~.host.EditingHost`)."""

    def __init__(self, window: EditingHost) -> None:
        parent = window.window()
        super().__init__(parent)
        self.window = window
        self.group = QUndoGroup(self)
        self.undo_action = self.group.createUndoAction(parent, "&Undo")
        self.undo_action.setShortcuts(QKeySequence.StandardKey.Undo)
        self.redo_action = self.group.createRedoAction(parent, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z")] + [
            k for k in QKeySequence.keyBindings(QKeySequence.StandardKey.Redo) if k != QKeySequence("Ctrl+Shift+Z")])
        self._saver: SaveFlow | None = None
        self.save_action = self._action("&Save", self.save_current, QKeySequence.StandardKey.Save,
                                        "Write the edits to the file (same format), safely")
        self.save_action.setIcon(parent.style().standardIcon(QStyle.StandardPixmap.SP_DialogSaveButton))
        self.save_as_action = self._action("Save &As…", self.save_as, "Ctrl+Shift+S",
                                           "Save to another file, format, encoding or digest")
        self.rename_action = self._action("&Rename Tensor…", lambda: self._tree("rename_current"), None,
                                          "Rename the current tensor (F2 in the tree)")
        self.delete_action = self._action("&Delete Tensor", lambda: self._tree("delete_selected"), None,
                                          "Delete the selected tensors from the saved file (Del in the tree)")
        self._editor: AttributesEditor | None = None
        self.history = QUndoView(self.group)
        self.history.setObjectName("undoHistory")
        self.history.setEmptyLabel("<opened file>")
        self.attributes_dock = self._dock("Attributes", "attributesDock", None)
        self.attributes_dock.visibilityChanged.connect(self._on_attributes_shown)
        self.history_dock = self._dock("History", "historyDock", self.history)

    @property
    def editor(self) -> AttributesEditor:
        """The attributes table, built when its dock is first shown: showing attributes makes the current
        file's edit document, which opening a file alone should not cost."""
        return self._editor if self._editor is not None else self._build_editor()

    def _build_editor(self) -> AttributesEditor:
        from .attributes_editor import AttributesEditor

        editor = self._editor = AttributesEditor()
        self.attributes_dock.setWidget(editor)
        self.on_selection(self.window.current_view())
        self.update_actions()
        return editor

    @property
    def saver(self) -> SaveFlow:
        if self._saver is None:
            from .saving import SaveFlow

            self._saver = SaveFlow(self)
        return self._saver

    def _on_attributes_shown(self, visible: bool) -> None:
        if visible and self._editor is None:
            self._build_editor()

    def _action(self, text: str, slot: Callable[[], object], shortcut: Shortcut | None, tip: str) -> QAction:
        action = QAction(text, self.window.window())
        if shortcut is not None:
            action.setShortcuts(QKeySequence.keyBindings(shortcut) if isinstance(shortcut, QKeySequence.StandardKey)
                                else [QKeySequence(shortcut)])
        action.setStatusTip(tip)
        action.setToolTip(tip)
        action.triggered.connect(slot)
        return action

    def _dock(self, title: str, name: str, widget: QWidget | None) -> QDockWidget:
        dock = QDockWidget(title, self.window.window())
        dock.setObjectName(name)
        if widget is not None:
            dock.setWidget(widget)
        self.window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        return dock

    def install(self, menus: WindowMenus, reload: QAction, beside: QDockWidget) -> None:
        """Into the window's menus and tool bar (Save before ``reload``), its docks tabbed with ``beside``."""
        self.window.tabifyDockWidget(beside, self.attributes_dock)
        self.window.tabifyDockWidget(self.attributes_dock, self.history_dock)
        beside.raise_()
        menus.file.insertAction(reload, self.save_action)
        menus.file.insertAction(reload, self.save_as_action)
        menus.file.insertSeparator(reload)
        first = menus.edit.actions()[0]        # Find Tensor…
        menus.edit.insertActions(first, [self.undo_action, self.redo_action])
        menus.edit.insertSeparator(first)
        menus.edit.addSeparator()
        menus.edit.addActions([self.rename_action, self.delete_action])
        menus.view.insertActions(menus.toolbar.toggleViewAction(),
                                 [self.attributes_dock.toggleViewAction(), self.history_dock.toggleViewAction()])
        menus.toolbar.insertAction(reload, self.save_action)
        self.update_actions()

    # -- tabs ------------------------------------------------------------------------------------------------
    @staticmethod
    def session_of(view: QWidget | None) -> EditSession | None:
        """The edits of a tab (a tab still opening holds a placeholder, a Compare tab has none)."""
        return view.edit_session if isinstance(view, FileView) else None

    def attach(self, view: FileView) -> None:
        session = view.enable_editing(lambda *args: self.ask_text(*args),
                                      lambda text: self.window.show_error("Cannot edit", text))
        if session is None:
            return
        self.group.addStack(session.stack)
        session.changed.connect(lambda v=view: self._on_changed(v))

    def on_tab_changed(self, view: FileView | None) -> None:
        session = self.session_of(view)
        stack = session.stack if session is not None else None
        self.group.setActiveStack(stack)  # type: ignore[arg-type]  # Qt takes None: no active stack
        self.on_selection(view)
        self.update_actions()

    def on_selection(self, view: FileView | None) -> None:
        if view is not self.window.current_view() or self._editor is None:
            return
        session = self.session_of(view)
        scope = None
        if session is not None and view is not None:
            tensor = view.session.selection.tensor
            scope = session.current_name(tensor) if isinstance(tensor, Tensor) else None
        self.editor.set_scope(session, scope)

    def _on_changed(self, view: FileView) -> None:
        index = self.window.tabs.indexOf(view)
        if index >= 0:
            name = os.path.basename(view.tensor_file.path)
            self.window.tabs.setTabText(index, name + (" *" if self.is_modified(view) else ""))
        if view is self.window.current_view():
            self.window.update_status()
            self.on_selection(view)
        self.update_actions()

    def is_modified(self, view: QWidget | None) -> bool:
        session = self.session_of(view)
        return session is not None and session.modified

    def update_actions(self) -> None:
        session = self.session_of(self.window.current_view())
        idle = session is not None and not session.saving
        # Only edits make Save useful (and asking ``writable`` of an untouched file would load every writer).
        self.save_action.setEnabled(session is not None and idle and session.modified and session.writable)
        self.save_as_action.setEnabled(idle)
        self.rename_action.setEnabled(idle)
        self.delete_action.setEnabled(idle)
        if self._editor is not None:
            self._editor.setEnabled(session is None or not session.saving)

    def _tree(self, method: str) -> None:
        view = self.window.current_view()
        editing = view.tree_editing if view is not None else None
        if editing is not None:
            getattr(editing, method)()

    # -- questions (tests replace these) ---------------------------------------------------------------------
    def ask_unsaved(self, view: FileView) -> str:
        """Save / Discard / Cancel for a tab with unsaved edits."""
        box = QMessageBox(QMessageBox.Icon.Warning, "ztviewer",
                          f"{os.path.basename(view.tensor_file.path)} has unsaved edits.",
                          QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self.window.window())
        box.setObjectName("unsavedChanges")
        box.setInformativeText("Save them before closing?")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answer = box.exec()
        return {QMessageBox.StandardButton.Save: SAVE, QMessageBox.StandardButton.Discard: DISCARD}.get(
            QMessageBox.StandardButton(answer), CANCEL)

    def ask_replace_unsaved(self, view: FileView) -> bool:
        """Whether a Save As may replace the file of ``view``, another tab with unsaved edits (they are lost)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "ztviewer",
                          f"{os.path.basename(view.tensor_file.path)} is open in another tab with unsaved edits.",
                          QMessageBox.StandardButton.Cancel, self.window.window())
        box.setObjectName("replaceUnsaved")
        box.setInformativeText("Saving over it replaces the file and discards those edits.")
        replace = box.addButton("Replace", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is replace

    def ask_text(self, title: str, label: str, text: str) -> str | None:
        value, ok = QInputDialog.getText(self.window.window(), title, label, QLineEdit.EchoMode.Normal, text)
        return value.strip() if ok and value.strip() else None

    def confirm(self, views: Sequence[QWidget], retry: Callable[[], object]) -> bool:
        """True when ``views`` may be closed/reloaded now. Asks about unsaved edits; "save" saves first and
        calls ``retry`` once the save has finished (returning False now)."""
        for view in (v for v in views if isinstance(v, FileView)):     # only a file's tab has edits
            session = view.edit_session
            if session is None or not session.modified:
                continue
            choice = self.ask_unsaved(view)
            if choice == CANCEL:
                return False
            if choice == DISCARD:
                session.stack.setClean()
                continue
            if session.writable:
                self.saver.save(view, session.doc, view.tensor_file.path, reopen=False, then=retry)
            else:
                self.save_as(view)
            return False
        return True

    # -- saving ----------------------------------------------------------------------------------------------
    def save_current(self) -> None:
        view = self.window.current_view()
        session = self.session_of(view)
        if view is None or session is None or session.saving:
            return
        if not session.writable:
            self.save_as(view)
            return
        self.saver.save(view, session.doc, view.tensor_file.path)

    def save_as(self, view: FileView | None = None) -> SaveAsDialog | None:
        """Open the Save As dialog for ``view`` (default: the current tab); returns the dialog."""
        return self.saver.ask_save_as(view or self.window.current_view())
