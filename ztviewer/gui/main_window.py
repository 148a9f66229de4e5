"""The main window: one tab per open file, docks for properties, data inspector and problems."""
from __future__ import annotations

import os

from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QTabWidget,
    QWidget,
)

from ztviewer import __version__
from ztviewer.codec import Problem
from ztviewer.file_types import open_filters
from ztviewer.session.formatting import exact_bytes, human_bytes, plural
from ztviewer.session.zt_v2_facts import file_kind_text, generation_rows, is_generation_view
from ztviewer.workers.tasks import CheckFileTask, OpenedFile, OpenFileTask, VerifyDigestsTask

from .changed_on_disk import DiskWatcher
from .compare.tab import CompareTab
from .dock_layout import DockLayout
from .editing.controller import EditController
from .file_view import FileView
from .recent_files import RecentFiles
from .repair_prompt import can_repair, offer_repair
from .tab_opener import TabOpener, file_key
from .views.data_inspector import DataInspector
from .views.problems_panel import ProblemsPanel
from .views.properties_panel import PropertiesPanel
from .welcome import WelcomePage, local_paths
from .window_actions import WindowActions


class MainWindow(QMainWindow):
    """ztviewer's window. ``settings`` defaults to the application's QSettings (tests pass their own)."""

    def __init__(self, settings: QSettings | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.setWindowTitle("ztviewer")
        self.setAcceptDrops(True)
        self.settings = settings or QSettings()
        self.pool = pool or QThreadPool(self)
        self.last_error = ""
        self.dock_layout = DockLayout(self, self.settings)
        self.opener = TabOpener(self)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("fileTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.welcome = WelcomePage(open_filters())
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.tabs)
        self.setCentralWidget(self.stack)

        self.properties_panel = PropertiesPanel()
        self.inspector = DataInspector()
        self.problems_panel = ProblemsPanel()
        self.problems_panel.problem_activated.connect(self._on_problem_activated)
        self.properties_dock = self.dock_layout.add("Properties", "propertiesDock", self.properties_panel,
                                                    Qt.DockWidgetArea.RightDockWidgetArea)
        self.problems_dock = self.dock_layout.add("Problems", "problemsDock", self.problems_panel,
                                                  Qt.DockWidgetArea.BottomDockWidgetArea)
        self.inspector_dock = self.dock_layout.add("Data Inspector", "inspectorDock", self.inspector,
                                                   Qt.DockWidgetArea.BottomDockWidgetArea)
        self.dock_layout.size_by_width(self.properties_dock, self.problems_dock, self.inspector_dock)

        self.actions_ = WindowActions(self)
        menus = self.actions_.build_menus()
        self.editing = EditController(self)
        self.editing.install(menus, reload=self.actions_.reload, beside=self.properties_dock)
        self.disk_watch = DiskWatcher(self)
        self.welcome.open_button.clicked.connect(self.opener.show_open_dialog)
        self.recent = RecentFiles(self.settings, self.actions_.recent_menu, self)
        self.recent.open_requested.connect(self.opener.open_path)
        self.actions_.group.setChecked(bool(self.settings.value("view/grouped", False, type=bool)))
        self._build_status_bar()
        self.dock_layout.restore()
        self._on_tab_changed()

    # -- construction ----------------------------------------------------------------------------------------
    def docks(self) -> list[QDockWidget]:
        return [self.properties_dock, self.inspector_dock, self.problems_dock]

    def _build_status_bar(self) -> None:
        self.format_label, self.size_label, self.tensors_label, self.problems_label = (QLabel() for _ in range(4))
        for label in (self.format_label, self.tensors_label, self.size_label, self.problems_label):
            label.setContentsMargins(8, 0, 8, 0)
            self.statusBar().addPermanentWidget(label)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.dock_layout.shown()

    def save_layout(self) -> None:
        self.dock_layout.save()
        self.settings.setValue("view/grouped", self.actions_.group.isChecked())
        self.settings.sync()

    # -- views -----------------------------------------------------------------------------------------------
    def file_views(self) -> list[FileView]:
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, FileView)]

    def current_view(self) -> FileView | None:
        widget = self.tabs.currentWidget()
        return widget if isinstance(widget, FileView) else None

    def view_for(self, path: str) -> FileView | None:
        return next(iter(self.views_for(path)), None)

    def views_for(self, path: str) -> list[FileView]:
        """The tabs showing ``path``: the file itself (also when named through a link), or the set it opened as.
        A tab showing an earlier generation of the file is not the file (see :meth:`generation_view`)."""
        key = file_key(path)
        return [v for v in self.file_views() if not is_generation_view(v.tensor_file)
                and (key == file_key(v.tensor_file.path) or key in map(file_key, v.opened_as))]

    def generation_view(self, path: str, number: int) -> FileView | None:
        """The read-only tab showing generation ``number`` of ``path``, if one is open."""
        key = file_key(path)
        return next((v for v in self.file_views() if is_generation_view(v.tensor_file)
                     and file_key(v.tensor_file.path) == key
                     and v.tensor_file.generation_number == number), None)

    # -- tabs ------------------------------------------------------------------------------------------------
    def show_tabs(self) -> None:
        self.stack.setCurrentWidget(self.tabs)

    def make_view(self, opened: OpenedFile, grouped: bool | None = None) -> FileView:
        """A view of ``opened`` wired to the window's docks, status bar and editing (the opener shows it)."""
        view = FileView(opened, grouped=self.actions_.group.isChecked() if grouped is None else grouped, pool=self.pool)
        view.selection_changed.connect(lambda item, v=view: self._on_selection_changed(v))
        view.cursor_moved.connect(lambda offset, v=view: self._on_cursor_moved(v, offset))
        view.status_message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        view.properties_changed.connect(lambda v=view: self._show_properties(v))
        view.checks.verifier.ended.connect(lambda outcome: self._update_actions())
        view.checks.checker.ended.connect(lambda outcome: self._update_actions())
        view.group_button.toggled.connect(lambda grouped, v=view: self._on_view_grouped(v, grouped))
        view.problems_model.rowsInserted.connect(self.update_status)
        view.problems_model.rowsRemoved.connect(self.update_status)
        self.editing.attach(view)
        return view

    def reload_current(self) -> OpenFileTask | None:
        """File ▸ Reload: the current tab read again (after asking about its unsaved edits)."""
        view = self.current_view()
        if view is None or not self.editing.confirm([view], self.reload_current):
            return None
        return self.opener.reload(view)

    def remove_tab_widget(self, widget: QWidget) -> None:
        index = self.tabs.indexOf(widget)
        if index >= 0:
            self.tabs.removeTab(index)
        if isinstance(widget, (FileView, CompareTab)):
            widget.shutdown()
        widget.deleteLater()
        if not self.tabs.count():
            self.stack.setCurrentWidget(self.welcome)

    def close_tab(self, index: int) -> None:
        widget = self.tabs.widget(index)
        if widget is not None and self.editing.confirm([widget], lambda: self.close_tab(self.tabs.indexOf(widget))):
            self.remove_tab_widget(widget)

    def close_current(self) -> None:
        if self.tabs.count():
            self.close_tab(self.tabs.currentIndex())

    def cycle_tab(self, step: int) -> None:
        if self.tabs.count():
            self.tabs.setCurrentIndex((self.tabs.currentIndex() + step) % self.tabs.count())

    # -- commands on the current file ------------------------------------------------------------------------
    def focus_filter(self) -> None:
        if (view := self.current_view()) is not None:
            view.focus_filter()

    def show_goto_dialog(self) -> None:
        view = self.current_view()
        if view is None:
            return
        from .dialogs.goto_offset import GoToOffsetDialog

        dialog = GoToOffsetDialog(view.hex_view.size_bytes, view.hex_view.cursor_offset(), self)  # decoded bytes too
        dialog.accepted.connect(lambda: view.go_to_offset(dialog.offset))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def set_grouped(self, grouped: bool) -> None:
        self.actions_.group.setChecked(grouped)
        if (view := self.current_view()) is not None:
            view.set_grouped(grouped)

    def restore_manifest_order(self) -> None:
        if (view := self.current_view()) is not None:
            view.restore_manifest_order()

    def verify(self, selection_only: bool = False) -> VerifyDigestsTask | None:
        view = self.current_view()
        task = view.verify(selection_only) if view is not None else None
        self._update_actions()
        return task

    def check_file(self) -> CheckFileTask | None:
        """File/Tools ▸ Check File on the current tab; returns the task (or None)."""
        view = self.current_view()
        task = view.check_file() if view is not None else None
        self._update_actions()
        return task

    def repair_current(self) -> QMessageBox | None:
        """File ▸ Repair Interrupted Save…: asks, then rolls the current file back (see :mod:`.repair_prompt`)."""
        view = self.current_view()
        return offer_repair(self, view) if view is not None else None

    def cancel_verify(self) -> None:
        if (view := self.current_view()) is not None:
            view.checks.verifier.cancel()
            view.checks.checker.cancel()

    def show_error(self, title: str, message: str) -> None:
        """Report a failure as a message (never a traceback): status bar plus a non-blocking box."""
        self.last_error = f"{title}: {message}"
        self.statusBar().showMessage(self.last_error, 15000)
        box = QMessageBox(QMessageBox.Icon.Warning, "ztviewer", title, QMessageBox.StandardButton.Close, self)
        box.setInformativeText(message)
        box.setObjectName("errorMessage")
        box.finished.connect(box.deleteLater)
        box.open()

    def show_shortcuts(self) -> QDialog:
        """Help ▸ Keyboard Shortcuts: read from the actions the window and its open views have now."""
        from .dialogs.help import ShortcutsDialog

        return self._show_help(ShortcutsDialog(self))

    def show_quick_guide(self) -> QDialog:
        from .dialogs.help import QuickGuideDialog

        return self._show_help(QuickGuideDialog(self))

    def _show_help(self, dialog: QDialog) -> QDialog:
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_about(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, "About ztviewer",
                          f"<b>ztviewer {__version__}</b><br>Inspector for tensor files: zTensor (.zt), "
                          "safetensors and BLZ1 tensor trains.", QMessageBox.StandardButton.Close, self)
        box.finished.connect(box.deleteLater)
        box.open()

    # -- reacting --------------------------------------------------------------------------------------------
    def _on_tab_changed(self, *_index: int) -> None:
        view = self.current_view()
        self.dock_layout.set_file_docks_shown(not isinstance(self.tabs.currentWidget(), CompareTab))
        self.problems_panel.set_model(view.problems_model if view else None)
        self.inspector.set_source(view.shown_source if view else None)
        if view is not None:
            self.inspector.set_offset(view.hex_view.cursor_offset())
            self.actions_.group.setChecked(view.tree_model.grouped)
        self.editing.on_tab_changed(view)
        self.update_status()
        self._on_selection_changed(view)
        self._update_actions()

    def update_status(self) -> None:
        view = self.current_view()
        if view is None:
            self.setWindowTitle("ztviewer")
            for label in (self.format_label, self.size_label, self.tensors_label, self.problems_label):
                label.setText("")
            return
        tf = view.tensor_file
        self.setWindowTitle(f"{os.path.basename(tf.path)}[*] — ztviewer")
        self.setWindowModified(self.editing.is_modified(view))
        self.format_label.setText(file_kind_text(tf))
        self.size_label.setText(human_bytes(tf.size))
        self.size_label.setToolTip(exact_bytes(tf.size))
        self.tensors_label.setText(plural(len(tf.tensors), "tensor"))
        errors, warnings = view.problems_model.counts()
        counted = f"{plural(errors, 'error')}, {plural(warnings, 'warning')}"
        self.problems_label.setText(counted if errors or warnings else "no problems")

    def _update_actions(self) -> None:
        view = self.current_view()
        busy = view is not None and view.checks.tasks.busy
        self.actions_.update_enabled(view is not None, busy,
                                     view is not None and bool(generation_rows(view.tensor_file)), can_repair(view))

    def _on_selection_changed(self, view: FileView | None) -> None:
        if view is self.current_view():
            self._show_properties(view)
            self.editing.on_selection(view)

    def _show_properties(self, view: FileView | None) -> None:
        if view is self.current_view():
            self.properties_panel.show_props(view.properties() if view is not None else [])

    def _on_view_grouped(self, view: FileView, grouped: bool) -> None:
        if view is self.current_view():
            self.actions_.group.setChecked(grouped)

    def _on_cursor_moved(self, view: FileView, offset: int) -> None:
        if view is self.current_view() and self.inspector.source is not view.shown_source:
            self.inspector.set_source(view.shown_source)  # a multi-file set moved to another shard
        if view is self.current_view():
            self.inspector.set_offset(offset)

    def _on_problem_activated(self, problem: Problem) -> None:
        if (view := self.current_view()) is not None:
            view.select_problem(problem)

    # -- Qt events -------------------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            opens = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            if len(paths) == 2 and not opens:      # two files dropped together: compare them (Shift: open both)
                self.opener.compare_paths(*paths)
            else:
                self.opener.open_paths(paths)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.editing.confirm(self.file_views(), self.close):
            event.ignore()
            return
        self.save_layout()
        self.opener.cancel_all()
        for view in self.file_views():
            view.checks.shutdown()
        self.pool.waitForDone(3000)
        while self.tabs.count():
            self.close_tab(0)
        super().closeEvent(event)

