"""Decoding stored components into bytes and numpy arrays.

What these functions return is memory of its own (raw data copied with positional reads), safe to keep
whatever happens to the file later; a zero-copy view of the file's map is asked for explicitly
(``mapped=True``: only as good as the file, see :func:`component_bytes`). zstd data is streamed into a preallocated
buffer whose size is known before decoding starts (the tensor's logical size, or ``uncompressed_length``);
when no size is known the output grows up to ``decode_limit()``. Decoding never produces more than the
expected size, so a decompression bomb is stopped at its first surplus byte.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any, cast

import numpy as np
import zstandard

from .dtypes import DTYPES, PACKED_NIBBLES, to_float32, unpack_nibbles
from .errors import (
    Cancelled,
    CodecError,
    DecodeError,
    DecodeLimitExceeded,
    FileDecodeBudgetSpent,
    UnsupportedLayout,
)
from .model import Component, Tensor, TensorFile
from .readahead import read_ahead
from .source import RangeReader, Source, StoredRange
from .zstd_seekable import ENCODING_ID, SeekableStream

SEEKABLE = ENCODING_ID

_DATA_RULE = "layout-data (v2 §5.2, App. A): the decoded data satisfies its layout and logical type rules"

CHUNK = 8 << 20
#: zstd parts stored in this many bytes or more are read ahead of their decompressor (:func:`_stored_stream`)
AHEAD_BYTES = 8 << 20
#: in chunks this large: fewer hand-overs between the threads, still in the CPU's cache when decompressed
AHEAD_CHUNK = 1 << 20
_FIRST_UNSIZED_CHUNK = 64 << 10
_DEFAULT_LIMIT = 4 << 30

CancelCheck = Callable[[], bool]


def env_bytes(name: str, default: int) -> int:
    """A byte count from environment variable ``name``; ``default`` when unset or not an integer."""
    value = os.environ.get(name)
    try:
        return int(value) if value else default
    except ValueError:
        return default


def decode_limit() -> int:
    """Largest decoded size of one compressed component (``ZTVIEWER_MAX_DECODED`` bytes, default 4 GiB)."""
    return env_bytes("ZTVIEWER_MAX_DECODED", _DEFAULT_LIMIT)


def _where(tensor: Tensor, component: Component) -> dict[str, Any]:
    return {"tensor": tensor.name, "component": component.role, "offset": component.offset}


def expected_length(tensor: Tensor, component: Component) -> int | None:
    """Decoded byte length of a component when the model determines it, else ``None``."""
    if component.uncompressed_length is not None:
        return component.uncompressed_length
    if not component.is_compressed:
        return component.length
    if tensor.layout == "dense" and component.role == "data" and tensor.extra.get("packed") is None:
        return tensor.dense_nbytes
    if tensor.layout == "sparse_csr" and component.role == "indptr" and len(tensor.shape) >= 1:
        return (tensor.shape[0] + 1) * 8
    shape = component.shape
    if shape is not None and component.dtype in DTYPES:
        size = DTYPES[component.dtype].itemsize
        for dim in shape:
            size *= dim
        return size
    return None


def _source(tf: TensorFile, tensor: Tensor, component: Component) -> Source:
    try:
        return tf.source_for(tensor, component)
    except CodecError:
        raise
    except ValueError as exc:  # the file holding the bytes (a shard) is not open
        raise DecodeError(str(exc), rule="the part's file is available", **_where(tensor, component)) from None


def stored_view(tf: TensorFile, tensor: Tensor, component: Component) -> memoryview:
    """The component's stored bytes (compressed if encoded), bounds-checked: a zero-copy view of the file's
    map, valid while the file is unchanged (see :func:`component_bytes` for what touching it later risks)."""
    return _source(tf, tensor, component).view(component.offset, component.length, "component",
                                               tensor=tensor.name, component=component.role)


def stored_range(tf: TensorFile, tensor: Tensor, component: Component) -> StoredRange:
    """The component's stored bytes, read with positional reads when sliced (safe to keep and slice later)."""
    return StoredRange(_source(tf, tensor, component), component.offset, component.length, "component",
                       tensor=tensor.name, component=component.role)


