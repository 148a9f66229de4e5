"""Tensor-train (TT) math over numpy cores.

Core ``k`` has shape ``(r[k], d[k], r[k+1])`` with ``r[0] = r[n] = 1``; the tensor's element at
``(i0, …, i{n-1})`` is ``cores[0][:, i0, :] @ … @ cores[n-1][:, i{n-1}, :]``. :func:`element` and
:func:`slice2d` contract only what they need, so a view never builds the dense tensor. Only
:func:`tt_cores` touches a file: it maps the cores zero-copy out of an opened :class:`TensorFile`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .dtypes import dtype_info
from .errors import CodecError, DecodeError, DecodeLimitExceeded, UnsupportedLayout
from .model import Tensor, TensorFile

Cores = Sequence[np.ndarray]


class TensorTrainError(DecodeError):
    """Tensor-train cores do not chain, or an axis or index is out of range."""


def tt_cores(tf: TensorFile, tensor: Tensor) -> list[np.ndarray]:
    """The cores of a ``tensor_train`` tensor as read-only views on the file's map (no copy)."""
    if tensor.layout != "tensor_train":
        raise UnsupportedLayout(f"layout {tensor.layout!r} is not a tensor train", tensor=tensor.name)
    if tf.source is None:
        raise CodecError("the file has no open source to read the cores from", tensor=tensor.name)
    info = dtype_info(tensor.dtype)
    if info is None:
        raise TensorTrainError(f"cores of dtype {tensor.dtype!r} cannot be decoded", tensor=tensor.name)
    from .decode import component_bytes

    cores = []
    for k in range(len(tensor.shape)):
        role = f"core_{k}"
        component = tensor.components.get(role)
        if component is None:
            raise TensorTrainError(f"the tensor has no component {role!r}", tensor=tensor.name, component=role)
        shape = component.shape or ()
        size = component.length if component.encoding == "raw" else component.uncompressed_length
        if len(shape) != 3 or (size is not None and math.prod(shape) * info.itemsize != size):
            raise TensorTrainError(f"{role} is {size} bytes, which does not hold a core of shape {shape} of "
                                   f"{tensor.dtype}", tensor=tensor.name, component=role, offset=component.offset)
        data = component_bytes(tf, tensor, component)  # memory of its own: read (raw) or decoded (zstd)
        if len(data) != math.prod(shape) * info.itemsize:
            raise TensorTrainError(f"{role} decodes to {len(data)} bytes, which does not hold a core of shape "
                                   f"{shape} of {tensor.dtype}", tensor=tensor.name, component=role,
                                   offset=component.offset)
        cores.append(np.frombuffer(data, dtype=info.storage_dtype).reshape(shape))
    check_cores(cores)
    return cores


def check_cores(cores: Sequence[np.ndarray]) -> None:
    """Raise :class:`TensorTrainError` unless the cores form a tensor train."""
    if not cores:
        raise TensorTrainError("a tensor train needs at least one core")
    for k, core in enumerate(cores):
        if core.ndim != 3:
            raise TensorTrainError(f"core {k} has {core.ndim} dimensions; TT cores are (r_left, d, r_right)")
    if cores[0].shape[0] != 1 or cores[-1].shape[2] != 1:
        raise TensorTrainError(f"the boundary ranks are {cores[0].shape[0]} and {cores[-1].shape[2]}; both must "
                               "be 1")
    for k in range(len(cores) - 1):
        if cores[k].shape[2] != cores[k + 1].shape[0]:
            raise TensorTrainError(f"core {k} ends with rank {cores[k].shape[2]} but core {k + 1} starts with rank "
                                   f"{cores[k + 1].shape[0]}")


def tt_shape(cores: Sequence[np.ndarray]) -> tuple[int, ...]:
    return tuple(core.shape[1] for core in cores)


def ranks(cores: Sequence[np.ndarray]) -> tuple[int, ...]:
    """``(r[0], …, r[n])``: the bond dimensions, boundary ranks included."""
    check_cores(cores)
    return (cores[0].shape[0],) + tuple(core.shape[2] for core in cores)


def reconstruct(cores: Sequence[np.ndarray], limit: int | None = None) -> np.ndarray:
    """The full dense tensor. ``limit`` caps its number of elements (and that of any intermediate)."""
    flat = reconstruct_flat(cores, limit)
    shape = tt_shape(cores)
    try:
        return flat.reshape(shape)
    except ValueError as exc:  # more axes than numpy arrays can have (64; 32 before numpy 2)
        raise TensorTrainError(f"the {len(shape)}-D tensor cannot be held by a numpy array: {exc}",
                               rule="dimensions within numpy's limit") from None


