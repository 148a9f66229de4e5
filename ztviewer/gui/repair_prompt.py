"""File ▸ Repair Interrupted Save…: roll back a zTensor v2 append a crash interrupted, after asking, then read the
file again in its tab (unsaved edits applied again). Opening the file only reported it (the codec never writes
then); this is the explicit action that does, as ``ztviewer repair`` does."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QMessageBox

from ztviewer.codec.interrupted_append import interrupted_append_of, repair

from .window_host import WindowHost

if TYPE_CHECKING:
    from .changed_on_disk import DiskWatcher
    from .file_view import FileView


class RepairHost(WindowHost, Protocol):
    """The window as the repair uses it: the watcher that reads a tab's file again keeping its edits."""

    @property
    def disk_watch(self) -> DiskWatcher: ...


def can_repair(view: FileView | None) -> bool:
    """Whether ``view`` shows a file opened beside an interrupted append its journal applies to."""
    return view is not None and interrupted_append_of(view.tensor_file) is not None


def offer_repair(window: RepairHost, view: FileView) -> QMessageBox | None:
    """Ask whether to roll the interrupted append of ``view``'s file back (non-blocking); returns the question."""
    finding = interrupted_append_of(view.tensor_file)
    if finding is None:
        return None
    tf = view.tensor_file
    old = finding.old_length
    box = QMessageBox(QMessageBox.Icon.Question, "Repair Interrupted Save",
                      f"Roll {os.path.basename(tf.path)} back to the generation before the interrupted save?",
                      QMessageBox.StandardButton.Cancel, window.window())
    box.setObjectName("repairPrompt")
    box.setInformativeText(f"The {tf.size - old:,} bytes after byte {old:,} are all an interrupted save appended: "
                           f"repairing removes them and the journal {os.path.basename(finding.journal_file)}, so the "
                           "file is again exactly what it was before that save. What the tab shows stays the same.")
    roll_back = box.addButton("Repair", QMessageBox.ButtonRole.DestructiveRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.finished.connect(lambda _: _answered(window, view, box.clickedButton() is roll_back))
    box.finished.connect(box.deleteLater)
    box.open()
    return box


def _answered(window: RepairHost, view: FileView, confirmed: bool) -> None:
    if not confirmed:
        return
    tf = view.tensor_file
    session = view.edit_session
    if session is not None and session.saving:
        window.show_error(f"Could not repair {tf.path}", "a save of this tab is still running; repair when it ends")
        return
    try:
        from ztviewer.codec.save import release_sources_of  # the writers: imported when a repair runs, not at start-up

        outcome = repair(tf.path, release=lambda: release_sources_of(tf, tf.path))
    except OSError as exc:
        window.show_error(f"Could not repair {tf.path}", exc.strerror or str(exc))
        return
    if outcome.refused:
        window.show_error(f"Could not repair {tf.path}", outcome.message)
        return
    window.disk_watch.expect_change(tf)      # the window changed the file itself: no "changed on disk" question
    window.statusBar().showMessage(f"{tf.path}: {outcome.message}", 10000)
    window.disk_watch.reload(view)