def _owned_stored(tf: TensorFile, tensor: Tensor, component: Component) -> memoryview:
    """The stored bytes copied into memory of their own with positional reads (a file truncated meanwhile is
    :class:`~.source.SourceChanged`, never SIGBUS)."""
    source = _source(tf, tensor, component)
    source.check_range(component.offset, component.length, "component", tensor=tensor.name, component=component.role)
    try:
        out = np.empty(component.length, dtype=np.uint8)
    except MemoryError:
        raise DecodeLimitExceeded(f"{component.length:,} bytes do not fit in memory; ask for a view of the file's map "
                                  "(mapped=True) or stream them", rule="decoded data fits in memory",
                                  **_where(tensor, component)) from None
    position = 0
    for part in source.read_chunks(component.offset, component.length, CHUNK, "component",
                                                           reuse=True, tensor=tensor.name, component=component.role):
        out[position:position + len(part)] = np.frombuffer(part, np.uint8)
        position += len(part)
    out.flags.writeable = False  # read-only, as a view of the map would be
    return out.data


def refuse_unsupported(tensor: Tensor, component: Component) -> None:
    """Raise :class:`UnsupportedLayout` for a component the reader marked structural-only (an unknown
    logical type or encoding): its bytes can be shown but never decoded or reinterpreted."""
    refusal = component.extra.get("refuse") if component.extra else None
    if refusal is not None:
        message, rule = refusal
        raise UnsupportedLayout(message, rule=rule, **_where(tensor, component))


def seekable_stream(tf: TensorFile, tensor: Tensor, component: Component) -> SeekableStream:
    """The validated seek table of a ``zt.zstd-seekable/1`` part, for random access to its decoded bytes
    (:meth:`SeekableStream.read_range`, frame by frame); raises :class:`DecodeError` for a bad table."""
    return _seekable(tf, tensor, component)


def _seekable(tf: TensorFile, tensor: Tensor, component: Component) -> SeekableStream:
    expected = component.uncompressed_length if component.uncompressed_length is not None else 0
    return SeekableStream(stored_range(tf, tensor, component), expected, where=_where(tensor, component))


def _check_data(tensor: Tensor, component: Component, chunk: memoryview | bytes, start: int, total: int) -> None:
    """Value rules of the logical types that have them (zTensor v2 App. A): bool bytes are 0 or 1; a packed
    f4_e2m1 part with an odd element count ends in a zero high nibble."""
    logical = component.extra.get("type") if component.extra else None
    if logical == "bool":
        bits = np.frombuffer(chunk, dtype=np.uint8)
        if bits.size and int(bits.max()) > 1:
            at = int(np.argmax(bits > 1))
            raise DecodeError(f"bool element {start + at} is 0x{int(bits[at]):02x}, not 0 or 1", rule=_DATA_RULE,
                              **_where(tensor, component))
    elif logical == "f4_e2m1" and start + len(chunk) == total and len(chunk):
        elements = component.extra.get("elements")
        if type(elements) is int and elements % 2 and memoryview(chunk)[-1] & 0xF0:
            raise DecodeError(f"the unused high nibble of the last byte is {memoryview(chunk)[-1] >> 4:#x}, not 0 "
                              f"({elements} packed f4_e2m1 elements)", rule=_DATA_RULE, **_where(tensor, component))


_BUDGET: ContextVar[list[int] | None] = ContextVar("ztviewer_file_decode_budget", default=None)


@contextmanager
def per_file_budget(total: int | None = None) -> Iterator[None]:
    """Count the bytes every zstd component decodes inside this block against one budget (default
    :func:`decode_limit`), so a pass over a whole file is capped per file, not per entry: a thousand entries
    naming one 4 GiB frame decode 4 GiB, not 4 TB. Past it, decoding raises :class:`FileDecodeBudgetSpent`."""
    token = _BUDGET.set([decode_limit() if total is None else total])
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _spend(tensor: Tensor, component: Component, n: int) -> None:
    left = _BUDGET.get()
    if left is None:
        return
    left[0] -= n
    if left[0] < 0:
        raise _budget_spent(tensor, component)


def _budget_spent(tensor: Tensor, component: Component) -> FileDecodeBudgetSpent:
    return FileDecodeBudgetSpent(
        f"this pass over the file has decoded {decode_limit():,} bytes, the per-file decode limit (set "
        "ZTVIEWER_MAX_DECODED to raise it)", rule="decoded bytes per file are capped", **_where(tensor, component))


