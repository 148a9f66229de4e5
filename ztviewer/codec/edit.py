"""Edits as undoable commands on an :class:`EditableDocument` (never on the file or the reader's model).

Each command checks the edit against what the document's target format can hold *before* changing
anything, and raises :class:`~ztviewer.codec.errors.EditRefused` with the reason and what would work.
``cmd.apply(doc)`` performs it; ``cmd.inverse()`` (after apply) returns the command that undoes it, whose
own inverse redoes it — the shape a ``QUndoCommand`` wraps directly.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any

from .errors import EditRefused
from .writers import targets as rules
from .writers.document import DocComponent, DocTensor, EditableDocument

__all__ = [
    "Command",
    "DeleteFileAttribute",
    "DeleteTensor",
    "DeleteTensorAttribute",
    "EditableDocument",
    "RenameFileAttribute",
    "RenameTensor",
    "RenameTensorAttribute",
    "SetDigest",
    "SetEncoding",
    "SetFileAttribute",
    "SetTensorAttribute",
]

_MISSING = object()


class Command(ABC):
    """One undoable edit. ``text`` is a short label for an undo menu."""

    text = "edit"

    def __init__(self) -> None:
        self._applied = False

    def apply(self, doc: EditableDocument) -> None:
        """Check the edit against the target format, then perform it (nothing changes when refused)."""
        self._do(doc)
        self._applied = True
        doc.touch()

    def inverse(self) -> Command:
        """The command undoing this one (valid once this one was applied)."""
        if not self._applied:
            raise EditRefused(f"cannot undo {self.text!r}: it was never applied", rule="undo after apply")
        return _Undo(self)

    @abstractmethod
    def _do(self, doc: EditableDocument) -> None: ...

    @abstractmethod
    def _undo(self, doc: EditableDocument) -> None: ...

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.text}>"


class _Undo(Command):
    def __init__(self, command: Command) -> None:
        super().__init__()
        self.command = command
        self.text = f"undo {command.text}"

    def _do(self, doc: EditableDocument) -> None:
        self.command._undo(doc)

    def _undo(self, doc: EditableDocument) -> None:
        self.command._do(doc)

    def inverse(self) -> Command:
        return self.command


# -- file attributes ------------------------------------------------------------------------------
class _FileAttributesCommand(Command):
    def _do(self, doc: EditableDocument) -> None:
        before = dict(doc.attributes)
        self._change(doc)
        self._before = before

    def _undo(self, doc: EditableDocument) -> None:
        doc.attributes = dict(self._before)

    @abstractmethod
    def _change(self, doc: EditableDocument) -> None: ...


class SetFileAttribute(_FileAttributesCommand):
    """Set (add or replace) a file-level attribute: zt v1.0 ``attributes``, safetensors ``__metadata__``."""

    def __init__(self, key: str, value: Any) -> None:
        super().__init__()
        self.key, self.value = key, value
        self.text = f"set attribute {key!r}"

    def _change(self, doc: EditableDocument) -> None:
        rules.check_file_attribute(doc.target, self.key, self.value)
        doc.attributes[self.key] = self.value


class DeleteFileAttribute(_FileAttributesCommand):
    """Remove a file-level attribute."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.text = f"delete attribute {key!r}"

    def _change(self, doc: EditableDocument) -> None:
        if self.key not in doc.attributes:
            raise EditRefused(f"the file has no attribute {self.key!r}", rule="delete an existing attribute")
        del doc.attributes[self.key]


