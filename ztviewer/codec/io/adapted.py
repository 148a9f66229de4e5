"""Any object implementing the :class:`~.protocol.ByteSource` protocol, given what readers build on it."""
from __future__ import annotations

from collections.abc import Iterator

from .base import CHUNK, Source
from .protocol import POSITIONAL_ONLY, ByteSource, CancelCheck, Progress, Stamp


class AdaptedSource(Source):
    """``inner`` read through its protocol alone: no views of its memory, no descriptor, whatever it declares
    (the protocol does not promise the methods those capabilities would need)."""

    capabilities = POSITIONAL_ONLY

    def __init__(self, inner: ByteSource) -> None:
        self.inner = inner
        self.path, self.size = inner.path, inner.size

    @property
    def stamp(self) -> Stamp:
        return self.inner.stamp

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        self.check_range(offset, length, what, **where)
        return self.inner.read(offset, length, what, **where)

    def read_chunks(self, offset: int, length: int, chunk: int = CHUNK, what: str = "range", *,
                    reuse: bool = False, progress: Progress | None = None, cancelled: CancelCheck | None = None,
                    **where: str | None) -> Iterator[bytes | memoryview]:
        self.check_range(offset, length, what, **where)
        return self.inner.read_chunks(offset, length, chunk, what, reuse=reuse, progress=progress,
                                      cancelled=cancelled, **where)

    def bytes_changed(self, within: int | None = None) -> str | None:
        return self.inner.changed()


def as_source(source: ByteSource | Source) -> Source:
    """``source`` itself when it is a :class:`Source`, else adapted to one."""
    return source if isinstance(source, Source) else AdaptedSource(source)