def _check_size(tensor: Tensor, component: Component, expected: int | None, limit: int) -> None:
    if expected is not None and expected > limit:
        raise DecodeLimitExceeded(
            f"decoding would produce {expected:,} bytes, above the decode limit of {limit:,} bytes "
            "(set ZTVIEWER_MAX_DECODED to raise it)",
            rule="decompression output cap", **_where(tensor, component))
    left = _BUDGET.get()
    if left is not None and expected is not None and expected > left[0]:
        raise _budget_spent(tensor, component)


def _stored_stream(tf: TensorFile, tensor: Tensor, component: Component, ahead: bool = False) -> RangeReader:
    """The stored bytes as a stream of positional reads (a truncated file is an error, never SIGBUS). With
    ``ahead``, a part of :data:`AHEAD_BYTES` or more is read by a thread one ring of chunks ahead of the
    decompressor, which then never waits for the copy out of the page cache (close the stream to stop it)."""
    source = tf.source_for(tensor, component)
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
                       rule="valid zstd frames", **_where(tensor, component))


def _check_end(reader: zstandard.ZstdDecompressionReader, produced: int, expected: int | None, cap: int,
               tensor: Tensor, component: Component) -> None:
    """After ``produced`` bytes: the stream must end exactly there (or below the cap when no size is known)."""
    if reader.read(1):
        raise _overrun(tensor, component, expected, cap)
    if expected is not None and produced != expected:
        raise DecodeError(f"zstd stream decodes to {produced:,} bytes, expected {expected:,}",
                          rule="decoded size = shape × dtype size", **_where(tensor, component))


def iter_decoded(
    tf: TensorFile, tensor: Tensor, component: Component, *, align: int = 1, chunk: int = CHUNK,
    limit: int | None = None, cancelled: CancelCheck | None = None, buffers: int = 1,
) -> Iterator[memoryview]:
    """Stream the decoded bytes of a component in chunks whose sizes are multiples of ``align``.

    A chunk is only valid until ``buffers`` more are requested (zstd output goes to that many reused buffers in
    turn: with more than one, a consumer may still be writing a chunk while the next is decoded). When the next is
    requested, the mapped pages read so far are given back (:meth:`Source.drop_pages`; still readable), so
    streaming a tensor larger than memory keeps the resident size bounded. The total is
    checked against :func:`expected_length`: a stream that ends early or runs long raises
    :class:`DecodeError`; one that would exceed ``limit`` raises :class:`DecodeLimitExceeded`. Nothing
    larger than ``chunk`` (or the expected size, when smaller) is ever allocated.
    """
    refuse_unsupported(tensor, component)
    limit = decode_limit() if limit is None else limit
    expected = expected_length(tensor, component)
    source = tf.source_for(tensor, component)
    source.check_range(component.offset, component.length, "component", tensor=tensor.name,
                       component=component.role)
    chunk = max(align, chunk - chunk % align)
    checked = bool(component.extra) and "type" in component.extra
    if component.encoding == "raw":  # positional reads: a file truncated meanwhile is an error, not SIGBUS
        start = 0
        for part in source.read_chunks(component.offset, component.length, chunk, "component", tensor=tensor.name,
                                       component=component.role):
            if cancelled is not None and cancelled():
                raise Cancelled()
            if checked:
                _check_data(tensor, component, part, start, component.length)
            start += len(part)
            yield memoryview(part)
        return
    if component.encoding == SEEKABLE:
        _check_size(tensor, component, expected, limit)
        yield from _iter_seekable(tf, tensor, component, align, checked, cancelled)
        return
    if component.encoding != "zstd":
        raise DecodeError(f"unknown encoding {component.encoding!r}", rule="encoding is raw or zstd",
                          **_where(tensor, component))
    _check_size(tensor, component, expected, limit)
    cap = limit if expected is None else expected
    size = min(chunk, max(align, cap - cap % align))
    if expected is None:  # unknown output: start small, double while the stream keeps going
        size = min(size, max(align, _FIRST_UNSIZED_CHUNK - _FIRST_UNSIZED_CHUNK % align))
    ring: list[memoryview] = []
    turn = 0
    produced = 0
    try:
        with _open_zstd(_stored_stream(tf, tensor, component)) as reader:
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
                                      rule="decoded size = elements × dtype size", **_where(tensor, component))
                _spend(tensor, component, got)
                yield buffer[:got]
                source.drop_pages(component.offset, component.length)  # the part read so far (the rest: no-op)
            _check_end(reader, produced, expected, cap, tensor, component)
    except zstandard.ZstdError as exc:
        raise _zstd_error(exc, produced, tensor, component) from None


