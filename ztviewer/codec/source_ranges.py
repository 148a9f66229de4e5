"""A range of a :class:`~.source.Source` read as a buffer to slice (:class:`StoredRange`) or as a stream for
decompressors (:class:`RangeReader`), both with positional reads: never a view of the file's map."""
from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # (a protocol class costs some 0.1 ms to create at start-up)
    class RangeSource(Protocol):
        """What :class:`StoredRange` reads from (a :class:`~.source.Source`)."""

        def check_range(self, offset: int, length: int, what: str = "range", **where: str | None) -> None: ...
        def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes: ...


class StoredRange:
    """``length`` bytes at ``offset`` of a source, sliced like a buffer but read with positional reads when a
    slice is asked for (a copy: what is kept for later is never a view of the map, which a truncation of the
    file would make fatal to touch). A slice past the file's new end raises :class:`SourceChanged`."""

    def __init__(self, source: RangeSource, offset: int, length: int, what: str = "range", **where: str | None
                 ) -> None:
        source.check_range(offset, length, what, **where)
        self.source, self.offset, self.length, self.what, self.where = source, offset, length, what, where

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, key: slice, /) -> bytes:
        start, stop, step = key.indices(self.length)
        if step != 1:
            raise ValueError("only contiguous slices are read")
        return self.source.read(self.offset + start, max(0, stop - start), self.what, **self.where)


class RangeReader(io.RawIOBase):
    """A read-only stream over chunks (of :meth:`Source.read_chunks`), for ``zstandard`` stream readers. What
    :meth:`read` returns is valid until the next call (the chunks may share one buffer): a decompressor asks
    for more input only once it has consumed the last."""

    def __init__(self, chunks: Iterator[bytes | memoryview]) -> None:
        super().__init__()
        self._chunks = chunks
        self._pending = memoryview(b"")

    def close(self) -> None:
        """Close the stream and the chunks' generator (a reader thread behind it stops)."""
        stop = getattr(self._chunks, "close", None)
        if stop is not None:
            stop()
        super().close()

    def readable(self) -> bool:
        return True

    def readinto(self, target: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk).cast("B")
        n = min(len(target), len(self._pending))
        memoryview(target).cast("B")[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def read(self, size: int = -1) -> bytes | memoryview:
        """Up to ``size`` bytes as a view of the chunk read last (no copy; ``zstandard`` reads this way)."""
        if size is None or size < 0:
            return self.readall()
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return b""
            self._pending = memoryview(chunk).cast("B")
        part = self._pending[:size]
        self._pending = self._pending[size:]
        return part
