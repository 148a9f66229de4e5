"""One description of each file format: what the registry, the command line, the window and the desktop
integration know of it.

A :class:`FormatSpec` names the format, says how to recognise its files (:attr:`FormatSpec.sniff`, asked with a
:class:`Probe` of the file's bytes), where its reader is (imported on first use, so opening a file imports the
reader of its format only), its optional whole-file checks and content digests, the writer targets that produce
it, and how the desktop registers it (MIME type, extensions). Everything that lists formats — open filters,
Save As, ``convert --to``, :mod:`ztviewer.file_types`, the MIME XML and the Windows/macOS associations — is derived
from the registered specs (:mod:`.registry`).

Adding a format
---------------
Write a reader ``read(source) -> TensorFile`` (see :mod:`.formats.safetensors`) and a sniff function in a light
module (no numpy or other heavy import), then register a spec: a built-in format is one entry of
:data:`ztviewer.codec.formats.builtin.BUILTIN_FORMATS`; a third-party package declares an entry point in the
group ``ztviewer.formats`` whose object is a :class:`FormatSpec` (or a callable returning one)::

    [project.entry-points."ztviewer.formats"]
    toy = "toyformat:SPEC"

    SPEC = FormatSpec(name="toy", description="Toy tensors", extensions=(".toy",), mime="application/x-toy",
                      sniff=lambda probe: probe.head(4) == b"TOY1", read="toyformat.reader:read")
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .io.protocol import ByteSource
    from .model import Problem, Tensor, TensorFile
    from .source import Source

#: the most bytes a probe reads in one place (a zip's end-of-central-directory record can sit up to 64 KiB from
#: the end; HDF5's superblock at 0, 512, 1024, 2048 … is read 8 bytes at a time)
PROBE_LIMIT = 64 << 10

Reader = Callable[["Source"], "TensorFile"]
Sniffer = Callable[["Probe"], bool]


class Probe:
    """Bounded, cached reads of a file's bytes for sniffing: the first and last bytes and any small range.

    Each read asks at most :data:`PROBE_LIMIT` bytes; ranges past the end give ``b""`` (or fewer bytes), never an
    error, so a sniff function can ask what it likes of a short or truncated file."""

    def __init__(self, source: ByteSource) -> None:
        self._source = source
        self.size = source.size
        self._head = b""
        self._tail = b""

    @classmethod
    def of_bytes(cls, data: bytes) -> Probe:
        from .io.memory import InMemorySource

        return cls(InMemorySource(data, path="<bytes>"))

    def head(self, n: int = 64) -> bytes:
        n = min(n, PROBE_LIMIT, self.size)
        if len(self._head) < n:
            self._head = self._source.read(0, n, "the leading bytes")
        return self._head[:n]

    def tail(self, n: int = 64) -> bytes:
        n = min(n, PROBE_LIMIT, self.size)
        if len(self._tail) < n:
            self._tail = self._source.read(self.size - n, n, "the trailing bytes")
        return self._tail[len(self._tail) - n:]

    def at(self, offset: int, n: int) -> bytes:
        if offset < 0 or n <= 0 or offset >= self.size:
            return b""
        n = min(n, PROBE_LIMIT, self.size - offset)
        if offset + n <= len(self._head):
            return self._head[offset:offset + n]
        return self._source.read(offset, n, "bytes for format detection")


def head_sniffer(test: Callable[[bytes, int], bool], n: int = 64) -> Sniffer:
    """A sniff function that looks at the first ``n`` bytes and the size only."""
    def sniff(probe: Probe) -> bool:
        return test(probe.head(n), probe.size)

    sniff.__name__ = getattr(test, "__name__", "sniff")
    return sniff


def tail_sniffer(test: Callable[[bytes, int], bool], n: int = 64) -> Sniffer:
    """A sniff function that looks at the last ``n`` bytes and the size only."""
    def sniff(probe: Probe) -> bool:
        return test(probe.tail(n), probe.size)

    sniff.__name__ = getattr(test, "__name__", "sniff")
    return sniff


def _resolve(target: str | Callable[..., Any]) -> Callable[..., Any]:
    """A callable, or ``"module:attribute"`` imported now."""
    if callable(target):
        return target
    module, _, attribute = target.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return found


@dataclass(frozen=True)
class FileType:
    """How the desktop registers a format's files: ``key`` names its Windows ProgID (``ztviewer.<key>``) and
    macOS UTI (``org.ztviewer.<key>``); formats that share an extension share one file type."""

    key: str
    mime: str
    description: str
    globs: tuple[str, ...]
    extension: str | None = None
    owner: bool = True  # macOS: ztviewer is the owner of the type (else one handler among several)
    magic: tuple[str, ...] = ()   # shared-mime-info ``<match>`` elements recognising its files
    magic_priority: int = 50
    parent: str = ""              # shared-mime-info ``sub-class-of`` (a JSON file that names a set)
    glob_weight: int | None = None


@dataclass(frozen=True)
class FormatSpec:
    """One file format (see the module docstring).

    Attributes
    ----------
    name:
        ``TensorFile.format`` of its files: ``"zt"``, ``"zt-v2"``, ``"safetensors"``, ``"blz"`` …
    extensions:
        With the dot, the usual one first (Save As appends it).
    mime, file_type, file_type_description, owner, mime_magic, mime_magic_priority:
        The desktop registration; ``file_type`` (default: the name) is shared by formats with one extension;
        ``mime_magic`` the shared-mime-info ``<match>`` elements that recognise its files by content.
    sniff:
        ``(probe) -> bool``: is this file mine? Asked in registration order.
    sniff_damaged:
        Asked only when no format's ``sniff`` claimed the file: a file whose first bytes are damaged but whose
        trailer still names the format, so it is reported as a damaged file of that format.
    read:
        ``read(source) -> TensorFile``, or ``"module:function"`` imported on the first read.
    deep_check:
        ``(tf, cancelled) -> list[Problem]``: whole-file checks ``check`` runs besides decoding every tensor.
    content_digest, tensor_content_digest:
        ``(tf) -> str | None`` and ``(tensor) -> str | None``: the format's own content ids, shown by ``info``.
    signature:
        What its files start with, said when a file with its extension is not recognised.
    targets:
        Keys of the writer targets (:mod:`.writers.targets`) that write this format, in the order offered.
    """

    name: str
    description: str
    extensions: tuple[str, ...]
    mime: str
    sniff: Sniffer
    read: str | Reader
    sniff_damaged: Sniffer | None = None
    deep_check: str | Callable[[TensorFile, Callable[[], bool] | None], list[Problem]] | None = None
    content_digest: str | Callable[[TensorFile], str | None] | None = None
    tensor_content_digest: str | Callable[[Tensor], str | None] | None = None
    targets: tuple[str, ...] = ()
    file_type: str = ""
    file_type_description: str = ""
    owner: bool = True
    mime_magic: tuple[str, ...] = ()
    mime_magic_priority: int = 50
    signature: str = ""  # what its files start with, for the message when a file named like one is not

    def reader(self) -> Reader:
        return _resolve(self.read)

    def deep_checks(self, tf: TensorFile, cancelled: Callable[[], bool] | None = None) -> list[Problem]:
        return list(_resolve(self.deep_check)(tf, cancelled)) if self.deep_check else []

    def digest_of_file(self, tf: TensorFile) -> str | None:
        return _resolve(self.content_digest)(tf) if self.content_digest else None

    def digest_of_tensor(self, tensor: Tensor) -> str | None:
        return _resolve(self.tensor_content_digest)(tensor) if self.tensor_content_digest else None

    @property
    def has_content_digest(self) -> bool:
        return self.content_digest is not None

    @property
    def desktop_type(self) -> FileType:
        ext = self.extensions[0].lstrip(".") if self.extensions else None
        return FileType(self.file_type or self.name, self.mime, self.file_type_description or self.description,
                        tuple(f"*{e}" for e in self.extensions), ext, self.owner, self.mime_magic,
                        self.mime_magic_priority)
