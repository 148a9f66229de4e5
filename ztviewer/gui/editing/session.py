"""One open file's edits: an :class:`EditableDocument` and the QUndoStack whose commands wrap codec commands.

A codec command is applied (and so checked against the target format) *before* it is pushed: a refusal
raises :class:`~ztviewer.codec.errors.EditRefused` to the caller and leaves the stack untouched. The undo
command's first ``redo()`` (the push) is then a no-op; later redos re-apply, undos apply the inverse.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from ztviewer.codec import TensorFile
from ztviewer.codec.edit import Command
from ztviewer.codec.errors import EditRefused
from ztviewer.codec.writers.document import EditableDocument
from ztviewer.codec.writers.targets import target_of


class CodecUndoCommand(QUndoCommand):
    """A codec edit on the undo stack: redo = ``apply``, undo = ``inverse().apply``."""

    def __init__(self, session: EditSession, command: Command) -> None:
        super().__init__(command.text)
        self.session = session
        self.command = command
        self._pushed = False

    def redo(self) -> None:
        if self._pushed:
            self.command.apply(self.session.doc)
        self._pushed = True
        self.session.notify()

    def undo(self) -> None:
        self.command.inverse().apply(self.session.doc)
        self.session.notify()


class EditSession(QObject):
    """Edits of one tab. ``changed`` fires after every edit, undo and redo.

    Files in a read-only format (sharded checkpoints, datasets, zt v2) get a zTensor v1.0 document: they can be
    edited and saved with Save As, not written back (:attr:`writable` is False).
    """

    changed = Signal()

    def __init__(self, tensor_file: TensorFile, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tensor_file = tensor_file
        try:
            target_of(tensor_file)
            self.writable = True
            self.doc = EditableDocument(tensor_file)
        except EditRefused:
            self.writable = False
            self.doc = EditableDocument(tensor_file, "zt-v1.0")
        self.saving = False
        self.stack = QUndoStack(self)
        self.stack.cleanChanged.connect(lambda clean: self.changed.emit())

    def push(self, command: Command) -> None:
        """Apply ``command`` (raises EditRefused when refused, nothing changes) and put it on the stack."""
        self._check_idle()
        command.apply(self.doc)
        self.stack.push(CodecUndoCommand(self, command))

    def push_all(self, commands: list[Command], text: str) -> None:
        """Apply several commands as one undo step (one command alone stays itself); stops at a refusal."""
        if len(commands) == 1:
            self.push(commands[0])
            return
        first, *rest = commands
        self._check_idle()
        first.apply(self.doc)        # a refusal of the first one leaves no empty step behind
        self.stack.beginMacro(text)
        try:
            self.stack.push(CodecUndoCommand(self, first))
            for command in rest:
                self.push(command)
        finally:
            self.stack.endMacro()

    def _check_idle(self) -> None:
        if self.saving:
            raise EditRefused("the file is being saved; edit again when the save has finished", rule="save running")

    def notify(self) -> None:
        self.changed.emit()

    @property
    def modified(self) -> bool:
        """Unsaved edits exist (an edit undone back to the saved state counts as clean)."""
        return not self.stack.isClean() and self.doc.modified

    def mark_clean(self) -> None:
        self.stack.setClean()
        self.notify()

    def attributes(self, tensor: str | None) -> dict:
        """The current attributes of the file (``tensor=None``) or of a tensor (by its current name)."""
        if tensor is None:
            return self.doc.attributes
        return self.doc.find(tensor).attributes

    def current_name(self, original) -> str | None:
        """The current name of an original (reader) Tensor, or None when it was deleted."""
        return next((t.name for t in self.doc.tensors if t.original is original), None)


def create_session(tensor_file: TensorFile, parent: QObject | None = None) -> EditSession | None:
    """An edit session, or None for a file that could not be read (nothing to edit)."""
    try:
        return EditSession(tensor_file, parent)
    except EditRefused:
        return None
