"""The zstd paths of :mod:`.decode`: a zstd part streamed through reused output buffers, or decoded straight into
one buffer of its expected size (its stored bytes read ahead by a thread when large), and a
``zt.zstd-seekable/1`` part frame by frame. Output never exceeds the expected size (or the cap when none is known):
a decompression bomb is stopped at its first surplus byte."""
from __future__ import annotations

from collections.abc import Iterator
from typing import IO, cast

import numpy as np
import zstandard

from .decode_rules import CHUNK, CancelCheck, check_data, spend, where
from .errors import Cancelled, CodecError, DecodeError, DecodeLimitExceeded
from .model import Component, Tensor
from .readahead import read_ahead
from .source import Source
from .source_ranges import RangeReader
from .zstd_seekable import SeekableStream

#: zstd parts stored in this many bytes or more are read ahead of their decompressor (:func:`_stored_stream`)
AHEAD_BYTES = 8 << 20
#: in chunks this large: fewer hand-overs between the threads, still in the CPU's cache when decompressed
AHEAD_CHUNK = 1 << 20
_FIRST_UNSIZED_CHUNK = 64 << 10


def _stored_stream(source: Source, tensor: Tensor, component: Component, ahead: bool = False) -> RangeReader:
    """The stored bytes as a stream of positional reads (a truncated file is an error, never SIGBUS). With
    ``ahead``, a part of :data:`AHEAD_BYTES` or more is read by a thread one ring of chunks ahead of the
    decompressor, which then never waits for the copy out of the page cache (close the stream to stop it)."""
    if ahead and component.length >= AHEAD_BYTES:
        source.check_range(component.offset, component.length, "component", tensor=tensor.name,
                           component=component.role)
        return RangeReader(read_ahead(source, component.offset, component.length, chunk=AHEAD_CHUNK,
                                      from_map=False))
    return source.reader(component.offset, component.length, "component", tensor=tensor.name,
                         component=component.role)


def _open_zstd(stored: memoryview | RangeReader, read_size: int = zstandard.DECOMPRESSION_RECOMMENDED_INPUT_SIZE
               ) -> zstandard.ZstdDecompressionReader:
    source = stored if isinstance(stored, memoryview) else cast(IO[bytes], stored)
    return zstandard.ZstdDecompressor().stream_reader(source, read_size, read_across_frames=True, closefd=False)


def _fill(reader: zstandard.ZstdDecompressionReader, target: memoryview) -> int:
    """Read until ``target`` is full or the stream ends; the number of bytes read."""
    filled = 0
    while filled < len(target):
        got = reader.readinto(target[filled:])
        if not got:
            break
        filled += got
    return filled


def _zstd_error(exc: Exception, produced: int, tensor: Tensor, component: Component) -> DecodeError:
    return DecodeError(f"zstd stream is corrupt after {produced:,} decoded bytes: {exc}",
                       rule="valid zstd frames", **where(tensor, component))


def _check_end(reader: zstandard.ZstdDecompressionReader, produced: int, expected: int | None, cap: int,
               tensor: Tensor, component: Component) -> None:
    """After ``produced`` bytes: the stream must end exactly there (or below the cap when no size is known)."""
    if reader.read(1):
        raise _overrun(tensor, component, expected, cap)
    if expected is not None and produced != expected:
        raise DecodeError(f"zstd stream decodes to {produced:,} bytes, expected {expected:,}",
                          rule="decoded size = shape × dtype size", **where(tensor, component))


def _overrun(tensor: Tensor, component: Component, expected: int | None, cap: int) -> DecodeError:
    if expected is None:
        return DecodeLimitExceeded(
            f"zstd stream decodes to more than the decode limit of {cap:,} bytes (set ZTVIEWER_MAX_DECODED)",
            rule="decompression output cap", **where(tensor, component))
    return DecodeError(f"zstd stream decodes to more than the expected {expected:,} bytes",
                       rule="decoded size = shape × dtype size", **where(tensor, component))