class RenameFileAttribute(_FileAttributesCommand):
    """Rename a file-level attribute, keeping its value."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new
        self.text = f"rename attribute {old!r} to {new!r}"

    def _change(self, doc: EditableDocument) -> None:
        attrs = doc.attributes
        if self.old not in attrs:
            raise EditRefused(f"the file has no attribute {self.old!r}", rule="rename an existing attribute")
        if self.new in attrs and self.new != self.old:
            raise EditRefused(f"the file already has an attribute {self.new!r}; delete it first or pick another "
                              "name", rule="attribute names are unique")
        rules.check_file_attribute(doc.target, self.new, attrs[self.old])
        doc.attributes = {(self.new if k == self.old else k): v for k, v in attrs.items()}


# -- tensors --------------------------------------------------------------------------------------
class _TensorCommand(Command):
    """Edits of one tensor: the tensor's previous state is kept whole, so undo restores it exactly."""

    def __init__(self, tensor: str) -> None:
        super().__init__()
        self.tensor = tensor

    def _do(self, doc: EditableDocument) -> None:
        index = doc.index_of(self.tensor)
        before = doc.tensors[index].clone()
        self._change(doc, doc.tensors[index])
        self._saved = (index, before)

    def _undo(self, doc: EditableDocument) -> None:
        index, before = self._saved
        doc.tensors[index] = before.clone()

    @abstractmethod
    def _change(self, doc: EditableDocument, t: DocTensor) -> None: ...


class SetTensorAttribute(_TensorCommand):
    """Set a per-tensor attribute (v0.1 custom field, v1.x object attribute)."""

    def __init__(self, tensor: str, key: str, value: Any) -> None:
        super().__init__(tensor)
        self.key, self.value = key, value
        self.text = f"set {tensor}.{key}"

    def _change(self, doc: EditableDocument, t: DocTensor) -> None:
        rules.check_tensor_attribute(doc.target, t.name, self.key, self.value, t.layout)
        t.attributes[self.key] = self.value


class DeleteTensorAttribute(_TensorCommand):
    """Remove a per-tensor attribute."""

    def __init__(self, tensor: str, key: str) -> None:
        super().__init__(tensor)
        self.key = key
        self.text = f"delete {tensor}.{key}"

    def _change(self, doc: EditableDocument, t: DocTensor) -> None:
        if self.key not in t.attributes:
            raise EditRefused(f"tensor {t.name!r} has no attribute {self.key!r}",
                              rule="delete an existing attribute", tensor=t.name)
        if t.layout == "tensor_train" and self.key == "ranks":
            raise EditRefused(f"the 'ranks' of tensor train {t.name!r} are part of its structure and cannot be "
                              "deleted", rule="tensor_train keeps its ranks", tensor=t.name)
        del t.attributes[self.key]


class RenameTensorAttribute(_TensorCommand):
    """Rename a per-tensor attribute, keeping its value."""

    def __init__(self, tensor: str, old: str, new: str) -> None:
        super().__init__(tensor)
        self.old, self.new = old, new
        self.text = f"rename {tensor}.{old} to {new}"

    def _change(self, doc: EditableDocument, t: DocTensor) -> None:
        if self.old not in t.attributes:
            raise EditRefused(f"tensor {t.name!r} has no attribute {self.old!r}",
                              rule="rename an existing attribute", tensor=t.name)
        if self.new in t.attributes and self.new != self.old:
            raise EditRefused(f"tensor {t.name!r} already has an attribute {self.new!r}; delete it first or "
                              "pick another name", rule="attribute names are unique", tensor=t.name)
        if t.layout == "tensor_train" and self.old == "ranks":
            raise EditRefused(f"the 'ranks' of tensor train {t.name!r} cannot be renamed",
                              rule="tensor_train keeps its ranks", tensor=t.name)
        rules.check_tensor_attribute(doc.target, t.name, self.new, t.attributes[self.old], t.layout)
        t.attributes = {(self.new if k == self.old else k): v for k, v in t.attributes.items()}


class RenameTensor(_TensorCommand):
    """Give a tensor a new, unused name."""

    def __init__(self, tensor: str, new: str) -> None:
        super().__init__(tensor)
        self.new = new
        self.text = f"rename {tensor} to {new}"

    def _change(self, doc: EditableDocument, t: DocTensor) -> None:
        if self.new == t.name:
            return
        rules.check_tensor_name(doc.target, self.new, doc.names())
        t.name = self.new


class DeleteTensor(Command):
    """Drop a tensor from the saved file (its bytes are not copied)."""

    def __init__(self, tensor: str) -> None:
        super().__init__()
        self.tensor = tensor
        self.text = f"delete {tensor}"

    def _do(self, doc: EditableDocument) -> None:
        index = doc.index_of(self.tensor)
        if doc.target.key == "blz":
            raise doc.target.refuse("zero tensors", "a .blz file holds exactly one tensor train",
                                    "delete the file instead", tensor=self.tensor)
        self._saved = (index, doc.tensors.pop(index))

    def _undo(self, doc: EditableDocument) -> None:
        index, tensor = self._saved
        doc.tensors.insert(index, tensor)


