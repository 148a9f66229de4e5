"""Compressed dense tensors too large for the inspect cache, shown by streaming instead of refused.

:class:`StreamedData` has :class:`~.inspect_data.DenseData`'s interface (``shape``, ``dtype_name``, ``kind``,
``plane``, ``value``) over decoded bytes that are never whole in memory: a plane of the last two axes is a run
of rows in the decoded stream, and :class:`StreamedPlane` reads only the rows a reduction or a zoom asks for.
zstd-seekable parts (zTensor v2) decompress only the frames covering a window; other zstd streams are decoded
by one forward-moving decoder (rows asked in increasing order cost one pass; an earlier row restarts it), and
the last window read is kept, so hovering where the view just read needs no decoding.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ztviewer.codec import decode
from ztviewer.codec.dtypes import DTYPES
from ztviewer.codec.model import SEEKABLE_ENCODING, Tensor, TensorFile

from .inspect_data import presented_as, scalar

CHUNK = 1 << 20          # decoded bytes per step of the forward decoder (its buffer is all it holds)


class StreamedBytes:
    """Decoded bytes ``[offset, offset + length)`` of one compressed component, read window by window."""

    def __init__(self, tf: TensorFile, tensor: Tensor, role: str = "data") -> None:
        self.tf, self.tensor, self.component = tf, tensor, tensor.components[role]
        self._lock = threading.Lock()
        self._chunks: Iterator[memoryview] | None = None
        self._position = 0                   # decoded bytes consumed from the stream
        self._pending = b""                  # the rest of the last chunk, starting at _position
        self._kept: tuple[int, bytes] = (0, b"")    # the last window handed out
        self.restarts = 0                    # decoders started (1 for a single forward pass)

    def read(self, offset: int, length: int) -> bytes:
        with self._lock:
            start, kept = self._kept
            if start <= offset and offset + length <= start + len(kept):
                return kept[offset - start:offset - start + length]
            if self.component.encoding == SEEKABLE_ENCODING:
                data = decode.read_range(self.tf, self.tensor, self.component, offset, length)
            else:
                data = self._forward(offset, length)
            self._kept = (offset, data)
            return data

    def _forward(self, offset: int, length: int) -> bytes:
        if self._chunks is None or offset < self._position:
            self._chunks = decode.iter_decoded(self.tf, self.tensor, self.component, chunk=CHUNK)
            self._position, self._pending = 0, b""
            self.restarts += 1
        out = bytearray()
        while len(out) < length:
            if not self._pending:
                chunk = next(self._chunks, None)
                if chunk is None:
                    break
                self._pending = bytes(chunk)          # the decoder reuses its buffer: copy what is kept
            end = self._position + len(self._pending)
            if end <= offset:                         # wholly before the window: skip it
                self._position, self._pending = end, b""
                continue
            skip = max(0, offset + len(out) - self._position)
            take = self._pending[skip:skip + length - len(out)]
            out += take
            consumed = skip + len(take)
            self._position += consumed
            self._pending = self._pending[consumed:]
        return bytes(out)


class StreamedPlane:
    """Rows ``[first_row, first_row + rows)`` of a C-ordered tensor whose last axis has ``cols`` elements, as a
    2-D array-like (``shape``, ``dtype``, ``ndim``, numpy indexing by slices, integers or index arrays)."""

    def __init__(self, source: StreamedBytes, first_row: int, rows: int, cols: int, dtype: np.dtype) -> None:
        self.source, self.first_row = source, first_row
        self.shape, self.dtype, self.ndim = (rows, cols), np.dtype(dtype), 2

    def _rows(self, first: int, count: int) -> np.ndarray:
        row_bytes = self.shape[1] * self.dtype.itemsize
        data = self.source.read((self.first_row + first) * row_bytes, count * row_bytes)
        return np.frombuffer(data, self.dtype).reshape(count, self.shape[1])

    def __getitem__(self, key: Any) -> np.ndarray:
        rows_key, cols_key = key if isinstance(key, tuple) else (key, slice(None))
        rows = self.shape[0]
        if isinstance(rows_key, slice) and rows_key.step in (None, 1):
            start, stop, _ = rows_key.indices(rows)
            block = self._rows(start, max(0, stop - start))
            return block[:, cols_key]
        if isinstance(rows_key, (int, np.integer)):
            row: np.ndarray = self._rows(int(rows_key) % rows, 1)[0]
            return np.asarray(row[cols_key])
        wanted = np.asarray(rows_key) if isinstance(rows_key, np.ndarray) else np.arange(rows)[rows_key]
        unique = np.unique(wanted)          # increasing: one forward pass through the stream
        gathered = np.stack([self._rows(int(r), 1)[0] for r in unique]) if unique.size else \
            np.empty((0, self.shape[1]), self.dtype)
        positions = np.searchsorted(unique, wanted)
        if isinstance(rows_key, np.ndarray):
            return gathered[positions, cols_key]          # numpy's own broadcasting of the two index arrays
        return gathered[positions][:, cols_key]


class StreamedData:
    """A compressed dense tensor presented like :class:`~.inspect_data.DenseData`, decoded as views ask."""

    decoded = True

    def __init__(self, tf: TensorFile, tensor: Tensor, dtype_name: str | None = None) -> None:
        self.dtype_name = dtype_name or tensor.dtype
        shown = presented_as(tensor, self.dtype_name)
        self.tensor = tensor
        self.source = StreamedBytes(tf, shown)
        self.storage = decode.storage_dtype(shown, tensor.components["data"], self.dtype_name)
        self._shape = tuple(int(n) for n in tensor.shape or ())

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def kind(self) -> str:
        return DTYPES[self.dtype_name].kind

    def plane(self, axes: tuple[int, int], fixed: Mapping[int, int]) -> StreamedPlane:
        """The plane of the last two axes at the fixed leading indices (a run of rows in the stream); other
        planes would need every row of the tensor and are refused."""
        shape = self._shape
        if len(shape) < 2:
            return StreamedPlane(self.source, 0, 1, math.prod(shape), self.storage)
        n = len(shape)
        if tuple(axes) != (n - 2, n - 1):
            raise ValueError("a tensor too large for the inspect cache is streamed: it shows planes of its last "
                             "two axes (rows, then columns)")
        lead = tuple(int(fixed.get(axis, 0)) for axis in range(n - 2))
        first_row = (int(np.ravel_multi_index(lead, shape[:-2])) if lead else 0) * shape[-2]
        return StreamedPlane(self.source, first_row, shape[-2], shape[-1], self.storage)

    def value(self, index: tuple[int, ...]) -> object:
        itemsize = self.storage.itemsize
        flat = int(np.ravel_multi_index(index, self._shape)) if index else 0
        bits = np.frombuffer(self.source.read(flat * itemsize, itemsize), self.storage)
        return scalar(bits[0] if bits.size else np.zeros((), self.storage), self.dtype_name)
