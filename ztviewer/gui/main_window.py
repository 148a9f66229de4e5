"""The main window: one tab per open file, docks for properties, data inspector and problems."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QTabWidget,
    QWidget,
)
from shiboken6 import Shiboken

from ztviewer import __version__
from ztviewer.codec import TensorFile
from ztviewer.session.file_layout import build_layout
from ztviewer.session.formatting import exact_bytes, human_bytes
from ztviewer.session.zt_v2_facts import (
    GenerationRow,
    file_kind_text,
    generation_rows,
    is_generation_view,
    open_generation_row,
)
from ztviewer.workers.tasks import OpenedFile, OpenFileTask

from .changed_on_disk import DiskWatcher
from .compare.tab import CompareTab
from .editing.controller import EditController
from .file_view import FileView
from .recent_files import RecentFiles
from .views.data_inspector import DataInspector
from .views.problems_panel import ProblemsPanel
from .views.properties_panel import PropertiesPanel
from .welcome import WelcomePage, local_paths
from .window_actions import WindowActions

if TYPE_CHECKING:
    from .compare.compare_view import CompareView

OPEN_FILTERS = ("Tensor files (*.zt *.safetensors *.blz)", "zTensor (*.zt)", "safetensors (*.safetensors)",
                "BLZ1 tensor trains (*.blz)", "All files (*)")


DEFAULT_SIZE = (1680, 1000)


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
        self._opening: set[OpenFileTask] = set()
        self._docks_aside: list[QDockWidget] | None = None

        self.tabs = QTabWidget()
        self.tabs.setObjectName("fileTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.tabCloseRequested.connect(self.close_tab)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.welcome = WelcomePage(OPEN_FILTERS)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.tabs)
        self.setCentralWidget(self.stack)

        self.properties_panel = PropertiesPanel()
        self.inspector = DataInspector()
        self.problems_panel = ProblemsPanel()
        self.problems_panel.problem_activated.connect(self._on_problem_activated)
        self.properties_dock = self._dock("Properties", "propertiesDock", self.properties_panel,
                                          Qt.DockWidgetArea.RightDockWidgetArea)
        self.problems_dock = self._dock("Problems", "problemsDock", self.problems_panel,
                                        Qt.DockWidgetArea.BottomDockWidgetArea)
        self.inspector_dock = self._dock("Data Inspector", "inspectorDock", self.inspector,
                                         Qt.DockWidgetArea.BottomDockWidgetArea)

        self.actions_ = WindowActions(self)
        self.actions_.toolbar()
        self.actions_.build_menus()
        self.editing = EditController(self)
        self.editing.install()
        self.disk_watch = DiskWatcher(self)
        self.welcome.open_button.clicked.connect(self.show_open_dialog)
        self.recent = RecentFiles(self.settings, self.actions_.recent_menu, self)
        self.recent.open_requested.connect(self.open_path)
        self.actions_.group.setChecked(bool(self.settings.value("view/grouped", False, type=bool)))
        self._build_status_bar()
        self._restore_layout()
        self._on_tab_changed()

    # -- construction ----------------------------------------------------------------------------------------
    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def docks(self) -> list[QDockWidget]:
        return [self.properties_dock, self.inspector_dock, self.problems_dock]

    def _build_status_bar(self) -> None:
        self.format_label, self.size_label, self.tensors_label, self.problems_label = (QLabel() for _ in range(4))
        for label in (self.format_label, self.tensors_label, self.size_label, self.problems_label):
            label.setContentsMargins(8, 0, 8, 0)
            self.statusBar().addPermanentWidget(label)

    def _restore_layout(self) -> None:
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        width, height = DEFAULT_SIZE
        if screen is not None and screen.width() > 100:
            width, height = min(width, screen.width() - 40), min(height, screen.height() - 40)
        self.resize(width, height)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        self._default_dock_sizes = state is None or not self.restoreState(state)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._default_dock_sizes:     # docks can only be sized once the window has its real size
            self._default_dock_sizes = False
            self.apply_default_dock_sizes()

    def apply_default_dock_sizes(self) -> None:
        """Dock sizes for the window's current width (first show without a saved layout)."""
        # a narrow window keeps more for the tree and the hex view (all 16 bytes and their characters)
        side = 320 if self.width() >= 1500 else 260 if self.width() >= 1400 else 228
        self.resizeDocks([self.properties_dock], [side], Qt.Orientation.Horizontal)
        bottom = max(400, self.width() - side - 20)
        inspector = min(480, bottom // 2)
        self.resizeDocks([self.problems_dock, self.inspector_dock], [bottom - inspector, inspector],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.problems_dock], [200], Qt.Orientation.Vertical)

    def _set_file_docks_shown(self, shown: bool) -> None:
        """A Compare tab has no use for the file docks: they step aside while it is current, and come back."""
        if not shown and self._docks_aside is None:
            self._docks_aside = [d for d in self.findChildren(QDockWidget) if d.isVisible()]
            for dock in self._docks_aside:
                dock.hide()
        elif shown and self._docks_aside is not None:
            for dock in self._docks_aside:
                dock.show()
            self._docks_aside = None

    def save_layout(self) -> None:
        self._set_file_docks_shown(True)
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
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
        key = _file_key(path)
        return [v for v in self.file_views() if not is_generation_view(v.tensor_file)
                and (key == _file_key(v.tensor_file.path) or key in map(_file_key, v.opened_as))]

    def generation_view(self, path: str, number: int) -> FileView | None:
        """The read-only tab showing generation ``number`` of ``path``, if one is open."""
        key = _file_key(path)
        return next((v for v in self.file_views() if is_generation_view(v.tensor_file)
                     and _file_key(v.tensor_file.path) == key
                     and v.tensor_file.generation_number == number), None)

    # -- opening ---------------------------------------------------------------------------------------------
    def show_open_dialog(self) -> None:
        start = os.path.dirname(self.recent.paths()[0]) if self.recent.paths() else ""
        dialog = QFileDialog(self, "Open Tensor Files", start)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilters(list(OPEN_FILTERS))
        dialog.filesSelected.connect(self.open_paths)
        dialog.open()

    def open_paths(self, paths: Iterable[str]) -> list[OpenFileTask]:
        return [task for task in (self.open_path(p) for p in paths) if task is not None]

    def open_path(self, path: str) -> OpenFileTask | None:
        """Open a file in a new tab (parsed on a worker); an already open file just comes to the front."""
        path = os.path.abspath(os.fspath(path))
        existing = self.view_for(path) or self._placeholder_for(path)   # open, or still being parsed
        if existing is not None:
            self.tabs.setCurrentWidget(existing)
            return None
        placeholder = QLabel(f"Opening {path}…")
        placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        placeholder.setProperty("openingPath", _file_key(path))
        self.tabs.addTab(placeholder, os.path.basename(path))
        self.tabs.setCurrentWidget(placeholder)
        self.stack.setCurrentWidget(self.tabs)
        return self.start_open(path, placeholder, lambda opened: self._show_opened(placeholder, opened, path))

    def _placeholder_for(self, path: str) -> QWidget | None:
        """The tab of ``path`` while it is still being parsed."""
        key = _file_key(path)
        return next((w for w in (self.tabs.widget(i) for i in range(self.tabs.count()))
                     if isinstance(w, QLabel) and w.property("openingPath") == key), None)

    # -- comparing -------------------------------------------------------------------------------------------
    def show_compare_dialog(self) -> None:
        """File ▸ Compare…: A defaults to the current file, B to the next open one."""
        from .compare.dialog import CompareDialog

        paths = [v.tensor_file.path for v in self.file_views()]
        current = self.current_view()
        a = current.tensor_file.path if current is not None else (paths[0] if paths else "")
        b = next((p for p in paths if p != a), "")
        dialog = CompareDialog(list(OPEN_FILTERS), a, b, self)
        dialog.accepted.connect(lambda: self.compare_paths(*dialog.paths()))
        dialog.open()

    def compare_views(self) -> list[CompareTab]:
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, CompareTab)]

    def compare_paths(self, path_a: str, path_b: str) -> CompareView:
        """A new Compare tab for A (the reference) and B; the comparison runs on a worker."""
        # the Compare tab's plots load on the first comparison, not at start-up
        from .compare.compare_view import CompareView

        view = CompareView(path_a, path_b, pool=self.pool)
        view.status_message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        view.ended.connect(lambda state, v=view: self._compare_ended(v, state))
        title = f"{os.path.basename(path_a.rstrip(os.sep))} ⇄ {os.path.basename(path_b.rstrip(os.sep))}"
        index = self.tabs.addTab(view, title)
        self.tabs.setTabToolTip(index, f"A: {view.session.path_a}\nB: {view.session.path_b}")
        self.tabs.setCurrentWidget(view)
        self.stack.setCurrentWidget(self.tabs)
        view.start()
        return view

    def _compare_ended(self, view: CompareView, state: str) -> None:
        if state == "failed":
            self.show_error("Could not compare", view.session.message)
        elif state == "done":
            self.statusBar().showMessage(f"Compared {view.session.path_a} with {view.session.path_b}: "
                                         f"{len(view.session.pairs)} entries", 8000)

    def show_generations(self):
        """View ▸ Generations…: list the current zTensor v2 file's generations; one can be opened read-only."""
        view = self.current_view()
        if view is None or not generation_rows(view.tensor_file):
            return None
        from .dialogs.generations import GenerationsDialog

        dialog = GenerationsDialog(view.tensor_file, self)
        path = view.tensor_file.path
        dialog.open_requested.connect(lambda row: self.open_generation(path, row))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def open_generation(self, path: str, row: GenerationRow) -> OpenFileTask | None:
        """Open ``path`` as it was in an earlier generation, in a read-only tab (an open one comes to the front)."""
        existing = self.generation_view(path, row.number)
        if existing is not None:
            self.tabs.setCurrentWidget(existing)
            return None
        title = f"{os.path.basename(path)} @ generation {row.number}"
        placeholder = QLabel(f"Opening generation {row.number} of {path}…")
        placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.tabs.addTab(placeholder, title)
        self.tabs.setCurrentWidget(placeholder)

        def shown(opened: OpenedFile) -> None:
            view = self.show_file(opened, at=self.tabs.indexOf(placeholder))
            index = self.tabs.indexOf(view)
            self.tabs.setTabText(index, title)
            self.tabs.setTabToolTip(index, f"{path}\nas it was in generation {row.number} (read-only)")
            self.remove_tab_widget(placeholder)
            self.statusBar().showMessage(f"Opened generation {row.number} of {path} read-only", 8000)

        return self.start_open(path, placeholder, shown, reader=lambda p: open_generation_row(p, row))

    def start_open(self, path: str, slot: QWidget, done: Callable[[OpenedFile], None],
                    reader: Callable[[str], TensorFile] | None = None) -> OpenFileTask:
        task = OpenFileTask(path, analyse=build_layout, reader=reader)
        self._opening.add(task)

        def finished(opened: OpenedFile) -> None:
            self._opening.discard(task)
            if not Shiboken.isValid(slot) or self.tabs.indexOf(slot) < 0:   # the tab was closed meanwhile
                opened.tensor_file.close()
                return
            done(opened)

        def failed(message: str) -> None:
            self._opening.discard(task)
            if isinstance(slot, QLabel) and Shiboken.isValid(slot):
                self.remove_tab_widget(slot)
            self.show_error(f"Could not open {path}", message)

        task.signals.finished.connect(finished)
        task.signals.failed.connect(failed)
        task.signals.cancelled.connect(lambda: self._opening.discard(task))
        self.statusBar().showMessage(f"Opening {path}…")
        task.start(self.pool)
        return task

    def _make_view(self, opened: OpenedFile, grouped: bool | None = None) -> FileView:
        view = FileView(opened, grouped=self.actions_.group.isChecked() if grouped is None else grouped, pool=self.pool)
        view.selection_changed.connect(lambda item, v=view: self._on_selection_changed(v))
        view.cursor_moved.connect(lambda offset, v=view: self._on_cursor_moved(v, offset))
        view.status_message.connect(lambda text: self.statusBar().showMessage(text, 10000))
        view.verifier.ended.connect(lambda outcome: self._update_actions())
        view.checker.ended.connect(lambda outcome: self._update_actions())
        view.group_button.toggled.connect(lambda grouped, v=view: self._on_view_grouped(v, grouped))
        view.problems_model.rowsInserted.connect(self.update_status)
        view.problems_model.rowsRemoved.connect(self.update_status)
        self.editing.attach(view)
        return view

    def _show_opened(self, placeholder: QWidget, opened: OpenedFile, requested: str) -> None:
        # the tab in front stays in front: opening several files shows the one opened last, whichever
        # finished parsing last
        focus = self.tabs.currentWidget() is placeholder
        view = self.show_file(opened, at=self.tabs.indexOf(placeholder), focus=focus)
        view.opened_as.add(requested)  # a folder or shard may open as its whole set, named by its index
        self.remove_tab_widget(placeholder)
        tf = opened.tensor_file
        errors, _warnings = view.problems_model.counts()
        note = f", {errors} error{'s' if errors != 1 else ''}" if errors else ""
        self.statusBar().showMessage(f"Opened {tf.path} in {opened.seconds * 1000:.0f} ms{note}", 8000)

    def show_file(self, opened: OpenedFile, at: int = -1, grouped: bool | None = None,
                  focus: bool = True) -> FileView:
        """Show an already parsed file in a new tab (``open_path`` ends here; embedders may call it too)."""
        view = self._make_view(opened, grouped)
        index = self.tabs.insertTab(at, view, os.path.basename(opened.tensor_file.path))
        self.tabs.setTabToolTip(index, opened.tensor_file.path)
        if focus:
            self.tabs.setCurrentWidget(view)
        self.stack.setCurrentWidget(self.tabs)
        if os.path.isfile(opened.tensor_file.path) and not is_generation_view(opened.tensor_file):
            self.recent.add(opened.tensor_file.path)
        return view

    def reload_current(self) -> OpenFileTask | None:
        view = self.current_view()
        if view is None or not self.editing.confirm([view], self.reload_current):
            return None
        return self.start_open(view.tensor_file.path, view, lambda opened: self.replace_view(view, opened),
                               self.reader_for(view))

    def reader_for(self, view: FileView) -> Callable[[str], TensorFile] | None:
        """How to read ``view``'s file again: the same earlier generation for a generation tab, else ``None``
        (the file as it is now)."""
        if not is_generation_view(view.tensor_file):
            return None
        row = generation_rows(view.tensor_file)[0]

        def reader(path: str) -> TensorFile:
            return open_generation_row(path, row)
        return reader

    def replace_view(self, old: FileView, opened: OpenedFile) -> None:
        at = self.tabs.indexOf(old)
        title, tip = self.tabs.tabText(at), self.tabs.tabToolTip(at)
        view = self.show_file(opened, at=at, grouped=old.tree_model.grouped)
        if is_generation_view(opened.tensor_file):
            self.tabs.setTabText(self.tabs.indexOf(view), title)
            self.tabs.setTabToolTip(self.tabs.indexOf(view), tip)
        view.filter_edit.setText(old.filter_edit.text())
        self.remove_tab_widget(old)
        self.statusBar().showMessage(f"Reloaded {opened.tensor_file.path}", 5000)

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

    def verify(self, selection_only: bool = False):
        view = self.current_view()
        task = view.verify(selection_only) if view is not None else None
        self._update_actions()
        return task

    def check_file(self):
        """File/Tools ▸ Check File on the current tab; returns the task (or None)."""
        view = self.current_view()
        task = view.check_file() if view is not None else None
        self._update_actions()
        return task

    def cancel_verify(self) -> None:
        if (view := self.current_view()) is not None:
            view.verifier.cancel()
            view.checker.cancel()

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
    def _on_tab_changed(self, *args) -> None:
        view = self.current_view()
        self._set_file_docks_shown(not isinstance(self.tabs.currentWidget(), CompareTab))
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
        self.tensors_label.setText(f"{len(tf.tensors):,} tensor{'s' if len(tf.tensors) != 1 else ''}")
        errors, warnings = view.problems_model.counts()
        counted = f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
        self.problems_label.setText(counted if errors or warnings else "no problems")

    def _update_actions(self) -> None:
        view = self.current_view()
        busy = view is not None and (view.verifier.running or view.checker.running)
        self.actions_.update_enabled(view is not None, busy,
                                     view is not None and bool(generation_rows(view.tensor_file)))

    def _on_selection_changed(self, view: FileView | None) -> None:
        if view is self.current_view():
            self.properties_panel.show_props(view.properties() if view is not None else [])
            self.editing.on_selection(view)

    def _on_view_grouped(self, view: FileView, grouped: bool) -> None:
        if view is self.current_view():
            self.actions_.group.setChecked(grouped)

    def _on_cursor_moved(self, view: FileView, offset: int) -> None:
        if view is self.current_view() and self.inspector.source is not view.shown_source:
            self.inspector.set_source(view.shown_source)  # a multi-file set moved to another shard
        if view is self.current_view():
            self.inspector.set_offset(offset)

    def _on_problem_activated(self, problem) -> None:
        if (view := self.current_view()) is not None:
            view.select_problem(problem)

    # -- Qt events -------------------------------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragMoveEvent(self, event) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = local_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            opens = event.modifiers() & Qt.KeyboardModifier.ShiftModifier
            if len(paths) == 2 and not opens:      # two files dropped together: compare them (Shift: open both)
                self.compare_paths(*paths)
            else:
                self.open_paths(paths)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.editing.confirm(self.file_views(), self.close):
            event.ignore()
            return
        self.save_layout()
        for task in list(self._opening):
            task.cancel()
        for compare in self.compare_views():
            compare.cancel()
        for view in self.file_views():
            view.verifier.shutdown()
            view.checker.shutdown()
        self.pool.waitForDone(3000)
        while self.tabs.count():
            self.close_tab(0)
        super().closeEvent(event)


def _file_key(path: str) -> str:
    """One spelling per file: links resolved, case folded where the file system ignores case."""
    return os.path.normcase(os.path.realpath(path))
