"""Facts of a tensor train (TT) given as its cores, never building the full tensor: ranks and sizes, core
unfoldings and their singular values, the tensor streamed in chunks. The contractions themselves (elements,
2-D slices, :class:`~ztviewer.codec.tt.TTPlane`) are the codec's (:mod:`ztviewer.codec.tt`), in one place.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ztviewer.codec.tt import Cores, TTPlane, check_cores

__all__ = ["SVD_LIMIT", "TTPlane", "TTSummary", "check_cores", "core_slice", "left_unfolding", "right_unfolding",
           "singular_values", "tt_chunks", "tt_slice2d", "tt_summary"]
#: largest matrix given to a full SVD; bigger unfoldings go through the Gram matrix of their smaller side.
SVD_LIMIT = 1 << 22


@dataclass(frozen=True, slots=True)
class TTSummary:
    """Structure of a TT: ranks ``r_0 … r_n``, physical dims, sizes.

    ``max_ranks[k] = min(prod(dims[:k]), prod(dims[k:]))`` is the largest useful rank at bond ``k`` (the
    rank profile is ``ranks`` against it).
    """

    ranks: tuple[int, ...]
    dims: tuple[int, ...]
    max_ranks: tuple[int, ...]
    parameters: int
    dense_elements: int
    dtype: np.dtype

    @property
    def compression_ratio(self) -> float:
        """Dense elements per stored parameter (> 1 means the TT is smaller)."""
        return self.dense_elements / self.parameters if self.parameters else math.inf

    @property
    def max_rank(self) -> int:
        return max(self.ranks)


def tt_summary(cores: Cores) -> TTSummary:
    """Ranks, dims, rank profile, parameter count and compression ratio of ``cores``."""
    check_cores(cores)
    dims = tuple(int(c.shape[1]) for c in cores)
    ranks = tuple(int(c.shape[0]) for c in cores) + (int(cores[-1].shape[2]),)
    max_ranks = tuple(min(math.prod(dims[:k]), math.prod(dims[k:])) for k in range(len(dims) + 1))
    return TTSummary(ranks, dims, max_ranks, sum(int(c.size) for c in cores), math.prod(dims),
                     np.result_type(*cores))


def core_slice(core: np.ndarray, index: int) -> np.ndarray:
    """``core[:, index, :]``: the ``r_left × r_right`` matrix of one physical index (a view)."""
    if not -core.shape[1] <= index < core.shape[1]:
        raise IndexError(f"physical index {index} is out of range for dimension {core.shape[1]}")
    return core[:, index, :]


def left_unfolding(core: np.ndarray) -> np.ndarray:
    """``(r_left · d) × r_right`` reshaping of a core."""
    return core.reshape(core.shape[0] * core.shape[1], core.shape[2])


def right_unfolding(core: np.ndarray) -> np.ndarray:
    """``r_left × (d · r_right)`` reshaping of a core."""
    return core.reshape(core.shape[0], core.shape[1] * core.shape[2])


def singular_values(matrix: np.ndarray) -> np.ndarray:
    """Singular values, largest first. Matrices above ``SVD_LIMIT`` elements use the eigenvalues of the
    Gram matrix of their smaller side (singular values below ~1e-8 × the largest lose accuracy)."""
    if matrix.size <= SVD_LIMIT:
        return np.linalg.svd(matrix, compute_uv=False)
    m = matrix if matrix.shape[0] >= matrix.shape[1] else matrix.T
    gram = m.conj().T @ m
    values = np.linalg.eigvalsh(gram)[::-1]
    return np.sqrt(np.clip(values.real, 0.0, None))


def tt_slice2d(cores: Cores, axes: tuple[int, int] = (0, 1), fixed: Mapping[int, int] | None = None,
               rows: np.ndarray | slice | None = None, cols: np.ndarray | slice | None = None) -> np.ndarray:
    """A 2-D slice of the TT tensor (rows along ``axes[0]``, columns along ``axes[1]``), or the ``rows`` /
    ``cols`` (index arrays or slices) of it, computed without building the slice."""
    plane = TTPlane(cores, axes, fixed)
    return plane.values(slice(None) if rows is None else rows, slice(None) if cols is None else cols)


def tt_chunks(cores: Cores, chunk_elements: int = 1 << 22) -> Iterator[np.ndarray]:
    """The full tensor in C order as flat chunks of at most ``chunk_elements`` (or one last-axis row if
    that is longer), so statistics can stream over a TT of any size."""
    check_cores(cores)
    dims = [int(c.shape[1]) for c in cores]
    n = len(dims)
    k = next((k for k in range(n) if math.prod(dims[k:]) <= chunk_elements), n - 1)
    dtype = np.result_type(*cores)
    for prefix in np.ndindex(*dims[:k]):
        part = np.ones((1, 1), dtype=dtype)
        for core, i in zip(cores[:k], prefix, strict=True):
            part = part @ core[:, i, :]
        for core in cores[k:]:
            r, d, r_next = core.shape
            part = (part.reshape(-1, r) @ core.reshape(r, d * r_next)).reshape(-1, r_next)
        yield part.reshape(-1)
