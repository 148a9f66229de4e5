"""The elements where two tensors differ, as coordinates and B − A: a sparse Δ a viewer can draw as a spy plot.

Two sparse tensors are compared on the union of their stored positions (never densified); a sparse tensor
against a dense one is streamed in aligned chunks (:func:`.values.aligned`). At most ``limit`` differing
entries are kept, so memory stays bounded whatever the size.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ztviewer.codec.errors import Cancelled
from ztviewer.codec.model import Tensor, TensorFile

from .accumulate import work_dtype
from .planes import as_numbers
from .values import CancelCheck, paired_pieces

#: differing entries kept at most (about 100 MB of coordinates and values for a 3-D tensor).
MAX_ENTRIES = 1 << 22


@dataclass(slots=True)
class DifferingEntries:
    """``coords`` (ndim × n, int64) of the elements whose values differ, ``delta`` = B − A there (float64 or
    complex128), in row-major order. ``truncated``: more elements differ than were kept."""

    shape: tuple[int, ...]
    coords: np.ndarray
    delta: np.ndarray
    truncated: bool = False

    @property
    def count(self) -> int:
        return int(self.delta.size)


def differing_entries(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor, *, limit: int = MAX_ENTRIES,
                      chunk_elements: int = 1 << 20, cancelled: CancelCheck | None = None) -> DifferingEntries:
    """Where and by how much B differs from A (same shape; NaN equals NaN, −0 equals +0)."""
    shape = tuple(int(d) for d in a.shape)
    if shape != tuple(int(d) for d in b.shape):
        raise ValueError(f"shapes differ: {list(a.shape)} vs {list(b.shape)}")
    work = work_dtype(a.dtype, b.dtype)
    positions: list[np.ndarray] = []
    deltas: list[np.ndarray] = []
    kept, truncated = 0, False
    for where, bits_a, bits_b in paired_pieces(tf_a, a, tf_b, b, chunk_elements, cancelled):
        if cancelled is not None and cancelled():
            raise Cancelled()
        flat = np.arange(where, where + bits_a.size, dtype=np.int64) if isinstance(where, int) else where
        va, vb = as_numbers(bits_a, a.dtype, work), as_numbers(bits_b, b.dtype, work)
        with np.errstate(invalid="ignore", over="ignore"):
            differ = np.flatnonzero((va != vb) & ~(np.isnan(va) & np.isnan(vb)))
            if kept + differ.size > limit:
                differ, truncated = differ[:limit - kept], True
            positions.append(flat[differ])
            deltas.append(vb[differ] - va[differ])
        kept += differ.size
        if truncated:
            break
    flat_all = np.concatenate(positions) if positions else np.zeros(0, np.int64)
    delta = np.concatenate(deltas) if deltas else np.zeros(0, work)
    coords = np.array(np.unravel_index(flat_all, shape), dtype=np.int64).reshape(len(shape), -1) if shape \
        else np.zeros((0, flat_all.size), np.int64)
    return DifferingEntries(shape, coords, delta.astype(work, copy=False), truncated)
