"""The zstd seekable format as profile ``zt.zstd-seekable/1`` constrains it: independent zstd frames, each with
a content checksum and at most 16 MiB of content, all but the last of equal content size, followed by a
skippable frame holding the seek table.

:class:`SeekableStream` parses and validates the seek table once (bounded work: the entry count is checked
against the stream's size before anything is allocated, the entries are checked as arrays, and a :class:`Frame` is built
only when asked for: a table may list millions), then decodes any byte range of the decoded
stream by decompressing only the frames that cover it. Each frame's output is bounded by its declared size:
a frame that would produce more is an error at its first surplus byte, never an allocation.
"""
from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, overload

import numpy as np

from .errors import Cancelled, DecodeError

SKIPPABLE_MAGIC = 0x184D2A5E
SEEKABLE_MAGIC = 0x8F92EAB1
MAX_FRAME = 16 << 20
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SKIPPABLE_HEADER = struct.Struct("<II")  # skippable magic, size of what follows
FOOTER = struct.Struct("<IBI")  # number of frames, descriptor, seekable magic
ENTRY = struct.Struct("<II")  # stored (compressed) length, decoded length; the writer omits the checksum column
CHECKSUM_COLUMN = 0x80  # descriptor bit: each entry also holds a u32 checksum
RULE = ("encoding (v2 §5.3, zt.zstd-seekable/1): zstd frames with checksums, a valid seek table, equal frames "
        "of at most 16 MiB, exactly decoded_length bytes")


class StoredBytes(Protocol):
    """A part's stored bytes: a buffer, or a range of a file read when sliced (:class:`.source_ranges.StoredRange`)."""

    def __len__(self) -> int: ...

    def __getitem__(self, key: slice, /) -> bytes | memoryview: ...


@dataclass(frozen=True, slots=True)
class Frame:
    stored_offset: int  # within the encoded stream
    stored_length: int
    decoded_offset: int
    decoded_length: int


class FrameTable(Sequence[Frame]):
    """The frames of a validated seek table as one array of stored end offsets (8 bytes a frame); every frame
    but the last decodes to ``frame_size`` bytes."""

    def __init__(self, stored_ends: np.ndarray, frame_size: int, last_decoded: int) -> None:
        self._ends = stored_ends
        self._frame_size = frame_size
        self._last_decoded = last_decoded

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> Frame: ...

    @overload
    def __getitem__(self, index: slice) -> list[Frame]: ...

    def __getitem__(self, index: int | slice) -> Frame | list[Frame]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        count = len(self._ends)
        if not -count <= index < count:
            raise IndexError(f"frame {index} of {count}")
        index %= count
        start = int(self._ends[index - 1]) if index else 0
        decoded = self._frame_size if index < count - 1 else self._last_decoded
        return Frame(start, int(self._ends[index]) - start, index * self._frame_size, decoded)


@dataclass(frozen=True, slots=True)
class Footer:
    """The seekable footer (a stream's last 9 bytes) and the seek table it implies."""

    count: int
    entry_size: int
    table_length: int  # the whole skippable frame: its header, the entries and the footer

    def table_start(self, stored_length: int) -> int:
        return stored_length - self.table_length


def parse_footer(tail: bytes | memoryview, stored_length: int) -> Footer:
    """The footer in ``tail`` (the stream's last bytes, at least 9); raises ``ValueError`` saying what is wrong
    when they are not a seekable footer or its table would not fit in ``stored_length`` bytes."""
    if len(tail) < FOOTER.size or stored_length < SKIPPABLE_HEADER.size + FOOTER.size:
        raise ValueError(f"{stored_length} bytes is too short for a seek table")
    count, descriptor, magic = FOOTER.unpack_from(tail, len(tail) - FOOTER.size)
    if magic != SEEKABLE_MAGIC:
        raise ValueError("the stream does not end with the seekable footer magic")
    if descriptor & ~CHECKSUM_COLUMN:
        raise ValueError(f"reserved descriptor bits set (0x{descriptor:02x})")
    entry_size = ENTRY.size + (4 if descriptor & CHECKSUM_COLUMN else 0)
    length = SKIPPABLE_HEADER.size + count * entry_size + FOOTER.size
    if length > stored_length:
        raise ValueError(f"the seek table declares {count:,} frames, more than {stored_length:,} stored bytes "
                         "can hold")
    return Footer(count, entry_size, length)


def seek_table_length(tail: bytes | memoryview, stored_length: int) -> int | None:
    """Bytes the seek table (its skippable frame) takes at the end of a stored stream, from the stream's
    last 9 bytes alone; ``None`` when they are not a seekable footer or the table would not fit."""
    try:
        return parse_footer(tail, stored_length).table_length
    except ValueError:
        return None


