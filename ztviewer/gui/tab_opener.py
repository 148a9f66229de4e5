"""Opening files into the window's tabs: parsed on a worker behind a placeholder tab, read again (Reload, a change
on disk, a save), an earlier zTensor v2 generation opened read-only, two files compared."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QFileDialog, QLabel, QTabWidget, QWidget
from shiboken6 import Shiboken

from ztviewer.codec import TensorFile
from ztviewer.file_types import open_filters
from ztviewer.session.formatting import plural
from ztviewer.session.prepared_file import prepare_file
from ztviewer.session.zt_v2_facts import GenerationRow, generation_rows, is_generation_view, open_generation_row
from ztviewer.workers.tasks import OpenedFile, OpenFileTask

from .compare.tab import CompareTab
from .file_view import FileView
from .window_host import WindowHost

if TYPE_CHECKING:
    from .compare.compare_view import CompareView
    from .dialogs.generations import GenerationsDialog
    from .recent_files import RecentFiles


class OpenerHost(WindowHost, Protocol):
    """The window as the opener uses it: which tab shows a file, a new view wired to the window's panels."""

    @property
    def recent(self) -> RecentFiles: ...

    def view_for(self, path: str) -> FileView | None: ...

    def generation_view(self, path: str, number: int) -> FileView | None: ...

    def make_view(self, opened: OpenedFile, grouped: bool | None = None) -> FileView: ...

    def show_tabs(self) -> None:
        """The tabs in front (not the welcome page)."""
        ...