def iter_zstd(source: Source, tensor: Tensor, component: Component, *, expected: int | None, limit: int,
              align: int, chunk: int, buffers: int, cancelled: CancelCheck | None) -> Iterator[memoryview]:
    """A zstd part's decoded bytes through ``buffers`` reused buffers of at most ``chunk`` bytes (see
    :func:`~.decode.iter_decoded`); the mapped pages read so far are given back after each chunk."""
    cap = limit if expected is None else expected
    size = min(chunk, max(align, cap - cap % align))
    if expected is None:  # unknown output: start small, double while the stream keeps going
        size = min(size, max(align, _FIRST_UNSIZED_CHUNK - _FIRST_UNSIZED_CHUNK % align))
    ring: list[memoryview] = []
    turn = 0
    produced = 0
    try:
        with _open_zstd(_stored_stream(source, tensor, component)) as reader:
            while produced < cap:
                if cancelled is not None and cancelled():
                    raise Cancelled()
                if expected is None and produced >= 2 * size and size < chunk:
                    size = min(chunk, 2 * size)
                if turn == len(ring):
                    ring.append(memoryview(bytearray(size)))
                elif len(ring[turn]) < size:
                    ring[turn] = memoryview(bytearray(size))
                buffer = ring[turn]
                turn = (turn + 1) % max(1, buffers)
                got = _fill(reader, buffer[:min(len(buffer), cap - produced)])
                if not got:
                    break
                produced += got
                if got % align:
                    raise DecodeError(f"decoded size {produced:,} is not a multiple of the element size {align}",
                                      rule="decoded size = elements × dtype size", **where(tensor, component))
                spend(tensor, component, got)
                yield buffer[:got]
                source.drop_pages(component.offset, component.length)  # the part read so far (the rest: no-op)
            _check_end(reader, produced, expected, cap, tensor, component)
    except zstandard.ZstdError as exc:
        raise _zstd_error(exc, produced, tensor, component) from None


def zstd_bytes(source: Source, tensor: Tensor, component: Component, expected: int,
               cancelled: CancelCheck | None) -> memoryview:
    """A zstd part decoded straight into one buffer of ``expected`` bytes (no zero fill, no copy)."""
    out = np.empty(expected, dtype=np.uint8).data
    produced = 0
    stream = _stored_stream(source, tensor, component, ahead=True)
    try:
        with _open_zstd(stream, AHEAD_CHUNK) as reader:  # the input asked for a chunk at a time
            while produced < expected:
                if cancelled is not None and cancelled():
                    raise Cancelled()
                got = _fill(reader, out[produced:produced + CHUNK])
                if not got:
                    break
                produced += got
                spend(tensor, component, got)
            _check_end(reader, produced, expected, expected, tensor, component)
    except zstandard.ZstdError as exc:
        raise _zstd_error(exc, produced, tensor, component) from None
    except CodecError as exc:  # the stored bytes ended early: the file shrank
        raise exc.located(tensor=tensor.name, component=component.role) from None
    finally:
        stream.close()
    return out


def iter_seekable(stream: SeekableStream, tensor: Tensor, component: Component, align: int, checked: bool,
                  cancelled: CancelCheck | None) -> Iterator[memoryview]:
    """Frame by frame; bytes left over when a frame size is not a multiple of ``align`` join the next."""
    carry = b""
    produced = 0
    for data in stream.iter_frames(cancelled):
        if checked:
            check_data(tensor, component, data, produced, stream.decoded_length)
        produced += len(data)
        if carry:
            data, carry = carry + data, b""
        cut = len(data) - len(data) % align
        if cut < len(data):
            data, carry = data[:cut], data[cut:]
        if data:
            yield memoryview(data)
    if carry:
        raise DecodeError(f"decoded size {produced:,} is not a multiple of the element size {align}",
                          rule="decoded size = elements × dtype size", **where(tensor, component))


def seekable_bytes(stream: SeekableStream, tensor: Tensor, component: Component, cancelled: CancelCheck | None
                   ) -> memoryview:
    """All frames of a ``zt.zstd-seekable/1`` part decoded into one buffer."""
    out = np.empty(stream.decoded_length, dtype=np.uint8)
    position = 0
    for data in stream.iter_frames(cancelled):
        out[position:position + len(data)] = np.frombuffer(data, dtype=np.uint8)
        position += len(data)
    view = out.data
    if component.extra and "type" in component.extra:
        check_data(tensor, component, view, 0, len(view))
    return view