class SeekableStream:
    """A validated seekable stream over ``stored`` (the part's encoded bytes).

    ``decode_frame`` is the hook that decompresses one frame (tests wrap it to count frames).
    """

    def __init__(self, stored: StoredBytes | bytes, decoded_length: int, *,
                 where: dict[str, object] | None = None) -> None:
        self.stored: StoredBytes = memoryview(stored) if isinstance(stored, (bytes, bytearray)) else stored
        self.decoded_length = decoded_length
        self.where = where or {}
        self.frames = self._parse_table()
        self.frame_size = self.frames[0].decoded_length if self.frames else 0

    def _fail(self, message: str) -> DecodeError:
        return DecodeError(f"zt.zstd-seekable/1: {message}", rule=RULE, **self.where)  # type: ignore[arg-type]

    def _parse_table(self) -> FrameTable:
        n = len(self.stored)
        try:
            footer = parse_footer(self.stored[n - FOOTER.size:n] if n >= FOOTER.size else b"", n)
        except ValueError as exc:
            raise self._fail(str(exc)) from None
        count = footer.count
        if count - 1 > self.decoded_length:  # before reading it: frames but the last hold >= 1 byte each
            raise self._fail(f"the seek table declares {count:,} frames, more than decoded_length "
                             f"{self.decoded_length:,} can fill (every frame but the last decodes to at least 1 byte)")
        table_start = footer.table_start(n)
        data = self.stored[table_start:n - FOOTER.size]  # the skippable frame's header and the entries: one read
        skippable, size = SKIPPABLE_HEADER.unpack_from(data, 0)
        if skippable != SKIPPABLE_MAGIC or size != footer.table_length - SKIPPABLE_HEADER.size:
            raise self._fail("malformed seek table skippable frame")
        entries = np.frombuffer(data, "<u4", offset=SKIPPABLE_HEADER.size).reshape(count, footer.entry_size // 4)
        decoded = entries[:, 1]
        too_large = np.flatnonzero(decoded > MAX_FRAME)
        if too_large.size:
            k = int(too_large[0])
            raise self._fail(f"frame {k} declares {int(decoded[k]):,} decoded bytes, above 16 MiB")
        decoded_total = int(decoded.sum(dtype=np.uint64))
        if decoded_total != self.decoded_length:
            raise self._fail(f"the seek table totals {decoded_total:,} decoded bytes, decoded_length is "
                             f"{self.decoded_length:,}")
        stored_ends = np.cumsum(entries[:, 0], dtype=np.int64)
        stored_total = int(stored_ends[-1]) if count else 0
        if stored_total != table_start:
            raise self._fail(f"the frames cover {stored_total:,} bytes, the seek table starts at {table_start:,}")
        first = int(decoded[0]) if count else 0
        if count > 1 and bool(np.any(decoded[:-1] != first)):
            raise self._fail("frames other than the last must have equal decoded sizes")
        if count > 1 and first == 0:
            raise self._fail("frames of zero decoded bytes cannot index a stream")
        return FrameTable(stored_ends, first, int(decoded[-1]) if count else 0)

    def decode_frame(self, index: int) -> bytes:
        """Decompress frame ``index``, checking its checksum flag and its exact size."""
        frame = self.frames[index]
        raw = self.stored[frame.stored_offset:frame.stored_offset + frame.stored_length]
        import zstandard  # here: listing a file (which names this encoding) decompresses nothing

        try:
            params = zstandard.get_frame_parameters(raw)
        except zstandard.ZstdError as exc:
            raise self._fail(f"frame {index} has no valid zstd header: {exc}") from None
        if not params.has_checksum:
            raise self._fail(f"frame {index} carries no content checksum")
        if params.content_size not in (zstandard.CONTENTSIZE_UNKNOWN, frame.decoded_length):
            raise self._fail(f"frame {index} header declares {params.content_size:,} bytes, the seek table "
                             f"{frame.decoded_length:,}")
        out = bytearray(frame.decoded_length + 1)
        filled = 0
        try:
            with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=False, closefd=False) as reader:
                view = memoryview(out)
                while filled < len(out):
                    got = reader.readinto(view[filled:])
                    if not got:
                        break
                    filled += got
        except zstandard.ZstdError as exc:
            raise self._fail(f"frame {index} is corrupt: {exc}") from None
        if filled != frame.decoded_length:
            more = "more than" if filled > frame.decoded_length else f"{filled:,} bytes, not"
            raise self._fail(f"frame {index} decodes to {more} the {frame.decoded_length:,} its entry declares")
        return bytes(memoryview(out)[:frame.decoded_length])

    def frames_for(self, offset: int, length: int) -> range:
        """Indices of the frames covering decoded bytes ``[offset, offset + length)``."""
        if not self.frames or length <= 0:
            return range(0)
        size = self.frame_size or 1
        first = min(offset // size, len(self.frames) - 1)
        last = min((offset + length - 1) // size, len(self.frames) - 1)
        return range(first, last + 1)

    def read_range(self, offset: int, length: int) -> bytes:
        """Decoded bytes ``[offset, offset + length)`` (clipped to the stream), decompressing only the frames
        that cover them."""
        if offset < 0 or length < 0:
            raise ValueError("negative offset or length")
        length = max(0, min(length, self.decoded_length - offset))
        pieces = []
        for index in self.frames_for(offset, length):
            frame = self.frames[index]
            data = self.decode_frame(index)
            lo = max(offset, frame.decoded_offset) - frame.decoded_offset
            hi = min(offset + length, frame.decoded_offset + frame.decoded_length) - frame.decoded_offset
            pieces.append(data[lo:hi])
        return b"".join(pieces)

    def iter_frames(self, cancelled: Callable[[], bool] | None = None) -> Iterator[bytes]:
        """Every frame's decoded bytes in order."""
        for index in range(len(self.frames)):
            if cancelled is not None and cancelled():
                raise Cancelled()
            yield self.decode_frame(index)