def _iter_seekable(tf: TensorFile, tensor: Tensor, component: Component, align: int, checked: bool,
                   cancelled: CancelCheck | None) -> Iterator[memoryview]:
    """Frame by frame; bytes left over when a frame size is not a multiple of ``align`` join the next."""
    stream = _seekable(tf, tensor, component)
    carry = b""
    produced = 0
    for data in stream.iter_frames(cancelled):
        if checked:
            _check_data(tensor, component, data, produced, stream.decoded_length)
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
                          rule="decoded size = elements × dtype size", **_where(tensor, component))


def read_range(tf: TensorFile, tensor: Tensor, component: Component, offset: int, length: int, *,
               cancelled: CancelCheck | None = None) -> bytes:
    """Decoded bytes ``[offset, offset + length)`` of a component (clipped at its end), for views that show
    a window: raw parts are sliced, ``zt.zstd-seekable/1`` parts decompress only the frames covering the
    window, other encodings decode from the start up to the window's end."""
    refuse_unsupported(tensor, component)
    if offset < 0 or length < 0:
        raise ValueError("negative offset or length")
    if component.encoding == "raw":
        return stored_range(tf, tensor, component)[offset:offset + length]
    if component.encoding == SEEKABLE:
        return _seekable(tf, tensor, component).read_range(offset, length)
    out = bytearray()
    position = 0
    for chunk in iter_decoded(tf, tensor, component, cancelled=cancelled):
        end = position + len(chunk)
        if end > offset:
            out += chunk[max(0, offset - position):offset + length - position]
        position = end
        if position >= offset + length:
            break
    return bytes(out)


def _overrun(tensor: Tensor, component: Component, expected: int | None, cap: int) -> DecodeError:
    if expected is None:
        return DecodeLimitExceeded(
            f"zstd stream decodes to more than the decode limit of {cap:,} bytes (set ZTVIEWER_MAX_DECODED)",
            rule="decompression output cap", **_where(tensor, component))
    return DecodeError(f"zstd stream decodes to more than the expected {expected:,} bytes",
                       rule="decoded size = shape × dtype size", **_where(tensor, component))


def component_bytes(
    tf: TensorFile, tensor: Tensor, component: Component, *, limit: int | None = None,
    cancelled: CancelCheck | None = None, mapped: bool = False,
) -> memoryview:
    """All decoded bytes of a component, in memory of their own: raw data copied with positional reads; zstd
    decoded straight into one buffer of the expected size (no zero fill, no copy). A zstd component whose size
    the model does not give is decoded twice: streamed once to measure it (so a stream past ``limit`` is
    refused without holding it), then into a buffer of exactly that size.

    ``mapped=True`` gives raw data as a zero-copy view of the file's map instead (nothing read until touched;
    for views of tensors larger than memory). Such a view is only as good as the file: if another program
    truncates the file, touching the view's pages past the new end kills the process (SIGBUS). Check
    :func:`ztviewer.codec.mapped_pages.require_unchanged` (or ``Source.changed``) before touching it later.
    """
    refuse_unsupported(tensor, component)
    if component.encoding == "raw":
        stored = stored_view(tf, tensor, component) if mapped else _owned_stored(tf, tensor, component)
        if component.extra and "type" in component.extra:
            _check_data(tensor, component, stored, 0, len(stored))
        return stored
    limit = decode_limit() if limit is None else limit
    expected = expected_length(tensor, component)
    _check_size(tensor, component, expected, limit)
    if component.encoding == SEEKABLE:
        return _seekable_bytes(tf, tensor, component, cancelled)
    if component.encoding != "zstd":
        parts = bytearray()
        for part in iter_decoded(tf, tensor, component, limit=limit, cancelled=cancelled):
            parts += part
        return memoryview(parts)
    if expected is None:  # measure first, streaming (a bomb stops at the cap in one chunk of memory)
        expected = sum(len(part) for part in iter_decoded(tf, tensor, component, limit=limit, cancelled=cancelled))
    out = np.empty(expected, dtype=np.uint8).data
    produced = 0
    stream = _stored_stream(tf, tensor, component, ahead=True)
    try:
        with _open_zstd(stream, AHEAD_CHUNK) as reader:  # the input asked for a chunk at a time
            while produced < expected:
                if cancelled is not None and cancelled():
                    raise Cancelled()
                got = _fill(reader, out[produced:produced + CHUNK])
                if not got:
                    break
                produced += got
                _spend(tensor, component, got)
            _check_end(reader, produced, expected, expected, tensor, component)
    except zstandard.ZstdError as exc:
        raise _zstd_error(exc, produced, tensor, component) from None
    except CodecError as exc:  # the stored bytes ended early: the file shrank
        raise exc.located(tensor=tensor.name, component=component.role) from None
    finally:
        stream.close()
    return out


