"""Decoding stored components into bytes and numpy arrays.

What these functions return is memory of its own (raw data copied with positional reads), safe to keep
whatever happens to the file later; a zero-copy view of the file's map is asked for explicitly
(``mapped=True``: only as good as the file, see :func:`component_bytes`). zstd data is streamed into a preallocated
buffer whose size is known before decoding starts (the tensor's logical size, or ``uncompressed_length``);
when no size is known the output grows up to ``decode_limit()``. Decoding never produces more than the
expected size, so a decompression bomb is stopped at its first surplus byte. The caps and value rules are
:mod:`.decode_rules`', the zstd paths :mod:`.zstd_decode`'s.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .decode_rules import (
    CHUNK,
    CancelCheck,
    check_data,
    check_size,
    decode_limit,
    expected_length,
    refuse_unsupported,
    where,
)
from .dtypes import DTYPES, PACKED_NIBBLES, to_float32, unpack_nibbles
from .errors import Cancelled, CodecError, DecodeError, DecodeLimitExceeded, UnsupportedLayout
from .model import SEEKABLE_ENCODING, Component, Tensor, TensorFile
from .source import Source
from .source_ranges import StoredRange
from .zstd_decode import iter_seekable, iter_zstd, seekable_bytes, zstd_bytes
from .zstd_seekable import SeekableStream


def _source(tf: TensorFile, tensor: Tensor, component: Component) -> Source:
    try:
        return tf.source_for(tensor, component)
    except CodecError:
        raise
    except ValueError as exc:  # the file holding the bytes (a shard) is not open
        raise DecodeError(str(exc), rule="the part's file is available", **where(tensor, component)) from None


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
    :class:`~.errors.SourceChanged`, never SIGBUS)."""
    source = _source(tf, tensor, component)
    source.check_range(component.offset, component.length, "component", tensor=tensor.name, component=component.role)
    try:
        out = np.empty(component.length, dtype=np.uint8)
    except MemoryError:
        raise DecodeLimitExceeded(f"{component.length:,} bytes do not fit in memory; ask for a view of the file's map "
                                  "(mapped=True) or stream them", rule="decoded data fits in memory",
                                  **where(tensor, component)) from None
    position = 0
    for part in source.read_chunks(component.offset, component.length, CHUNK, "component",
                                                           reuse=True, tensor=tensor.name, component=component.role):
        out[position:position + len(part)] = np.frombuffer(part, np.uint8)
        position += len(part)
    out.flags.writeable = False  # read-only, as a view of the map would be
    return out.data


def seekable_stream(tf: TensorFile, tensor: Tensor, component: Component) -> SeekableStream:
    """The validated seek table of a ``zt.zstd-seekable/1`` part, for random access to its decoded bytes
    (:meth:`SeekableStream.read_range`, frame by frame); raises :class:`DecodeError` for a bad table."""
    return _seekable(tf, tensor, component)


def _seekable(tf: TensorFile, tensor: Tensor, component: Component) -> SeekableStream:
    expected = component.uncompressed_length if component.uncompressed_length is not None else 0
    return SeekableStream(stored_range(tf, tensor, component), expected, where=where(tensor, component))


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
                check_data(tensor, component, part, start, component.length)
            start += len(part)
            yield memoryview(part)
        return
    if component.encoding == SEEKABLE_ENCODING:
        check_size(tensor, component, expected, limit)
        yield from iter_seekable(_seekable(tf, tensor, component), tensor, component, align, checked, cancelled)
        return
    if component.encoding != "zstd":
        raise DecodeError(f"unknown encoding {component.encoding!r}", rule="encoding is raw or zstd",
                          **where(tensor, component))
    check_size(tensor, component, expected, limit)
    yield from iter_zstd(source, tensor, component, expected=expected, limit=limit, align=align, chunk=chunk,
                         buffers=buffers, cancelled=cancelled)


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
    if component.encoding == SEEKABLE_ENCODING:
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
            check_data(tensor, component, stored, 0, len(stored))
        return stored
    limit = decode_limit() if limit is None else limit
    expected = expected_length(tensor, component)
    check_size(tensor, component, expected, limit)
    if component.encoding == SEEKABLE_ENCODING:
        return seekable_bytes(_seekable(tf, tensor, component), tensor, component, cancelled)
    if component.encoding != "zstd":
        parts = bytearray()
        for part in iter_decoded(tf, tensor, component, limit=limit, cancelled=cancelled):
            parts += part
        return memoryview(parts)
    if expected is None:  # measure first, streaming (a bomb stops at the cap in one chunk of memory)
        expected = sum(len(part) for part in iter_decoded(tf, tensor, component, limit=limit, cancelled=cancelled))
    return zstd_bytes(tf.source_for(tensor, component), tensor, component, expected, cancelled)


def storage_dtype(tensor: Tensor, component: Component, dtype: str | None = None) -> np.dtype:
    name = dtype or component.dtype or tensor.dtype
    info = DTYPES.get(name)
    if info is None:
        raise DecodeError(f"cannot decode dtype {name!r}", rule="known dtype", **where(tensor, component))
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
                          rule="length = elements × dtype size", **where(tensor, component))
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
                          rule="length = product(shape) × dtype size", **where(tensor, component))
    return shaped(present(bits, tensor.dtype, raw_bits), tensor)


def shaped(flat: np.ndarray, tensor: Tensor) -> np.ndarray:
    """``flat`` reshaped to the tensor's shape, or a :class:`DecodeError` when numpy cannot represent that
    shape (e.g. a zero-element tensor whose other dimension exceeds numpy's index range)."""
    try:
        return flat.reshape(tensor.shape)
    except (ValueError, OverflowError, MemoryError) as exc:
        raise DecodeError(f"shape {list(tensor.shape)} cannot be held by a numpy array: {exc}",
                          rule="dimensions within numpy's index range", tensor=tensor.name) from None
