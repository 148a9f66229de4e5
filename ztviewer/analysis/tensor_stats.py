"""Statistics of the tensors of an opened file, streamed with bounded memory.

Dense raw data is read chunk by chunk straight from the map, zstd data through
:func:`ztviewer.codec.decode.iter_decoded` (decoded twice when a histogram is wanted, never held whole),
sparse tensors from their stored values plus the implied zeros, tensor trains by reconstructing the tensor
a chunk at a time from the cores.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ztviewer.codec import decode
from ztviewer.codec.dtypes import DTYPES
from ztviewer.codec.errors import Cancelled, CodecError, DecodeError, UnsupportedLayout
from ztviewer.codec.model import Tensor, TensorFile

from ._common import CancelCheck, Progress
from .stats import ChunkSource, TensorStats, array_chunks, compute_stats

CHUNK_ELEMENTS = 1 << 22


def tensor_source(tf: TensorFile, tensor: Tensor, chunk_elements: int = CHUNK_ELEMENTS,
                  cancelled: CancelCheck | None = None) -> tuple[ChunkSource, int, int]:
    """``(chunks, total, implied_zeros)`` for :func:`~ztviewer.analysis.stats.compute_stats`.

    ``chunks()`` yields presented arrays (native byte order, bfloat16/float8 as float32, bool as bool);
    ``total`` is the number of elements it yields; ``implied_zeros`` the zeros of a sparse tensor that are
    not stored.
    """
    if tensor.dtype not in DTYPES:
        raise DecodeError(f"cannot compute statistics of dtype {tensor.dtype!r}", tensor=tensor.name)
    if tensor.layout == "dense":
        return _dense_source(tf, tensor, chunk_elements, cancelled), tensor.numel, 0
    if tensor.layout in ("sparse_csr", "sparse_coo"):
        from ztviewer.codec.sparse import load_sparse

        sparse = load_sparse(tf, tensor, cancelled=cancelled, mapped=True)  # one pass over the values
        values = sparse.values

        def chunks() -> Iterator[np.ndarray]:
            return (decode.present(part, tensor.dtype) for part in array_chunks(values, chunk_elements))

        return chunks, values.size, max(0, tensor.numel - values.size)
    if tensor.layout == "tensor_train":
        from ztviewer.codec import tt

        from .tt_view import tt_chunks

        cores = tt.tt_cores(tf, tensor)
        dims = [c.shape[1] for c in cores]
        return lambda: tt_chunks(cores, chunk_elements), math.prod(dims), 0
    raise UnsupportedLayout(f"layout {tensor.layout!r} has no values to summarise", tensor=tensor.name)


def _dense_source(tf: TensorFile, tensor: Tensor, chunk_elements: int,
                  cancelled: CancelCheck | None) -> ChunkSource:
    if "data" not in tensor.components:
        raise DecodeError("dense tensor has no 'data' component", tensor=tensor.name)
    component = tensor.components["data"]
    np_dtype = decode.storage_dtype(tensor, component, tensor.dtype)
    if component.encoding == "raw" and component.length != tensor.numel * np_dtype.itemsize:
        raise DecodeError(f"{component.length // np_dtype.itemsize} elements stored, shape {list(tensor.shape)} "
                          f"needs {tensor.numel}", tensor=tensor.name, component="data", offset=component.offset)

    def decoded() -> Iterator[np.ndarray]:
        for part in decode.iter_decoded(tf, tensor, component, align=np_dtype.itemsize,
                                        chunk=chunk_elements * np_dtype.itemsize, cancelled=cancelled):
            yield decode.present(np.frombuffer(part, dtype=np_dtype), tensor.dtype)

    return decoded


def tensor_stats(tf: TensorFile, tensor: Tensor, *, bins: int = 64, cancelled: CancelCheck | None = None,
                 progress: Progress | None = None) -> TensorStats:
    """Statistics of one tensor of ``tf`` (see :mod:`ztviewer.analysis.stats` for the rules)."""
    chunks, total, zeros = tensor_source(tf, tensor, cancelled=cancelled)
    return compute_stats(chunks, bins=bins, total=total, implied_zeros=zeros, cancelled=cancelled,
                         progress=progress)


def file_statistics(tf: TensorFile, *, bins: int = 64, cancelled: CancelCheck | None = None,
                    progress: Progress | None = None) -> Iterator[tuple[str, TensorStats | str]]:
    """``(tensor name, TensorStats or error message)`` for every tensor of ``tf``, in file order.

    Meant to fill the whole-file statistics table row by row from a worker. A tensor that cannot be read
    yields the reason as a string and the others go on; cancellation raises
    :class:`~ztviewer.codec.errors.Cancelled`. ``progress(done, total)`` counts tensors.
    """
    count = len(tf.tensors)
    for k, tensor in enumerate(tf.tensors):
        errors = [p for p in tensor.problems if p.is_error]
        if errors:
            yield tensor.name, f"not read: {errors[0].describe()}"
        else:
            yield tensor.name, _guarded(tf, tensor, bins, cancelled)
        if progress is not None:
            progress(k + 1, count)


def _guarded(tf: TensorFile, tensor: Tensor, bins: int, cancelled: CancelCheck | None) -> TensorStats | str:
    try:
        return tensor_stats(tf, tensor, bins=bins, cancelled=cancelled)
    except Cancelled:
        raise
    except CodecError as exc:
        return str(exc)
    except (ValueError, TypeError, MemoryError, OSError, ImportError) as exc:
        return f"{type(exc).__name__}: {exc}"
