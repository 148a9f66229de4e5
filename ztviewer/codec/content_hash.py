"""Format-independent SHA-256 of a tensor's logical content.

The hashed bytes are the elements in row-major order, little-endian: bool as one byte 0/1, bfloat16 and
float8 as their raw bits, complex as interleaved (re, im), a sparse tensor as its dense equivalent, a
tensor train as its reconstruction. The same tensor hashes the same in every file format.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator

import numpy as np

from .decode import iter_decoded, storage_dtype
from .decode_rules import CancelCheck, decode_limit
from .dtypes import DTYPES
from .errors import Cancelled, UnsupportedLayout
from .model import Tensor, TensorFile


def _canonical_bytes(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Stored bits → little-endian canonical bits (bool normalised to 0/1)."""
    if DTYPES[dtype].kind == "bool":
        return np.not_equal(bits.view(np.uint8), 0).view(np.uint8)
    if bits.dtype.byteorder == ">" or (bits.dtype.byteorder == "=" and np.little_endian is False):
        bits = bits.astype(bits.dtype.newbyteorder("<"))
    return bits


def iter_logical_bytes(
    tf: TensorFile, tensor: Tensor, cancelled: CancelCheck | None = None,
) -> Iterator[memoryview | bytes | np.ndarray]:
    """The tensor's logical content bytes as a stream of chunks."""
    if tensor.layout == "dense":
        component = tensor.components["data"]
        np_dtype = storage_dtype(tensor, component, tensor.dtype)
        info = DTYPES[tensor.dtype]
        plain = component.byte_order != "big" and info.kind != "bool"
        for chunk in iter_decoded(tf, tensor, component, align=np_dtype.itemsize, cancelled=cancelled):
            if plain:
                yield chunk
            else:
                yield _canonical_bytes(np.frombuffer(chunk, dtype=np_dtype), tensor.dtype)
        return
    if tensor.layout in ("sparse_csr", "sparse_coo"):
        from .sparse import iter_dense_chunks, load_sparse

        sparse = load_sparse(tf, tensor, mapped=True)  # one pass, densified a chunk at a time
        for dense in iter_dense_chunks(sparse, raw_bits=True):
            if cancelled is not None and cancelled():
                raise Cancelled()
            yield _canonical_bytes(dense, tensor.dtype)
        return
    if tensor.layout == "tensor_train":
        from . import tt

        flat = tt.reconstruct_flat(tt.tt_cores(tf, tensor), limit=decode_limit() // DTYPES[tensor.dtype].itemsize)
        yield np.ascontiguousarray(flat, dtype=DTYPES[tensor.dtype].storage)
        return
    raise UnsupportedLayout(f"layout {tensor.layout!r} has no decodable logical content", tensor=tensor.name)


def content_sha256(
    tf: TensorFile, tensor: Tensor, progress: Callable[[int], None] | None = None,
    cancelled: CancelCheck | None = None,
) -> str:
    digest = hashlib.sha256()
    for chunk in iter_logical_bytes(tf, tensor, cancelled):
        data = as_byte_view(chunk) if isinstance(chunk, np.ndarray) else chunk
        digest.update(data)
        if progress is not None:
            progress(len(data))
    return digest.hexdigest()


def array_sha256(array: np.ndarray, dtype: str) -> str:
    """The same hash for an in-memory array of canonical dtype ``dtype`` (stored bits for bf16/float8)."""
    info = DTYPES[dtype]
    bits = np.ascontiguousarray(array)
    if info.kind == "bool":
        bits = (bits != 0).astype(np.uint8)
    else:
        bits = bits.astype(np.dtype(info.storage), copy=False)
    return hashlib.sha256(as_byte_view(bits)).hexdigest()


def as_byte_view(array: np.ndarray) -> memoryview:
    """A flat unsigned-byte view of an array's memory (copied only if not contiguous)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