def reconstruct_flat(cores: Sequence[np.ndarray], limit: int | None = None) -> np.ndarray:
    """The full tensor in row-major order as a flat array, whatever its number of axes.

    The chain is cut at the bond where the two partial products (left: ``prod(d[:k]) × r[k]``, right:
    ``r[k] × prod(d[k:])``) stay smallest, each side contracted towards the cut, then joined by one matrix
    product; so a huge middle rank costs what its cores cost, never ``rows × rank`` of a one-way sweep.
    An intermediate larger than both ``limit`` and the largest core raises :class:`DecodeLimitExceeded`.
    """
    check_cores(cores)
    shape = tt_shape(cores)
    total = math.prod(shape)
    if limit is not None and total > limit:
        raise DecodeLimitExceeded(f"the dense tensor {shape} has {total} elements, over the limit of {limit}",
                                  rule="decompression output cap")
    bonds = ranks(cores)
    cut, peak = _best_cut(shape, bonds)
    allowed = max(limit if limit is not None else total, max(core.size for core in cores), total)
    if peak > allowed:
        raise DecodeLimitExceeded(f"contracting the tensor train needs an intermediate of {peak:,} elements, more "
                                  f"than the result ({total:,}) or any core", rule="decompression output cap")
    dtype = np.result_type(*cores)
    with np.errstate(over="ignore", invalid="ignore"):  # cores of huge values give inf/nan, as stored
        left, rows = np.ones((1, 1), dtype=dtype), 1
        for core in cores[:cut]:
            r_left, dim, r_right = core.shape
            left = (left @ core.reshape(r_left, dim * r_right)).reshape(rows * dim, r_right)
            rows *= dim
        right, cols = np.ones((1, 1), dtype=dtype), 1
        for core in reversed(cores[cut:]):
            r_left, dim, r_right = core.shape
            right = (core.reshape(r_left * dim, r_right) @ right).reshape(r_left, dim * cols)
            cols *= dim
        return (left @ right).reshape(total)


def _best_cut(shape: tuple[int, ...], bonds: tuple[int, ...]) -> tuple[int, int]:
    """``(k, peak)``: the bond to contract towards, and the largest partial product (elements) it needs."""
    n = len(shape)
    left_peak = [0] * (n + 1)  # largest left partial when contracting cores[:k]
    rows = 1
    for k in range(1, n + 1):
        rows *= shape[k - 1]
        left_peak[k] = max(left_peak[k - 1], rows * bonds[k])
    best = (0, 0)
    right_peak, cols = 0, 1
    for k in range(n, -1, -1):
        if k < n:
            cols *= shape[k]
            right_peak = max(right_peak, bonds[k] * cols)
        peak = max(left_peak[k], right_peak)
        if k == n or peak < best[1]:
            best = (k, peak)
    return best


def element(cores: Sequence[np.ndarray], index: Sequence[int]) -> np.generic:
    """One element, at a cost of ``n`` small vector-matrix products."""
    check_cores(cores)
    shape = tt_shape(cores)
    if len(index) != len(shape):
        raise TensorTrainError(f"index {tuple(index)} has {len(index)} entries; the tensor has {len(shape)} axes")
    idx = [_checked_index(axis, i, shape[axis]) for axis, i in enumerate(index)]
    vector = cores[0][:, idx[0], :]
    for core, i in zip(cores[1:], idx[1:]):
        vector = vector @ core[:, i, :]
    value: np.generic = vector[0, 0]
    return value


def slice2d(cores: Sequence[np.ndarray], axes: tuple[int, int] = (0, 1),
            fixed: Mapping[int, int] | None = None) -> np.ndarray:
    """The 2-D slice ``T[..., :, ..., :, ...]`` over ``axes`` (rows, columns), every other axis fixed.

    The fixed cores are contracted to vectors first (:class:`TTPlane`), so the cost is about ``d_i * d_j * r``
    plus ``r^2`` per fixed axis, never the size of the whole tensor. Unlike :class:`TTPlane`, every other axis
    must be given an index.
    """
    check_cores(cores)
    shape = tt_shape(cores)
    ndim = len(shape)
    if len(axes) != 2:
        raise TensorTrainError(f"a 2-D slice needs two axes, got {tuple(axes)}")
    row_axis, col_axis = (_checked_axis(axis, ndim) for axis in axes)
    if row_axis == col_axis:
        raise TensorTrainError(f"the two displayed axes must differ, got {row_axis} twice")
    fixed = dict(fixed or {})
    expected = set(range(ndim)) - {row_axis, col_axis}
    if set(fixed) != expected:
        raise TensorTrainError(f"fixed indices must be given for exactly the axes {sorted(expected)}, got "
                               f"{sorted(fixed)}")
    at = {axis: _checked_index(axis, i, shape[axis]) for axis, i in fixed.items()}
    return np.ascontiguousarray(TTPlane(cores, (row_axis, col_axis), at).values(slice(None), slice(None)))


