"""Save and Save As for one tab: a copy of the document is written on a worker (progress strip with Cancel),
then the saved file is reopened in the same tab (new tree, clean undo stack). Another tab showing the file a
Save As replaces is closed (see :mod:`.replaced_tabs`)."""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from ztviewer.session.formatting import human_bytes, plural
from ztviewer.workers.tasks import OpenedFile, SaveTask

from .host import SaveHost
from .replaced_tabs import ReplacedTabs
from .save_progress import SaveProgress

if TYPE_CHECKING:     # the dialog and the writers are imported on the first Save As, not at start-up
    from ztviewer.codec.save import SaveResult
    from ztviewer.codec.writers.document import EditableDocument

    from ..dialogs.save_as import SaveAsDialog
    from ..file_view import FileView


class SaveFlow(QObject):
    """The saves of the window's tabs, for the edit controller (given as :class:`~.host.SaveHost`)."""

    def __init__(self, controller: SaveHost) -> None:
        super().__init__(controller.window.window())
        self.controller = controller
        self.window = controller.window
        self.tasks: dict[int, SaveTask] = {}      # id(view) -> running save

    def ask_save_as(self, view: FileView | None) -> SaveAsDialog | None:
        session = self.controller.session_of(view)
        if view is None or session is None or session.saving:
            return None
        from ztviewer.session.conversion import with_extension

        from ..dialogs.save_as import SaveAsDialog

        root, _ = os.path.splitext(view.tensor_file.path)
        dialog = SaveAsDialog(session.doc, with_extension(root + "-edited", session.doc.target.key),
                              self.window.window())
        dialog.accepted.connect(lambda: self._accepted(view, dialog))
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def _accepted(self, view: FileView, dialog: SaveAsDialog) -> None:
        verdict = dialog.verdict
        if verdict.doc is None or self.window.tabs.indexOf(view) < 0:
            return
        replaced = ReplacedTabs(self.controller, view, dialog.path)
        if replaced.agreed():
            self.save(view, verdict.doc, dialog.path, replaced=replaced, compact=dialog.compact)

    def save(self, view: FileView, doc: EditableDocument, path: str, reopen: bool = True,
             then: Callable[[], object] | None = None, replaced: ReplacedTabs | None = None,
             compact: bool = False) -> SaveTask | None:
        """Write ``doc`` (copied, so edits and the save do not race) to ``path`` on a worker; None when the
        tab is already saving (or held by another tab's save over its file). Save As is ``compact``: a zTensor
        v2 file is written afresh (canonical form) rather than given an appended generation."""
        session = self.controller.session_of(view)
        if session is None:          # a file that could not be read has nothing to save
            return None
        if session.saving:
            self.window.show_error(f"Cannot save {path}", "the file is being saved; try again once that has finished.")
            return None
        session.saving = True
        if replaced is not None:
            replaced.hold(True)
        self.controller.update_actions()
        strip = SaveProgress(path, doc.target.label, view)
        view.show_save_progress(strip)
        task = SaveTask(doc.with_target(doc.target), path, compact)
        strip.cancel_requested.connect(task.cancel)
        task.signals.progress.connect(strip.update_progress)
        self.tasks[id(view)] = task

        def ended() -> None:
            self.tasks.pop(id(view), None)
            session.saving = False
            view.show_save_progress(None)
            if replaced is not None:
                replaced.hold(False)
            self.controller.update_actions()

        def finished(result: SaveResult) -> None:
            ended()
            session.mark_clean()
            if os.path.realpath(result.path) == os.path.realpath(view.tensor_file.path):
                session.edits.wrote_its_file = True   # not a change on disk to tell about while the tab reopens
            message = saved_message(result)
            self.window.statusBar().showMessage(message, 10000)
            if replaced is not None:
                replaced.close()
            if reopen:
                self._reopen(view, result.path, message)
            if then is not None:
                then()

        def failed(message: str) -> None:
            ended()
            self.window.show_error(f"Could not save {path}", message)

        def cancelled() -> None:
            ended()
            self.window.statusBar().showMessage(f"Save cancelled: {path} was not written", 10000)

        task.signals.finished.connect(finished)
        task.signals.failed.connect(failed)
        task.signals.cancelled.connect(cancelled)
        self.window.statusBar().showMessage(f"Saving {path}…")
        task.start(self.window.pool)
        return task

    def _reopen(self, view: FileView, path: str, message: str = "") -> None:
        """Show the saved file in the tab that held the edited one."""
        def replace(opened: OpenedFile) -> None:
            self.window.opener.replace_view(view, opened)
            self.window.statusBar().showMessage(f"{message}; reopened" if message else f"Saved and reopened {path}",
                                                10000)

        self.window.opener.start_open(path, view, replace)


def saved_message(result: SaveResult) -> str:
    """The status-bar line after a save: an appended zTensor v2 generation says so and how much it added; what the
    output could not hold (unknown manifest keys it dropped) is said too."""
    if result.appended is not None:
        which = "a generation" if result.generation is None else f"generation {result.generation}"
        return (f"Saved: appended {which} ({human_bytes(result.appended)}) to "
                f"{os.path.basename(result.path)}")
    cleaned = (f"; removed {plural(len(result.cleaned), 'temporary file')} interrupted saves left in the folder"
               if result.cleaned else "")
    dropped = "".join(f"; {text}" for text in result.warnings)
    return f"Saved {result.path} ({result.format}, {result.size:,} bytes){cleaned}{dropped}"
