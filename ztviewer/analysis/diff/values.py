"""A tensor's elements as a stream of stored-bit chunks, and two streams cut into aligned pieces.

Chunks hold the canonical stored bits in native byte order (bfloat16 as uint16, float8 as uint8, bool as
0/1 bytes), in row-major order: dense data decoded in chunks, sparse tensors densified a chunk at a time,
tensor trains reconstructed (within the decode limit). Two sparse tensors are compared as what they
represent through the union of their non-zero positions (:func:`sparse_entries`), never densified.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ztviewer.codec.decode import iter_decoded, present, storage_dtype
from ztviewer.codec.decode_rules import CancelCheck, decode_limit
from ztviewer.codec.dtypes import DTYPES
from ztviewer.codec.errors import Cancelled, DecodeError, UnsupportedLayout
from ztviewer.codec.model import Tensor, TensorFile

SPARSE = ("sparse_csr", "sparse_coo")
DECODABLE = ("dense", "tensor_train") + SPARSE


def _canonical(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Stored bits in native byte order (:func:`~ztviewer.codec.decode.present`, raw bits kept), bool as 0/1."""
    bits = present(bits, dtype, raw_bits=True)
    if DTYPES[dtype].kind == "bool":
        bits = (bits != 0).view(np.uint8)
    return bits


def stored_bits(tf: TensorFile, tensor: Tensor, chunk_elements: int,
                cancelled: CancelCheck | None = None) -> Iterator[np.ndarray]:
    """The tensor's elements in row-major order as 1-D stored-bit chunks (a chunk is valid until the next)."""
    if tensor.layout == "dense":
        component = tensor.components["data"]
        np_dtype = storage_dtype(tensor, component, tensor.dtype)
        size = np_dtype.itemsize
        for chunk in iter_decoded(tf, tensor, component, align=size, chunk=chunk_elements * size,
                                  cancelled=cancelled):
            yield _canonical(np.frombuffer(chunk, np_dtype), tensor.dtype)
        return
    if tensor.layout in SPARSE:
        from ztviewer.codec.sparse import iter_dense_chunks, load_sparse

        for part in iter_dense_chunks(load_sparse(tf, tensor, mapped=True), chunk_elements, raw_bits=True):
            if cancelled is not None and cancelled():
                raise Cancelled()
            yield _canonical(part, tensor.dtype)
        return
    if tensor.layout == "tensor_train":
        from ztviewer.codec import tt

        full = tt.reconstruct(tt.tt_cores(tf, tensor), limit=decode_limit() // DTYPES[tensor.dtype].itemsize)
        flat = np.ascontiguousarray(full, dtype=DTYPES[tensor.dtype].storage).reshape(-1)
        for start in range(0, flat.size, chunk_elements):
            yield flat[start:start + chunk_elements]
        return
    raise UnsupportedLayout(f"layout {tensor.layout!r} cannot be decoded", tensor=tensor.name)


def fixed_chunks(stream: Iterator[np.ndarray], size: int) -> Iterator[np.ndarray]:
    """Re-cut a chunk stream into pieces of exactly ``size`` elements (the last may be shorter).

    Whole pieces inside one incoming chunk are passed on as views; only pieces straddling two chunks are
    copied (an incoming chunk may be a reused buffer).
    """
    pending: list[np.ndarray] = []
    have = 0
    for chunk in stream:
        start = 0
        while start < chunk.size:
            if not pending and chunk.size - start >= size:
                yield chunk[start:start + size]
                start += size
                continue
            take = min(size - have, chunk.size - start)
            pending.append(chunk[start:start + take].copy())
            have += take
            start += take
            if have == size:
                yield np.concatenate(pending)
                pending, have = [], 0
    if pending:
        yield np.concatenate(pending)


def aligned(a: Iterator[np.ndarray], b: Iterator[np.ndarray], size: int, total: int,
            names: tuple[str, str]) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(first flat index, piece of A, piece of B)`` with equal lengths; both streams must hold ``total``."""
    pieces_b = fixed_chunks(b, size)
    position = 0
    for piece_a in fixed_chunks(a, size):
        piece_b = next(pieces_b, None)
        if piece_b is None or piece_b.size != piece_a.size:
            break
        yield position, piece_a, piece_b
        position += piece_a.size
    else:
        if next(pieces_b, None) is None and position == total:
            return
    raise DecodeError(f"the stored elements of {names[0]!r} and {names[1]!r} do not both number {total:,}",
                      rule="stored elements = product(shape)", tensor=names[0])


def sparse_entries(tf: TensorFile, tensor: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique flat positions of the stored entries and their canonical bits (the last of duplicate
    coordinates wins, as when densifying)."""
    from ztviewer.codec.sparse import load_sparse

    sparse = load_sparse(tf, tensor)
    if math.prod(sparse.shape) >= 2**63:
        raise UnsupportedLayout(f"shape {list(sparse.shape)} has more than 2**63 elements",
                                rule="flat positions fit in 64 bits", tensor=tensor.name)
    bits = _canonical(sparse.values, sparse.dtype)
    if sparse.nnz == 0:
        return np.zeros(0, np.int64), bits[:0]
    flat = np.ravel_multi_index(tuple(sparse.coordinates()), sparse.shape)
    order = np.argsort(flat, kind="stable")
    flat, bits = flat[order], bits[order]
    last = np.append(flat[1:] != flat[:-1], True)
    return flat[last], bits[last]


def paired_pieces(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor, chunk_elements: int,
                  cancelled: CancelCheck | None = None) -> Iterator[tuple[int | np.ndarray, np.ndarray, np.ndarray]]:
    """``(positions, bits of A, bits of B)`` in pieces of at most ``chunk_elements``, covering every element where
    either side may be non-zero. Two sparse tensors: their entries on the union of their positions (``positions``
    the flat index of each element; every other element is zero on both sides). Otherwise both whole streams,
    aligned (``positions`` the first flat index of the piece, an ``int``)."""
    if a.layout in SPARSE and b.layout in SPARSE:
        positions, bits_a, bits_b = union(*sparse_entries(tf_a, a), *sparse_entries(tf_b, b))
        for start in range(0, positions.size, chunk_elements):
            if cancelled is not None and cancelled():
                raise Cancelled()
            stop = start + chunk_elements
            yield positions[start:stop], bits_a[start:stop], bits_b[start:stop]
        return
    yield from aligned(stored_bits(tf_a, a, chunk_elements, cancelled), stored_bits(tf_b, b, chunk_elements, cancelled),
                       chunk_elements, a.numel, (a.name, b.name))


def union(flat_a: np.ndarray, bits_a: np.ndarray, flat_b: np.ndarray,
          bits_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both entry lists on the union of their positions, zeros (all-zero bits) where one has no entry."""
    positions = np.union1d(flat_a, flat_b)
    out_a = np.zeros(positions.size, bits_a.dtype)
    out_b = np.zeros(positions.size, bits_b.dtype)
    out_a[np.searchsorted(positions, flat_a)] = bits_a
    out_b[np.searchsorted(positions, flat_b)] = bits_b
    return positions, out_a, out_b
