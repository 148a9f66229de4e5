"""The editable view of an open file: the reader's TensorFile, untouched, plus the pending changes.

:class:`EditableDocument` copies what edits may change (names, attributes, per-component encoding and
digest wishes) into its own objects, so the reader's model — and the file on disk — are never modified.
Saving turns the document into a write plan (:mod:`.plan`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import EditRefused
from ..model import Component, Tensor, TensorFile
from .blobs import KEEP
from .targets import Target, target_of
from .targets import target as target_named

#: formats whose file attributes describe the container (BLZ1 header, shard index, dataset manifest), not the
#: tensors: a document starts without them, as writers rebuild or drop that information.
CONTAINER_ATTRIBUTES = frozenset({"blz", "safetensors-sharded", "safetensors-spark"})


def stored_attributes(tensor: Tensor) -> dict[str, Any]:
    """A tensor's attributes, including a v1.0 ``attributes`` key the reader kept among unknown keys."""
    if tensor.attributes:
        return tensor.attributes
    unknown = tensor.extra_value("unknown_keys") or {}
    found = unknown.get("attributes") if isinstance(unknown, dict) else None
    return found if isinstance(found, dict) else {}


@dataclass(slots=True)
class DocComponent:
    """What will be written for one component: its output encoding (and zstd level) and digest wish.

    ``digest`` is ``"keep"`` (the file's digest, recomputed with the same algorithm if the bytes change),
    ``None`` (no digest), ``"crc32c"`` or ``"sha256"``. ``reencode`` forces recompression (a new level).
    """

    role: str
    original: Component
    encoding: str
    level: int | None = None
    digest: str | None = KEEP
    reencode: bool = False

    @property
    def modified(self) -> bool:
        return (self.encoding != self.original.encoding or self.reencode
                or self.digest not in (KEEP, _algorithm(self.original.digest)))


def _algorithm(digest: str | None) -> str | None:
    return None if digest is None else digest.partition(":")[0]


@dataclass(slots=True)
class DocTensor:
    """A tensor as it will be saved: the original plus its new name, attributes and component settings."""

    original: Tensor
    name: str
    attributes: dict[str, Any]
    components: dict[str, DocComponent]
    densify: bool = False

    @classmethod
    def of(cls, tensor: Tensor) -> DocTensor:
        return cls(tensor, tensor.name, copy_value(stored_attributes(tensor)),
                   {role: DocComponent(c.role, c, c.encoding) for role, c in tensor.components.items()})

    def clone(self) -> DocTensor:
        return replace(self, attributes=copy_value(self.attributes),
                       components={r: replace(c) for r, c in self.components.items()})

    @property
    def layout(self) -> str:
        return self.original.layout

    @property
    def modified(self) -> bool:
        return (self.name != self.original.name or self.attributes != stored_attributes(self.original)
                or self.densify or any(c.modified for c in self.components.values()))


@dataclass
class EditableDocument:
    """An open file plus pending edits, saved in ``target`` format (by default the file's own).

    Parameters
    ----------
    original:
        The reader's TensorFile. It is never modified; its source must stay open until the document is saved.
    target:
        Output format key (``zt-v1.0``, ``zt-v0.1``, ``zt-objects``, ``safetensors``, ``blz``) or a
        :class:`Target`; ``None`` keeps the file's own format.
    """

    original: TensorFile
    target: Target = None  # type: ignore[assignment]
    attributes: dict[str, Any] = field(default_factory=dict)
    tensors: list[DocTensor] = field(default_factory=list)
    revision: int = 0
    alignment: int | None = None

    def __init__(self, original: TensorFile, target: str | Target | None = None) -> None:
        if not original.readable:
            first = next(iter(original.problems), None)
            raise EditRefused(f"{original.path} could not be read, so it cannot be edited"
                              + (f": {first.describe()}" if first else ""), rule="only readable files are editable")
        self.original = original
        self.target = target_of(original) if target is None else (
            target if isinstance(target, Target) else target_named(target))
        self.attributes = {} if original.format in CONTAINER_ATTRIBUTES else copy_value(original.attributes)
        self.tensors = [DocTensor.of(t) for t in original.tensors]
        self.revision = 0
        self.alignment = None  # zTensor v2 blob placement (None: canonical 64 KiB)

    # -- lookups ----------------------------------------------------------------------------------
    def find(self, name: str) -> DocTensor:
        """The tensor currently called ``name`` (the first one, if a v0.1 file repeats the name)."""
        for t in self.tensors:
            if t.name == name:
                return t
        raise EditRefused(f"there is no tensor named {name!r}", rule="edits name an existing tensor", tensor=name)

    def index_of(self, name: str) -> int:
        return self.tensors.index(self.find(name))

    def names(self) -> set[str]:
        return {t.name for t in self.tensors}

    @property
    def modified(self) -> bool:
        """True when saving would change something (after undoing every edit it is false again)."""
        same_tensors = len(self.tensors) == len(self.original.tensors) and all(
            t.original is o for t, o in zip(self.tensors, self.original.tensors))
        original_attributes = {} if self.original.format in CONTAINER_ATTRIBUTES else self.original.attributes
        return (self.attributes != original_attributes or not same_tensors
                or any(t.modified for t in self.tensors))

    def touch(self) -> None:
        self.revision += 1

    def with_target(self, key: str | Target) -> EditableDocument:
        """A copy of this document (with its pending edits) to be saved in another format."""
        other = EditableDocument(self.original, key)
        other.attributes = copy_value(self.attributes)
        other.alignment = self.alignment
        other.tensors = [t.clone() for t in self.tensors]
        return other


def copy_value(value: Any) -> Any:
    """A copy of a decoded attribute value that edits cannot reach back through: maps and lists are copied
    level by level (manifest nesting is bounded), everything else is immutable and shared (strings, numbers,
    bytes, tuples, ``cbor2.frozendict`` map keys, huge integers — which ``copy.deepcopy`` cannot all take)."""
    if isinstance(value, dict):
        return type(value)((key, copy_value(item)) for key, item in value.items()) if value else type(value)()
    if isinstance(value, list):
        return [copy_value(item) for item in value]
    return value
