"""One open file's edits: an :class:`EditableDocument` and the QUndoStack whose commands wrap codec commands.

A codec command is applied (and so checked against the target format) *before* it is pushed: a refusal
raises :class:`~ztviewer.codec.errors.EditRefused` to the caller and leaves the stack untouched. The undo
command's first ``redo()`` (the push) is then a no-op; later redos re-apply, undos apply the inverse.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from ztviewer.codec import TensorFile
from ztviewer.codec.errors import EditRefused

if TYPE_CHECKING:
    from ztviewer.codec.edit import Command
    from ztviewer.codec.writers.document import EditableDocument


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

    The document (a copy of every tensor's names and attributes) is built on first use: most files are only
    looked at, and a 10,000-tensor copy would cost more than showing the tree.
    """

    changed = Signal()

    def __init__(self, tensor_file: TensorFile, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tensor_file = tensor_file
        self._writable: bool | None = None
        self._doc: EditableDocument | None = None
        self.saving = False
        self.stack = QUndoStack(self)
        self.stack.cleanChanged.connect(lambda clean: self.changed.emit())

    @property
    def writable(self) -> bool:
        """Whether the file's own format can be written back (Save); otherwise only Save As."""
        if self._writable is None:
            from ztviewer.codec.writers.targets import target_of

            try:
                target_of(self.tensor_file)
                self._writable = True
            except EditRefused:
                self._writable = False
        return self._writable

    @property
    def doc(self) -> EditableDocument:
        if self._doc is None:
            from ztviewer.codec.writers.document import EditableDocument

            fallback = "zt-v2" if self.tensor_file.format == "zt-v2" else "zt-v1.0"   # an earlier v2 generation
            self._doc = EditableDocument(self.tensor_file, None if self.writable else fallback)
        return self._doc

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
        if self._doc is None:     # nothing edited yet
            return original.name
        return next((t.name for t in self.doc.tensors if t.original is original), None)


def create_session(tensor_file: TensorFile, parent: QObject | None = None) -> EditSession | None:
    """An edit session, or None for a file that could not be read (nothing to edit)."""
    return EditSession(tensor_file, parent) if tensor_file.readable else None