class _ComponentsCommand(Command):
    """Change encoding / digest settings of one component, one tensor's components, or every tensor's."""

    def __init__(self, tensor: str | None, role: str | None) -> None:
        super().__init__()
        self.tensor, self.role = tensor, role

    def _selected(self, doc: EditableDocument) -> list[tuple[int, DocTensor, DocComponent]]:
        indices = range(len(doc.tensors)) if self.tensor is None else [doc.index_of(self.tensor)]
        out = []
        for i in indices:
            t = doc.tensors[i]
            if self.role is not None and self.role not in t.components:
                raise EditRefused(f"tensor {t.name!r} has no component {self.role!r} "
                                  f"(it has {', '.join(t.components) or 'none'})", rule="existing component",
                                  tensor=t.name, component=self.role)
            out += [(i, t, c) for r, c in t.components.items() if self.role is None or r == self.role]
        return out

    def _do(self, doc: EditableDocument) -> None:
        selected = self._selected(doc)
        for _, t, c in selected:
            self._check(doc, t, c)
        self._before = [(i, c.role, replace(c)) for i, _, c in selected]
        for _, _, c in selected:
            self._set(c)

    def _undo(self, doc: EditableDocument) -> None:
        for index, role, saved in self._before:
            doc.tensors[index].components[role] = replace(saved)

    @abstractmethod
    def _check(self, doc: EditableDocument, t: DocTensor, c: DocComponent) -> None: ...

    @abstractmethod
    def _set(self, c: DocComponent) -> None: ...


class SetEncoding(_ComponentsCommand):
    """Store components ``raw`` or ``zstd`` (with a level). ``tensor=None`` means every tensor (tensor
    trains excepted: their cores stay raw), ``role=None`` every component of the chosen tensors."""

    def __init__(self, encoding: str, level: int | None = None, tensor: str | None = None,
                 role: str | None = None) -> None:
        super().__init__(tensor, role)
        self.encoding, self.level = encoding, level
        what = "all tensors" if tensor is None else tensor + (f".{role}" if role else "")
        self.text = f"store {what} as {encoding}" + (f" (level {level})" if level is not None else "")

    def _selected(self, doc: EditableDocument) -> list[tuple[int, DocTensor, DocComponent]]:
        selected = super()._selected(doc)
        if self.tensor is None and self.encoding == "zstd":
            selected = [(i, t, c) for i, t, c in selected if t.layout != "tensor_train"]
        return selected

    def _check(self, doc: EditableDocument, t: DocTensor, c: DocComponent) -> None:
        rules.check_encoding(doc.target, t.name, self.encoding, self.level)
        if t.layout == "tensor_train" and self.encoding != "raw":
            raise EditRefused(f"the cores of tensor train {t.name!r} stay raw: they already are the compressed form "
                              "and are read in place; compress the other tensors", rule="tensor_train cores are raw",
                              tensor=t.name)

    def _set(self, c: DocComponent) -> None:
        c.reencode = self.encoding == "zstd" and (self.level is not None or c.original.encoding != "zstd")
        c.encoding, c.level = self.encoding, self.level


class SetDigest(_ComponentsCommand):
    """Record a ``crc32c`` or ``sha256`` digest over the stored bytes, or none (``algorithm=None``)."""

    def __init__(self, algorithm: str | None, tensor: str | None = None, role: str | None = None) -> None:
        super().__init__(tensor, role)
        self.algorithm = algorithm
        what = "all tensors" if tensor is None else tensor + (f".{role}" if role else "")
        self.text = f"digest {what}: {algorithm or 'none'}"

    def _check(self, doc: EditableDocument, t: DocTensor, c: DocComponent) -> None:
        rules.check_digest(doc.target, t.name, self.algorithm)

    def _set(self, c: DocComponent) -> None:
        c.digest = self.algorithm
