"""Bytes in memory behind the byte-source protocol (tests, fuzzing, decoded members of containers)."""
from __future__ import annotations

from collections.abc import Iterator

from .base import CHUNK, Source, reporting
from .protocol import CancelCheck, Capabilities, Progress

IN_MEMORY = Capabilities(views=True)


class InMemorySource(Source):
    """``data`` as a source: reads and views are slices of one immutable copy; it never changes underneath."""

    capabilities = IN_MEMORY

    def __init__(self, data: bytes | bytearray | memoryview, path: str = "<memory>") -> None:
        self.path = path
        self._data = memoryview(bytes(data))
        self.size = len(self._data)

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        self.check_range(offset, length, what, **where)
        return bytes(self._data[offset:offset + length])

    def read_chunks(self, offset: int, length: int, chunk: int = CHUNK, what: str = "range", *,
                    reuse: bool = False, progress: Progress | None = None, cancelled: CancelCheck | None = None,
                    **where: str | None) -> Iterator[bytes | memoryview]:
        self.check_range(offset, length, what, **where)
        parts = (self._data[start:min(start + chunk, offset + length)]
                 for start in range(offset, offset + length, chunk))
        return reporting(parts, progress, cancelled)

    def view(self, offset: int, length: int, what: str = "range", **where: str | None) -> memoryview:
        self.check_range(offset, length, what, **where)
        return self._data[offset:offset + length]
