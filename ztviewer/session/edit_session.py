"""One open file's edits without Qt: an :class:`~ztviewer.codec.writers.document.EditableDocument` and an undo
history of codec commands.

A command is applied (and so checked against the target format) *before* it enters the history: a refusal
raises :class:`~ztviewer.codec.errors.EditRefused` and leaves the history untouched. Undo applies each command's
inverse, redo applies it again. The GUI mirrors the history into a ``QUndoStack`` for its menus and History dock.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ztviewer.codec import Tensor, TensorFile
from ztviewer.codec.errors import EditRefused

from .events import Event

if TYPE_CHECKING:
    from ztviewer.codec.edit import Command
    from ztviewer.codec.writers.document import EditableDocument


@dataclass(frozen=True, slots=True)
class EditStep:
    """One entry of the undo history: one command, or several applied and undone together."""

    text: str
    commands: tuple[Command, ...]


class EditSession:
    """Edits of one open file.

    Files in a read-only format (sharded checkpoints, datasets) get a zTensor v1.0 document (an earlier generation
    of a zTensor v2 file a v2 one): they can be edited and saved elsewhere (Save As), not written back
    (:attr:`writable` is False). The document (a copy of every
    tensor's names and attributes) is built on first use: most files are only looked at.

    Events: ``changed(None)`` after every edit, undo, redo and change of the saved state; ``pushed(EditStep)`` when
    a step enters the history (dropping the undone steps after it); ``moved(int)`` when undo / redo moved the
    position in the history (the number of steps applied).
    """

    def __init__(self, tensor_file: TensorFile) -> None:
        self.tensor_file = tensor_file
        self._writable: bool | None = None
        self._doc: EditableDocument | None = None
        self.saving = False
        self.wrote_its_file = False     # a save replaced the file read (the tab reopens it): later changes are its own
        self._steps: list[EditStep] = []
        self._index = 0                 # steps applied
        self._clean: int | None = 0     # the position that matches the file on disk (None: unreachable)
        self.changed: Event[None] = Event("edits.changed")
        self.pushed: Event[EditStep] = Event("edits.pushed")
        self.moved: Event[int] = Event("edits.moved")

    # -- the document ----------------------------------------------------------------------------------------
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

    def attributes(self, tensor: str | None) -> dict[str, Any]:
        """The current attributes of the file (``tensor=None``) or of a tensor (by its current name)."""
        if tensor is None:
            return self.doc.attributes
        return self.doc.find(tensor).attributes

    def current_name(self, original: Tensor) -> str | None:
        """The current name of an original (reader) Tensor, or None when it was deleted."""
        if self._doc is None:     # nothing edited yet
            return original.name
        return next((t.name for t in self.doc.tensors if t.original is original), None)

    def current_names(self) -> list[tuple[Tensor, str]] | None:
        """``(original tensor, current name)`` of every tensor not deleted, in order; ``None`` while nothing was
        edited (the document is not built, every tensor has its own name)."""
        if self._doc is None:
            return None
        return [(t.original, t.name) for t in self._doc.tensors]

    # -- editing ---------------------------------------------------------------------------------------------
    def applied_steps(self) -> tuple[EditStep, ...]:
        """The steps in effect now (undone ones excluded), oldest first: what a reload re-applies."""
        return tuple(self._steps[:self._index])

    def push(self, command: Command) -> EditStep:
        """Apply ``command`` (raises EditRefused when refused, nothing changes) and add it to the history."""
        return self.push_all([command], command.text)

    def push_all(self, commands: Sequence[Command], text: str) -> EditStep:
        """Apply several commands as one undo step (one command keeps its own text). A refusal stops there: the
        commands applied before it stay, as one step, and the refusal is raised."""
        self._check_idle()
        applied: list[Command] = []
        try:
            for command in commands:
                command.apply(self.doc)
                applied.append(command)
        finally:
            if applied:
                self._add(EditStep(applied[0].text if len(applied) == 1 else text, tuple(applied)))
        return self._steps[-1]

    def _add(self, step: EditStep) -> None:
        if self._clean is not None and self._clean > self._index:
            self._clean = None          # the saved state was in the dropped redo tail
        del self._steps[self._index:]
        self._steps.append(step)
        self._index += 1
        self.pushed.emit(step)
        self.changed.emit(None)

    def undo(self) -> None:
        if not self.can_undo:
            return
        self._check_idle()
        step = self._steps[self._index - 1]
        for command in reversed(step.commands):
            command.inverse().apply(self.doc)
        self._index -= 1
        self.moved.emit(self._index)
        self.changed.emit(None)

    def redo(self) -> None:
        if not self.can_redo:
            return
        self._check_idle()
        for command in self._steps[self._index].commands:
            command.apply(self.doc)
        self._index += 1
        self.moved.emit(self._index)
        self.changed.emit(None)

    def _check_idle(self) -> None:
        if self.saving:
            raise EditRefused("the file is being saved; edit again when the save has finished", rule="save running")

    # -- history ---------------------------------------------------------------------------------------------
    @property
    def steps(self) -> list[EditStep]:
        return list(self._steps)

    @property
    def index(self) -> int:
        """How many steps of the history are applied."""
        return self._index

    @property
    def can_undo(self) -> bool:
        return self._index > 0

    @property
    def can_redo(self) -> bool:
        return self._index < len(self._steps)

    @property
    def clean(self) -> bool:
        """The history stands where the file on disk does."""
        return self._clean == self._index

    @property
    def modified(self) -> bool:
        """Unsaved edits exist (an edit undone back to the saved state counts as clean)."""
        return not self.clean and self.doc.modified

    def mark_clean(self) -> None:
        """The file on disk now matches the current position (it was saved, or the edits are discarded)."""
        self._clean = self._index
        self.changed.emit(None)
