"""Encoder for ``zt.zstd-seekable/1`` (the zstd seekable format, as the zTensor v2 profile constrains it).

The decoded stream is cut into frames of :data:`FRAME_SIZE` decoded bytes (the last one shorter), each an
independent zstd frame with a content checksum; then comes the seek table, a skippable frame
(magic ``0x184D2A5E``, u32 size) holding one ``(compressed u32, decoded u32)`` entry per frame, the frame
count (u32), a descriptor byte (0: no checksum column) and the seekable magic ``0x8F92EAB1``. All integers
are little-endian. Input arrives in chunks of any size and at most one frame is held in memory. The
magic numbers and struct layouts are the reader's (:mod:`..zstd_seekable`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import zstandard

from ..zstd_seekable import ENTRY, FOOTER, MAX_FRAME, SEEKABLE_MAGIC, SKIPPABLE_HEADER, SKIPPABLE_MAGIC

FRAME_SIZE = 1 << 20
DEFAULT_LEVEL = 3

Buffer = bytes | bytearray | memoryview


class SeekableEncoder:
    """Feeds decoded bytes in, hands encoded bytes to ``emit`` frame by frame.

    Parameters
    ----------
    emit:
        Called with each encoded piece (a frame, then the seek table) and the decoded bytes it accounts for.
    level:
        zstd compression level.
    frame_size:
        Decoded bytes per frame (every frame but the last); at most 16 MiB (profile rule).
    """

    def __init__(self, emit: Callable[[bytes, int], None], level: int | None = None,
                 frame_size: int = FRAME_SIZE) -> None:
        if not 0 < frame_size <= MAX_FRAME:
            raise ValueError(f"frame size {frame_size} outside 1..{MAX_FRAME}")
        self._emit = emit
        self._compressor = zstandard.ZstdCompressor(level=DEFAULT_LEVEL if level is None else level,
                                                    write_checksum=True, write_content_size=True)
        self._frame_size = frame_size
        self._pending = bytearray()
        self._entries: list[tuple[int, int]] = []
        self.decoded_length = 0
        self.encoded_length = 0

    def write(self, data: Buffer) -> None:
        view = memoryview(data).cast("B")
        self.decoded_length += len(view)
        while view:
            if not self._pending and len(view) >= self._frame_size:
                self._frame(view[:self._frame_size])
                view = view[self._frame_size:]
                continue
            take = min(len(view), self._frame_size - len(self._pending))
            self._pending += view[:take]
            view = view[take:]
            if len(self._pending) == self._frame_size:
                self._frame(self._pending)
                self._pending = bytearray()

    def _frame(self, decoded: Buffer) -> None:
        frame = self._compressor.compress(decoded)
        self._entries.append((len(frame), len(decoded)))
        self.encoded_length += len(frame)
        self._emit(frame, len(decoded))

    def close(self) -> None:
        """Write the last (short) frame and the seek table."""
        if self._pending:
            self._frame(self._pending)
            self._pending = bytearray()
        table = seek_table(self._entries)
        self.encoded_length += len(table)
        self._emit(table, 0)


def seek_table(entries: Iterable[tuple[int, int]]) -> bytes:
    """The seek table (skippable frame + seekable footer) for ``(compressed, decoded)`` frame sizes."""
    rows = list(entries)
    body = b"".join(ENTRY.pack(compressed, decoded) for compressed, decoded in rows)
    body += FOOTER.pack(len(rows), 0, SEEKABLE_MAGIC)
    return SKIPPABLE_HEADER.pack(SKIPPABLE_MAGIC, len(body)) + body


def encode(decoded: Buffer, level: int | None = None, frame_size: int = FRAME_SIZE) -> bytes:
    """The whole encoded stream of ``decoded`` (for small parts and tests)."""
    pieces: list[bytes] = []
    encoder = SeekableEncoder(lambda piece, _work: pieces.append(piece), level, frame_size)
    encoder.write(decoded)
    encoder.close()
    return b"".join(pieces)
