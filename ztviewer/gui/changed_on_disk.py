"""Telling the user when an open file changes on disk, and reloading it without losing unsaved edits.

Another program may truncate or rewrite a file this window shows. The codec then refuses to read it
(:class:`~ztviewer.codec.errors.SourceChanged`, never SIGBUS), and this watcher, polling every open tab's file
(:meth:`~ztviewer.codec.source.Source.changed`: size, modification time, and whether its path still names it),
says so once per file and offers Reload. A tab's own save is not such a change. Reloading reads the file
again and applies the tab's unsaved edits (the steps in effect) to the new document, so nothing typed is lost.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QAbstractButton, QMessageBox

from ztviewer.codec import TensorFile
from ztviewer.codec.errors import CodecError
from ztviewer.codec.file_stamps import GONE, REPLACED
from ztviewer.session.formatting import plural

from .window_host import WindowHost

if TYPE_CHECKING:
    from ztviewer.session.edit_session import EditStep

    from .file_view import FileView
    from .tab_opener import TabOpener

POLL_MS = 2000


def changed_on_disk(tf: TensorFile) -> str | None:
    """Why the file (or a shard of a set) no longer matches what was read, or ``None``."""
    sources = [tf.source] if tf.source is not None else [s.source for s in getattr(tf, "shards", ())]
    for source in sources:
        why = source.changed() if source is not None else None
        if why is not None:
            return why if len(sources) == 1 else f"{os.path.basename(source.path)}: {why}"
    return None


class WatchedWindow(WindowHost, Protocol):
    """The window as the watcher uses it: its tabs, and the opener that reads a file again."""

    @property
    def opener(self) -> TabOpener: ...


class DiskWatcher(QObject):
    """Polls the files of the window's tabs; one warning per changed file, with Reload."""

    def __init__(self, window: WatchedWindow, interval_ms: int = POLL_MS) -> None:
        super().__init__(window.window())
        self.window = window
        self._told: set[int] = set()        # id() of the TensorFile objects already reported
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.poll)
        self.timer.start()
        self.box: QMessageBox | None = None

    def poll(self) -> None:
        for view in self.window.file_views():
            tf = view.tensor_file
            session = view.edit_session
            if id(tf) in self._told or (session is not None and (session.saving or session.edits.wrote_its_file)):
                continue     # told already, or the tab's own save is writing the file or has written it
            why = changed_on_disk(tf)
            if why is not None:
                self._told.add(id(tf))
                self.offer_reload(view, why)

    def expect_change(self, tf: TensorFile) -> None:
        """The window itself is about to change ``tf``'s file (File ▸ Repair…): not a change to tell."""
        self._told.add(id(tf))

    def offer_reload(self, view: FileView, why: str) -> None:
        path = view.tensor_file.path
        session = view.edit_session
        edits = session is not None and session.modified
        self.window.statusBar().showMessage(f"{path} changed on disk: {why}", 0)
        box = QMessageBox(QMessageBox.Icon.Warning, "File changed on disk",
                          f"{os.path.basename(path)} changed on disk: {why}.", parent=self.window.window())
        still_read = why in (REPLACED, GONE)      # the open file is whole, only no longer the one at its path
        box.setInformativeText(("What is shown is the file as it was when opened; it can still be read. "
                                if still_read else
                                "What is shown no longer matches the file, and reading it stops with an error. ")
                               + ("Reload reads it again and applies your unsaved edits to it."
                                  if edits else "Reload reads it again."))
        reload = box.addButton("Reload", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Keep showing", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(reload)
        box.finished.connect(lambda _: self._answered(box, reload, view))
        self.box = box
        box.open()

    def _answered(self, box: QMessageBox, reload: QAbstractButton, view: FileView) -> None:
        self.box = None
        if box.clickedButton() is reload:
            self.reload(view)

    def reload(self, view: FileView) -> None:
        """Read the file again in the same tab, then apply the edits that were in effect."""
        session = view.edit_session
        steps = session.edits.applied_steps() if session is not None else ()
        self.window.opener.reload(view, lambda new: self._reloaded(new, steps))

    def _reloaded(self, view: FileView, steps: tuple[EditStep, ...]) -> None:
        session = view.edit_session
        if session is None or not steps:
            return
        refused = []
        for step in steps:
            try:
                session.edits.push_all(step.commands, step.text)
            except CodecError as exc:  # an edit the new file cannot take (a tensor is gone): say which
                refused.append(f"{step.text}: {exc}")
        if refused:
            self.window.show_error("Some edits could not be applied again", "\n".join(refused))
        else:
            self.window.statusBar().showMessage(f"Reloaded {view.tensor_file.path}; "
                                                f"{plural(len(steps), 'unsaved edit')} applied again", 8000)
