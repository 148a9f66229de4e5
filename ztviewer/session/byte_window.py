"""What a byte view shows and searches: a file's :class:`~ztviewer.codec.source.Source`, or the decoded bytes of a
compressed part (:class:`~ztviewer.session.decoded_part.DecodedPart`), read a window at a time."""
from __future__ import annotations

from typing import Protocol


class ByteWindow(Protocol):
    @property
    def path(self) -> str:
        """The file the bytes are read from (for messages)."""
        ...

    @property
    def size(self) -> int: ...

    def window(self, offset: int, length: int) -> bytes: ...