class TabOpener(QObject):
    """Every way a tab gets its file. The parse runs on the window's pool; a tab closed meanwhile drops it."""

    def __init__(self, window: OpenerHost) -> None:
        super().__init__(window.window())
        self.window = window
        self.opening: set[OpenFileTask] = set()

    @property
    def tabs(self) -> QTabWidget:
        return self.window.tabs

    # -- opening ---------------------------------------------------------------------------------------------
    def show_open_dialog(self) -> None:
        paths = self.window.recent.paths()
        dialog = QFileDialog(self.window.window(), "Open Tensor Files", os.path.dirname(paths[0]) if paths else "")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilters(list(open_filters()))
        dialog.filesSelected.connect(self.open_paths)
        dialog.open()

    def open_paths(self, paths: Iterable[str]) -> list[OpenFileTask]:
        return [task for task in (self.open_path(p) for p in paths) if task is not None]

    def open_path(self, path: str) -> OpenFileTask | None:
        """Open a file in a new tab (parsed on a worker); an already open file just comes to the front."""
        path = os.path.abspath(os.fspath(path))
        existing = self.window.view_for(path) or self._placeholder_for(path)   # open, or still being parsed
        if existing is not None:
            self.tabs.setCurrentWidget(existing)
            return None
        placeholder = self._placeholder(f"Opening {path}…", os.path.basename(path))
        placeholder.setProperty("openingPath", file_key(path))
        return self.start_open(path, placeholder, lambda opened: self._show_opened(placeholder, opened, path))

    def _placeholder(self, text: str, title: str) -> QLabel:
        """The tab a file is parsed behind, in front."""
        placeholder = QLabel(text)
        placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.tabs.addTab(placeholder, title)
        self.tabs.setCurrentWidget(placeholder)
        self.window.show_tabs()
        return placeholder

    def _placeholder_for(self, path: str) -> QWidget | None:
        """The tab of ``path`` while it is still being parsed."""
        key = file_key(path)
        return next((w for w in (self.tabs.widget(i) for i in range(self.tabs.count()))
                     if isinstance(w, QLabel) and w.property("openingPath") == key), None)

    def start_open(self, path: str, slot: QWidget, done: Callable[[OpenedFile], None],
                   reader: Callable[[str], TensorFile] | None = None) -> OpenFileTask:
        """Parse ``path`` (with ``reader``, default the file as it is now) for the tab of ``slot``; ``done`` runs
        unless that tab was closed meanwhile."""
        task = OpenFileTask(path, analyse=prepare_file, reader=reader)
        self.opening.add(task)

        def finished(opened: OpenedFile) -> None:
            self.opening.discard(task)
            if not Shiboken.isValid(slot) or self.tabs.indexOf(slot) < 0:   # the tab was closed meanwhile
                opened.tensor_file.close()
                return
            done(opened)

        def failed(message: str) -> None:
            self.opening.discard(task)
            if isinstance(slot, QLabel) and Shiboken.isValid(slot):
                self.window.remove_tab_widget(slot)
            self.window.show_error(f"Could not open {path}", message)

        task.signals.finished.connect(finished)
        task.signals.failed.connect(failed)
        task.signals.cancelled.connect(lambda: self.opening.discard(task))
        self.window.statusBar().showMessage(f"Opening {path}…")
        task.start(self.window.pool)
        return task

    def _show_opened(self, placeholder: QWidget, opened: OpenedFile, requested: str) -> None:
        # the tab in front stays in front: opening several files shows the one opened last, whichever
        # finished parsing last
        focus = self.tabs.currentWidget() is placeholder
        view = self.show_file(opened, at=self.tabs.indexOf(placeholder), focus=focus)
        view.opened_as.add(requested)  # a folder or shard may open as its whole set, named by its index
        self.window.remove_tab_widget(placeholder)
        errors, _warnings = view.problems_model.counts()
        note = f", {plural(errors, 'error')}" if errors else ""
        self.window.statusBar().showMessage(f"Opened {opened.tensor_file.path} in {opened.seconds * 1000:.0f} ms"
                                            f"{note}", 8000)

    def show_file(self, opened: OpenedFile, at: int = -1, grouped: bool | None = None,
                  focus: bool = True) -> FileView:
        """Show an already parsed file in a new tab (``open_path`` ends here; embedders may call it too)."""
        tf = opened.tensor_file
        view = self.window.make_view(opened, grouped)
        title, tip = tab_title(tf)
        index = self.tabs.insertTab(at, view, title)
        self.tabs.setTabToolTip(index, tip)
        if focus:
            self.tabs.setCurrentWidget(view)
        self.window.show_tabs()
        if os.path.isfile(tf.path) and not is_generation_view(tf):
            self.window.recent.add(tf.path)
        return view

    # -- reading again ---------------------------------------------------------------------------------------
    def reload(self, view: FileView, then: Callable[[FileView], None] | None = None) -> OpenFileTask:
        """Read ``view``'s file again into its tab, as what it shows: the file as it is now, or the same earlier
        generation for a generation tab. ``then`` gets the new view (File ▸ Reload and a change on disk)."""
        def done(opened: OpenedFile) -> None:
            new = self.replace_view(view, opened)
            if then is not None:
                then(new)
        return self.start_open(view.tensor_file.path, view, done, _reader_for(view.tensor_file))

    def replace_view(self, old: FileView, opened: OpenedFile) -> FileView:
        """Show ``opened`` in the tab of ``old`` (same grouping and filter), which closes."""
        view = self.show_file(opened, at=self.tabs.indexOf(old), grouped=old.tree_model.grouped)
        view.filter_edit.setText(old.filter_edit.text())
        self.window.remove_tab_widget(old)
        self.window.statusBar().showMessage(f"Reloaded {opened.tensor_file.path}", 5000)
        return view

    # -- generations -----------------------------------------------------------------------------------------
    def show_generations(self) -> GenerationsDialog | None:
        """View ▸ Generations…: list the current zTensor v2 file's generations; one can be opened read-only."""
        view = self.window.current_view()
        if view is None or not generation_rows(view.tensor_file):
            return None
        from .dialogs.generations import GenerationsDialog

        dialog = GenerationsDialog(view.tensor_file, self.window.window())
        path = view.tensor_file.path
        dialog.open_requested.connect(lambda row: self.open_generation(path, row))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def open_generation(self, path: str, row: GenerationRow) -> OpenFileTask | None:
        """Open ``path`` as it was in an earlier generation, in a read-only tab (an open one comes to the front)."""
        existing = self.window.generation_view(path, row.number)
        if existing is not None:
            self.tabs.setCurrentWidget(existing)
            return None
        placeholder = self._placeholder(f"Opening generation {row.number} of {path}…",
                                        generation_title(path, row.number))

        def shown(opened: OpenedFile) -> None:
            self.show_file(opened, at=self.tabs.indexOf(placeholder))
            self.window.remove_tab_widget(placeholder)
            self.window.statusBar().showMessage(f"Opened generation {row.number} of {path} read-only", 8000)

        return self.start_open(path, placeholder, shown, reader=lambda p: open_generation_row(p, row))

    # -- comparing -------------------------------------------------------------------------------------------
    def show_compare_dialog(self) -> None:
        """File ▸ Compare…: A defaults to the current file, B to the next open one."""
        from .compare.dialog import CompareDialog

        paths = [v.tensor_file.path for v in self.window.file_views()]
        current = self.window.current_view()
        a = current.tensor_file.path if current is not None else (paths[0] if paths else "")
        b = next((p for p in paths if p != a), "")
        dialog = CompareDialog(list(open_filters()), a, b, self.window.window())
        dialog.accepted.connect(lambda: self.compare_paths(*dialog.paths()))
        dialog.open()

    def compare_views(self) -> list[CompareTab]:
        return [w for w in (self.tabs.widget(i) for i in range(self.tabs.count())) if isinstance(w, CompareTab)]

    def compare_paths(self, path_a: str, path_b: str) -> CompareView:
        """A new Compare tab for A (the reference) and B; the comparison runs on a worker."""
        # the Compare tab's plots load on the first comparison, not at start-up
        from .compare.compare_view import CompareView

        view = CompareView(path_a, path_b, pool=self.window.pool)
        view.status_message.connect(lambda text: self.window.statusBar().showMessage(text, 10000))
        view.ended.connect(lambda state, v=view: self._compare_ended(v, state))
        title = f"{os.path.basename(path_a.rstrip(os.sep))} ⇄ {os.path.basename(path_b.rstrip(os.sep))}"
        index = self.tabs.addTab(view, title)
        self.tabs.setTabToolTip(index, f"A: {view.session.path_a}\nB: {view.session.path_b}")
        self.tabs.setCurrentWidget(view)
        self.window.show_tabs()
        view.start()
        return view

    def _compare_ended(self, view: CompareView, state: str) -> None:
        if state == "failed":
            self.window.show_error("Could not compare", view.session.message)
        elif state == "done":
            self.window.statusBar().showMessage(f"Compared {view.session.path_a} with {view.session.path_b}: "
                                                f"{len(view.session.pairs)} entries", 8000)

    def cancel_all(self) -> None:
        """The window closes: stop every parse and comparison still running."""
        for task in list(self.opening):
            task.cancel()
        for compare in self.compare_views():
            compare.cancel()


def tab_title(tf: TensorFile) -> tuple[str, str]:
    """The title and tooltip of the tab showing ``tf``: its file name, or which generation of it."""
    if is_generation_view(tf) and tf.generation_number is not None:
        return (generation_title(tf.path, tf.generation_number),
                f"{tf.path}\nas it was in generation {tf.generation_number} (read-only)")
    return os.path.basename(tf.path), tf.path


def generation_title(path: str, number: int) -> str:
    return f"{os.path.basename(path)} @ generation {number}"


def _reader_for(tf: TensorFile) -> Callable[[str], TensorFile] | None:
    """How to read ``tf``'s file again as what it shows: the same earlier generation for a generation tab, else
    ``None`` (the file as it is now)."""
    if not is_generation_view(tf):
        return None
    row = generation_rows(tf)[0]

    def reader(path: str) -> TensorFile:
        return open_generation_row(path, row)
    return reader


def file_key(path: str) -> str:
    """One spelling per file: links resolved, case folded where the file system ignores case."""
    return os.path.normcase(os.path.realpath(path))
