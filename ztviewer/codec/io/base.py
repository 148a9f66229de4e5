"""What every reader asks of a source, built on the :class:`~.protocol.ByteSource` protocol alone.

:class:`Source` is the base of every source: an implementation provides ``size``, ``path``, :attr:`Source.stamp`
and :meth:`Source.read` (and declares its :class:`~.protocol.Capabilities`); bounds checks, chunked reads with
progress and cancel, hex-view windows, stream readers and views follow from them. A source that cannot hand out
zero-copy views gives a :meth:`Source.view` of a copy read for that range alone (what a reader needs of a remote
file: never more than the range asked for, never the whole file).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Self

from ..errors import Cancelled, DecodeLimitExceeded, OutOfBounds, SourceChanged
from ..source_ranges import RangeReader
from .protocol import POSITIONAL_ONLY, CancelCheck, Capabilities, Progress, Stamp

#: chunks of :meth:`Source.read_chunks` unless told otherwise
CHUNK = 8 << 20
CHANGED_RULE = "an open file must not change under the reader"


def ended(path: str, at: int, size: int, what: str, where: dict[str, str | None]) -> SourceChanged:
    """The error of a read finding ``path`` ending at byte ``at``, inside the range of ``what`` being read."""
    return SourceChanged(f"{path} ends at byte {at:,} while reading {what}; it was {size:,} bytes when opened; "
                         "reload it", offset=at, rule=CHANGED_RULE, **where)


def reporting(chunks: Iterator[bytes | memoryview], progress: Progress | None,
              cancelled: CancelCheck | None) -> Iterator[bytes | memoryview]:
    """``chunks`` with ``cancelled()`` polled before each (raising :class:`Cancelled`) and ``progress(n)`` after."""
    if progress is None and cancelled is None:
        yield from chunks
        return
    while True:
        if cancelled is not None and cancelled():
            raise Cancelled()
        part = next(chunks, None)
        if part is None:
            return
        yield part
        if progress is not None:
            progress(len(part))


class Source:
    """A file's bytes: the protocol's reads plus what readers build on them, every range checked against
    :attr:`size` (offset and rule in the error). Subclasses implement :meth:`read` and :attr:`stamp`."""

    path: str = "<source>"
    size: int = 0
    capabilities: Capabilities = POSITIONAL_ONLY

    @property
    def stamp(self) -> Stamp:
        return self.size, 0, 0

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        raise NotImplementedError

    def read_chunks(self, offset: int, length: int, chunk: int = CHUNK, what: str = "range", *,
                    reuse: bool = False, progress: Progress | None = None, cancelled: CancelCheck | None = None,
                    **where: str | None) -> Iterator[bytes | memoryview]:
        """``length`` bytes at ``offset`` in chunks of at most ``chunk``, each read when asked for."""
        self.check_range(offset, length, what, **where)
        parts = (self.read(start, min(chunk, offset + length - start), what, **where)
                 for start in range(offset, offset + length, chunk))
        return reporting(parts, progress, cancelled)

    def check_range(self, offset: int, length: int, what: str = "range", **where: str | None) -> None:
        """Raise :class:`OutOfBounds` unless ``[offset, offset+length)`` lies inside the source."""
        if offset < 0 or length < 0:
            raise OutOfBounds(f"{what} has a negative offset or length ({offset}, {length})",
                              offset=offset, rule="byte ranges must lie inside the file", **where)
        if offset + length > self.size:
            raise OutOfBounds(
                f"{what} [{offset}, {offset + length}) runs past the end of the file ({self.size} bytes)",
                offset=offset, rule="offset + length <= file size", **where,
            )

    def view(self, offset: int, length: int, what: str = "range", **where: str | None) -> memoryview:
        """``length`` bytes at ``offset`` as a buffer: zero-copy where :attr:`capabilities` say ``views``, else a
        read-only copy of that range alone, read in chunks into one buffer (:class:`DecodeLimitExceeded` where it
        does not fit in memory)."""
        self.check_range(offset, length, what, **where)
        if length <= CHUNK:
            return memoryview(self.read(offset, length, what, **where))
        try:
            out = bytearray(length)
        except MemoryError:
            raise DecodeLimitExceeded(f"{what} of {length:,} bytes does not fit in memory, and {self.path} cannot "
                                      "be mapped", offset=offset, rule="bytes read fit in memory", **where) from None
        position = 0
        for part in self.read_chunks(offset, length, CHUNK, what, reuse=True, progress=None, cancelled=None,
                                     **where):
            out[position:position + len(part)] = part
            position += len(part)
        return memoryview(out).toreadonly()

    def view_within(self, within: int | None, offset: int, length: int, what: str = "range",
                    **where: str | None) -> memoryview:
        """:meth:`view` of a range of the first ``within`` bytes, refused only when those changed (a prefix of the
        source: an append after it changes nothing there)."""
        return self.view(offset, length, what, **where)

    def reader(self, offset: int, length: int, what: str = "range", **where: str | None) -> RangeReader:
        """A file-like reader of ``[offset, offset + length)`` (for decompressors)."""
        return RangeReader(self.read_chunks(offset, length, 1 << 17, what, reuse=True, progress=None, cancelled=None,
                                            **where))

    def window(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset``, clipped at the end (for hex views)."""
        offset = max(0, min(offset, self.size))
        return self.read(offset, min(self.size, offset + max(0, length)) - offset, "window")

    def head(self, n: int) -> bytes:
        return self.window(0, n)

    def tail(self, n: int) -> bytes:
        start = max(0, self.size - n)
        return self.window(start, self.size - start)

    # -- changes underneath -------------------------------------------------------------------------------
    def changed(self) -> str | None:
        """How the source differs from when it was opened, or ``None``: its bytes (:meth:`bytes_changed`), else its
        name (:meth:`path_changed`). What the app tells the user about and offers to reload."""
        return self.bytes_changed() or self.path_changed()

    def bytes_changed(self, within: int | None = None) -> str | None:
        """How the bytes read (with ``within``, only the first ``within`` of them) differ from when the source
        was opened, or ``None`` (also where that cannot be told)."""
        return None

    def path_changed(self) -> str | None:
        """Whether the name no longer names the bytes open (another file there, none), or ``None``."""
        return None

    def require_unchanged(self, within: int | None = None) -> None:
        """Raise :class:`SourceChanged` when the bytes read (with ``within``, its first ``within``) are no longer
        the ones the model was read from."""
        why = self.bytes_changed(within)
        if why is not None:
            raise SourceChanged(f"{self.path} changed on disk since it was opened: {why}; reload it",
                                rule=CHANGED_RULE)

    def read_prefix_only(self, size: int) -> None:
        """Only the first ``size`` bytes are read from now on (an earlier generation of an appended file): a
        change after them no longer counts as a change of its bytes."""

    # -- capabilities: what a source without them answers ---------------------------------------------------
    def fileno(self) -> int | None:
        """The OS descriptor of the file (``capabilities.descriptor``), else ``None``."""
        return None

    def reader_fd(self) -> int | None:
        """A descriptor of its own for positional reads from another thread, which the caller closes
        (``capabilities.descriptor``), else ``None``."""
        return None

    def drop_pages(self, offset: int, length: int) -> None:
        """Give back the mapped pages of a range this process has finished reading (``capabilities.mapped``)."""

    def release(self) -> None:
        """Let go of what the source holds open for now; the next access opens it again."""

    def close(self) -> None:
        """Let go of what the source holds; views handed out stay valid until collected."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
