"""Facts and views of a tensor train (TT) given as its cores, never building the full tensor.

Core ``k`` has shape ``(r_k, d_k, r_{k+1})`` with ``r_0 = r_n = 1``; the tensor is
``T[i_0, …, i_{n-1}] = G_0[:, i_0, :] @ G_1[:, i_1, :] @ … @ G_{n-1}[:, i_{n-1}, :]``.
A 2-D slice (two free axes, the others fixed) costs ``O(rows × cols × r)``, and :class:`TTPlane` computes
only the rows and columns asked for, so :func:`~ztviewer.analysis.reduce.block_reduce` and
:func:`~ztviewer.analysis.reduce.strided_preview` work on TT slices of any size.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Cores = Sequence[np.ndarray]
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


def check_cores(cores: Cores) -> None:
    """Raise ``ValueError`` unless ``cores`` form a chain of 3-D arrays with ``r_0 = r_n = 1``."""
    if not cores:
        raise ValueError("a tensor train needs at least one core")
    for k, core in enumerate(cores):
        if np.ndim(core) != 3:
            raise ValueError(f"core {k} has shape {np.shape(core)}, expected (r_left, d, r_right)")
        if k and cores[k - 1].shape[2] != core.shape[0]:
            raise ValueError(f"rank mismatch between core {k - 1} {cores[k - 1].shape} and core {k} "
                             f"{core.shape}")
    if cores[0].shape[0] != 1 or cores[-1].shape[2] != 1:
        raise ValueError(f"boundary ranks must be 1, got r_0={cores[0].shape[0]}, r_n={cores[-1].shape[2]}")


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


def _chain(cores: Cores, fixed: Mapping[int, int], axes: range, dtype) -> np.ndarray:
    """Product of ``cores[k][:, fixed[k], :]`` for ``k`` in ``axes`` (identity when empty)."""
    size = cores[axes.start].shape[0] if axes.start < len(cores) else cores[-1].shape[2]
    out = np.eye(size, dtype=dtype)
    for k in axes:
        out = out @ cores[k][:, fixed[k], :]
    return out


def _normalise(cores: Cores, axes: tuple[int, int], fixed: Mapping[int, int] | None) -> tuple[int, int, dict]:
    check_cores(cores)
    n = len(cores)
    if n < 2:
        raise ValueError("a 2-D slice needs a tensor train of at least 2 dimensions")
    row, col = (int(a) % n if -n <= int(a) < n else -1 for a in axes)
    if row < 0 or col < 0 or row == col:
        raise ValueError(f"axes {tuple(axes)} must be two distinct axes of a {n}-D tensor")
    full: dict[int, int] = {k: 0 for k in range(n) if k not in (row, col)}
    for key, value in (fixed or {}).items():
        k = int(key) % n if -n <= int(key) < n else -1
        if k not in full:
            raise ValueError(f"cannot fix axis {key}: not a non-displayed axis of a {n}-D tensor")
        d = cores[k].shape[1]
        if not -d <= int(value) < d:
            raise IndexError(f"index {value} is out of range for axis {k} of extent {d}")
        full[k] = int(value) % d
    return row, col, full


class TTPlane:
    """A lazy 2-D slice of a TT: ``shape``, ``dtype`` and ``plane[rows, cols]`` for slices of any step.

    Parameters
    ----------
    cores:
        The TT cores.
    axes:
        ``(row_axis, col_axis)`` shown.
    fixed:
        ``{axis: index}`` for the other axes (missing ones are fixed at 0).
    """

    def __init__(self, cores: Cores, axes: tuple[int, int] = (0, 1),
                 fixed: Mapping[int, int] | None = None) -> None:
        row, col, full = _normalise(cores, axes, fixed)
        self.axes, self.fixed = (row, col), full
        self.dtype = np.result_type(*cores)
        self.ndim = 2
        self.shape = (int(cores[row].shape[1]), int(cores[col].shape[1]))
        p, q = sorted((row, col))
        n = len(cores)
        left = _chain(cores, full, range(p), self.dtype)[0]  # (r_p,)
        right = _chain(cores, full, range(q + 1, n), self.dtype)[:, 0]  # (r_{q+1},)
        middle = _chain(cores, full, range(p + 1, q), self.dtype)  # (r_{p+1}, r_q)
        self._first = np.einsum("a,aib->ib", left, cores[p]) @ middle  # (d_p, r_q)
        self._last = np.einsum("ajb,b->aj", cores[q], right)  # (r_q, d_q)

    def values(self, rows: np.ndarray | slice, cols: np.ndarray | slice) -> np.ndarray:
        """The slice at the given row and column indices (index arrays or slices)."""
        if self.axes[0] < self.axes[1]:
            return self._first[rows] @ self._last[:, cols]
        return (self._first[cols] @ self._last[:, rows]).T

    def __getitem__(self, key: tuple[slice, slice]) -> np.ndarray:
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, slice) for k in key)):
            raise TypeError("TTPlane supports plane[rows_slice, cols_slice] only")
        return self.values(key[0], key[1])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.values(slice(None), slice(None))
        return out if dtype is None else out.astype(dtype)


def tt_slice2d(cores: Cores, axes: tuple[int, int] = (0, 1), fixed: Mapping[int, int] | None = None,
               rows: np.ndarray | slice | None = None, cols: np.ndarray | slice | None = None) -> np.ndarray:
    """A 2-D slice of the TT tensor (rows along ``axes[0]``, columns along ``axes[1]``).

    The whole slice is delegated to ``ztviewer.codec.tt.slice2d`` when the codec provides it; a subset
    (``rows`` / ``cols`` index arrays or slices) is always computed here, without building the slice.
    """
    if rows is None and cols is None:
        codec_slice = _codec_slice2d()
        if codec_slice is not None:
            row, col, full = _normalise(cores, axes, fixed)
            return np.asarray(codec_slice(list(cores), axes=(row, col), fixed=full))
    plane = TTPlane(cores, axes, fixed)
    return plane.values(slice(None) if rows is None else rows, slice(None) if cols is None else cols)


def _codec_slice2d():
    try:
        from ztviewer.codec import tt  # written alongside; absent in older trees
    except ImportError:
        return None
    return getattr(tt, "slice2d", None)


def tt_element(cores: Cores, index: Sequence[int]) -> complex | float:
    """One element ``T[index]``."""
    check_cores(cores)
    if len(index) != len(cores):
        raise ValueError(f"index {tuple(index)} has {len(index)} entries, the tensor {len(cores)} dims")
    vec = np.ones(1, dtype=np.result_type(*cores))
    for core, i in zip(cores, index, strict=True):
        vec = vec @ core_slice(core, int(i))
    return vec[0].item()


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