def compression_ratio(shape: Sequence[int], tt_ranks: Sequence[int], itemsize: int) -> float:
    """Dense bytes over the bytes of the cores (``inf`` when the cores are empty but the tensor is not)."""
    if len(tt_ranks) != len(shape) + 1:
        raise TensorTrainError(f"{len(tt_ranks)} ranks for {len(shape)} axes; a tensor train has ndim + 1 ranks")
    dense = math.prod(shape) * itemsize
    stored = sum(tt_ranks[k] * shape[k] * tt_ranks[k + 1] for k in range(len(shape))) * itemsize
    if stored == 0:
        return 1.0 if dense == 0 else math.inf
    return dense / stored


def relative_error(cores: Sequence[np.ndarray], reference: np.ndarray) -> float:
    """``‖TT − reference‖_F / ‖reference‖_F`` (the absolute error when the reference is zero)."""
    approx = reconstruct(cores)
    reference = np.asarray(reference)
    if reference.shape != approx.shape:
        raise TensorTrainError(f"the reference has shape {reference.shape}, the tensor train {approx.shape}")
    diff = float(np.linalg.norm((approx - reference).ravel()))
    norm = float(np.linalg.norm(reference.ravel()))
    return diff / norm if norm else diff


def _checked_axis(axis: int, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not 0 <= axis < ndim:
        raise TensorTrainError(f"axis {axis!r} is out of range for a {ndim}-D tensor")
    return int(axis)


def _checked_index(axis: int, index: int, dim: int) -> int:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < dim:
        raise TensorTrainError(f"index {index!r} on axis {axis} is out of range 0..{dim - 1}")
    return int(index)


def _chain(cores: Cores, fixed: Mapping[int, int], axes: range, dtype: np.dtype) -> np.ndarray:
    """Product of ``cores[k][:, fixed[k], :]`` for ``k`` in ``axes`` (identity when empty)."""
    size = cores[axes.start].shape[0] if axes.start < len(cores) else cores[-1].shape[2]
    out = np.eye(size, dtype=dtype)
    for k in axes:
        out = out @ cores[k][:, fixed[k], :]
    return out


def _normalise(cores: Cores, axes: tuple[int, int], fixed: Mapping[int, int] | None
               ) -> tuple[int, int, dict[int, int]]:
    check_cores(cores)
    n = len(cores)
    if n < 2:
        raise TensorTrainError("a 2-D slice needs a tensor train of at least 2 dimensions")
    row, col = (int(a) % n if -n <= int(a) < n else -1 for a in axes)
    if row < 0 or col < 0 or row == col:
        raise TensorTrainError(f"axes {tuple(axes)} must be two distinct axes of a {n}-D tensor")
    full: dict[int, int] = {k: 0 for k in range(n) if k not in (row, col)}
    for key, value in (fixed or {}).items():
        k = int(key) % n if -n <= int(key) < n else -1
        if k not in full:
            raise TensorTrainError(f"cannot fix axis {key}: not a non-displayed axis of a {n}-D tensor")
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
        self._first: np.ndarray = np.einsum("a,aib->ib", left, cores[p]) @ middle  # (d_p, r_q)
        self._last: np.ndarray = np.einsum("ajb,b->aj", cores[q], right)  # (r_q, d_q)

    def values(self, rows: np.ndarray | slice, cols: np.ndarray | slice) -> np.ndarray:
        """The slice at the given row and column indices (index arrays or slices)."""
        transposed = self.axes[0] > self.axes[1]   # the row axis comes later in the chain
        first: np.ndarray = self._first[cols if transposed else rows]
        last: np.ndarray = self._last[:, rows if transposed else cols]
        product: np.ndarray = first @ last
        return product.T if transposed else product

    def __getitem__(self, key: tuple[slice, slice]) -> np.ndarray:
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, slice) for k in key)):
            raise TypeError("TTPlane supports plane[rows_slice, cols_slice] only")
        return self.values(key[0], key[1])

    def __array__(self, dtype: np.dtype | None = None, copy: bool | None = None) -> np.ndarray:
        out = self.values(slice(None), slice(None))
        return out if dtype is None else out.astype(dtype)