def _seekable_bytes(tf: TensorFile, tensor: Tensor, component: Component, cancelled: CancelCheck | None
                    ) -> memoryview:
    stream = _seekable(tf, tensor, component)
    out = np.empty(stream.decoded_length, dtype=np.uint8)
    position = 0
    for data in stream.iter_frames(cancelled):
        out[position:position + len(data)] = np.frombuffer(data, dtype=np.uint8)
        position += len(data)
    view = out.data
    if component.extra and "type" in component.extra:
        _check_data(tensor, component, view, 0, len(view))
    return view


def storage_dtype(tensor: Tensor, component: Component, dtype: str | None = None) -> np.dtype:
    name = dtype or component.dtype or tensor.dtype
    info = DTYPES.get(name)
    if info is None:
        raise DecodeError(f"cannot decode dtype {name!r}", rule="known dtype", **_where(tensor, component))
    np_dtype = info.storage_dtype
    if component.byte_order == "big" and np_dtype.itemsize > 1:
        np_dtype = np_dtype.newbyteorder(">")
    return np_dtype


def component_array(
    tf: TensorFile, tensor: Tensor, role: str, dtype: str | None = None, **kw: Any,
) -> np.ndarray:
    """A component as a 1-D array of its stored element type (byte order as stored; read-only)."""
    component = tensor.components[role]
    refuse_unsupported(tensor, component)
    np_dtype = storage_dtype(tensor, component, dtype)
    data = component_bytes(tf, tensor, component, **kw)
    if len(data) % np_dtype.itemsize:
        raise DecodeError(f"{len(data)} bytes is not a whole number of {np_dtype.itemsize}-byte elements",
                          rule="length = elements × dtype size", **_where(tensor, component))
    return np.frombuffer(data, dtype=np_dtype)


def present(bits: np.ndarray, dtype: str, raw_bits: bool = False) -> np.ndarray:
    """Stored-bit array → the array a user sees: native byte order, bool as bool, bfloat16/float8 as float32
    (kept as their raw uint bits when ``raw_bits``)."""
    info = DTYPES[dtype]
    if bits.dtype.byteorder == ">":
        bits = bits.byteswap().view(bits.dtype.newbyteorder("="))
    if info.kind == "bool":
        return bits.view(np.uint8) != 0 if not raw_bits else bits
    if info.needs_conversion and not raw_bits:
        return to_float32(bits, dtype)
    return bits


def dense_array(tf: TensorFile, tensor: Tensor, *, raw_bits: bool = False, **kw: Any) -> np.ndarray:
    """A ``dense`` tensor as an array of its shape (``mapped=True``: a zero-copy view of the map for raw
    little-endian native types, see :func:`component_bytes`)."""
    if tensor.layout != "dense" or "data" not in tensor.components:
        raise UnsupportedLayout(f"layout {tensor.layout!r} is not dense", tensor=tensor.name)
    component = tensor.components["data"]
    bits = component_array(tf, tensor, "data", dtype=tensor.dtype, **kw)
    if tensor.dtype in PACKED_NIBBLES and bits.size == (tensor.numel + 1) // 2:
        bits = unpack_nibbles(bits, tensor.numel)
    if bits.size != tensor.numel:
        raise DecodeError(f"{bits.size} elements stored, shape {list(tensor.shape)} needs {tensor.numel}",
                          rule="length = product(shape) × dtype size", **_where(tensor, component))
    return shaped(present(bits, tensor.dtype, raw_bits), tensor)


def shaped(flat: np.ndarray, tensor: Tensor) -> np.ndarray:
    """``flat`` reshaped to the tensor's shape, or a :class:`DecodeError` when numpy cannot represent that
    shape (e.g. a zero-element tensor whose other dimension exceeds numpy's index range)."""
    try:
        return flat.reshape(tensor.shape)
    except (ValueError, OverflowError, MemoryError) as exc:
        raise DecodeError(f"shape {list(tensor.shape)} cannot be held by a numpy array: {exc}",
                          rule="dimensions within numpy's index range", tensor=tensor.name) from None
