"""The Qt face of one file's edits: a :class:`~ztviewer.session.edit_session.EditSession` (Qt-free, owned by
the file's session) with its history mirrored into a ``QUndoStack`` for the Undo/Redo actions (a ``QUndoGroup``)
and the History dock. Undo from the menu undoes in the session; an undo made on the session moves the stack."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from ztviewer.codec import Tensor, TensorFile
from ztviewer.session.edit_session import EditSession as Edits
from ztviewer.session.edit_session import EditStep

if TYPE_CHECKING:
    from ztviewer.codec.edit import Command
    from ztviewer.codec.writers.document import EditableDocument
    from ztviewer.session.file_session import FileSession


class MirroredStep(QUndoCommand):
    """One step of the session's history on the stack. Its first ``redo()`` (the push) is a no-op: the session
    applied the step already."""

    def __init__(self, owner: EditSession, step: EditStep) -> None:
        super().__init__(step.text)
        self.owner, self.step = owner, step
        self._pushed = False

    def redo(self) -> None:
        if self._pushed:
            self.owner.drive(self.owner.edits.redo)
        self._pushed = True

    def undo(self) -> None:
        self.owner.drive(self.owner.edits.undo)


class EditSession(QObject):
    """Edits of one tab. ``changed`` fires after every edit, undo, redo and change of the saved state."""

    changed = Signal()

    def __init__(self, edits: Edits, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.edits = edits
        self.following = False          # the stack is being moved to where the session's history is
        self.driving = False            # the stack (Undo / Redo actions) is moving the session's history
        self.stack = QUndoStack(self)
        edits.pushed.connect(self._on_pushed)
        edits.moved.connect(self._on_moved)
        edits.changed.connect(self._on_changed)
        self.stack.cleanChanged.connect(self._on_clean_changed)

    def _on_pushed(self, step: EditStep) -> None:
        self.stack.push(MirroredStep(self, step))

    def drive(self, move: Callable[[], None]) -> None:
        """Undo / redo in the session because the stack moved (not when the stack is following the session)."""
        if self.following:
            return
        self.driving = True
        try:
            move()
        finally:
            self.driving = False

    def _on_moved(self, index: int) -> None:
        if not self.driving and self.stack.index() != index:
            self.following = True
            try:
                self.stack.setIndex(index)
            finally:
                self.following = False

    def _on_changed(self, _: None) -> None:
        self.changed.emit()

    def _on_clean_changed(self, clean: bool) -> None:
        if clean and not self.edits.clean:      # setClean() on the stack: the edits were saved or discarded
            self.edits.mark_clean()

    def detach(self) -> None:
        self.edits.pushed.disconnect(self._on_pushed)
        self.edits.moved.disconnect(self._on_moved)
        self.edits.changed.disconnect(self._on_changed)

    # -- the session's edits, as the editing widgets use them -------------------------------------------------
    @property
    def tensor_file(self) -> TensorFile:
        return self.edits.tensor_file

    @property
    def writable(self) -> bool:
        return self.edits.writable

    @property
    def doc(self) -> EditableDocument:
        return self.edits.doc

    @property
    def saving(self) -> bool:
        return self.edits.saving

    @saving.setter
    def saving(self, value: bool) -> None:
        self.edits.saving = value

    @property
    def modified(self) -> bool:
        return self.edits.modified

    def push(self, command: Command) -> None:
        """Apply ``command`` (raises EditRefused when refused, nothing changes) and put it on the stack."""
        self.edits.push(command)

    def push_all(self, commands: list[Command], text: str) -> None:
        """Apply several commands as one undo step (one command alone stays itself); stops at a refusal."""
        self.edits.push_all(commands, text)

    def mark_clean(self) -> None:
        self.edits.mark_clean()
        self.stack.setClean()

    def attributes(self, tensor: str | None) -> dict[str, Any]:
        return self.edits.attributes(tensor)

    def current_name(self, original: Tensor) -> str | None:
        return self.edits.current_name(original)


def create_session(session: FileSession, parent: QObject | None = None) -> EditSession | None:
    """The Qt face of ``session.edits``, or None for a file that could not be read (nothing to edit)."""
    return EditSession(session.edits, parent) if session.edits is not None else None
