"""The byte-source protocol: what every reader may ask of where a file's bytes come from.

A source has a size, an identity (:attr:`ByteSource.stamp`), positional reads, chunked reads with progress and
cancel, and can tell whether it changed underneath. Anything more is a capability it declares
(:class:`Capabilities`), which callers ask before using it: zero-copy views of the bytes (a local file's map, an
in-memory buffer) and an OS descriptor (kernel copies, positional reads from another thread). A remote file has
neither: readers then read the bytes they need into memory of their own.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

#: What identifies the bytes read: ``(size, modification time in ns, file number)`` of a local file; a remote
#: file's ``(size, 0, hash of its ETag or checksum)``; ``(size, 0, 0)`` where nothing else is known.
Stamp = tuple[int, int, int]
#: Called after each chunk with the bytes it held.
Progress = Callable[[int], object]
#: Polled between chunks; true stops the read with :class:`~ztviewer.codec.errors.Cancelled`.
CancelCheck = Callable[[], bool]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a source offers beyond the protocol.

    Attributes
    ----------
    views:
        ``view()`` is a zero-copy view of memory the source holds (a file map, an in-memory buffer) rather than
        a copy read for the caller.
    mapped:
        Those views are of an ``mmap`` of a file: their pages can be probed for residency and given back.
    descriptor:
        ``fileno()`` and ``reader_fd()`` give an OS descriptor of the file.
    """

    views: bool = False
    mapped: bool = False
    descriptor: bool = False


POSITIONAL_ONLY = Capabilities()


class ByteSource(Protocol):
    """Where a file's bytes come from (see the module docstring)."""

    path: str
    size: int

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def stamp(self) -> Stamp: ...

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        """``length`` bytes at ``offset``; :class:`~ztviewer.codec.errors.OutOfBounds` outside the source,
        :class:`~ztviewer.codec.errors.SourceChanged` when it now ends inside the range."""
        ...

    def read_chunks(self, offset: int, length: int, chunk: int = 8 << 20, what: str = "range", *,
                    reuse: bool = False, progress: Progress | None = None, cancelled: CancelCheck | None = None,
                    **where: str | None) -> Iterator[bytes | memoryview]:
        """The range in consecutive chunks of at most ``chunk`` bytes (with ``reuse``, each valid only until the
        next is asked for); ``progress(n)`` after each, ``cancelled()`` polled before each."""
        ...

    def changed(self) -> str | None:
        """How the source differs from when it was opened (what the user is told), or ``None``."""
        ...
