"""N-D → 2-D plane selection and the value presentation used by every view (float images).

A *plane* is a zero-copy 2-D view of an N-D array: two displayed axes, every other axis fixed at one index.
*Presentation* turns stored values into the floats a heatmap shows: bool → 0/1, integers → float, float16 →
float32, complex → magnitude / phase / real / imaginary part, and bfloat16 / float8 raw bits (the caller
passes the uint bits and the dtype name) → float32. Presentation is applied only to the pixels being
shown, never to a whole large tensor.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

import numpy as np

from ztviewer.codec.dtypes import to_float32

ComplexMode = Literal["magnitude", "phase", "real", "imag"]
COMPLEX_MODES: tuple[str, ...] = ("magnitude", "phase", "real", "imag")
#: canonical dtypes stored as raw uint bits and converted with :func:`ztviewer.codec.dtypes.to_float32`.
BIT_DTYPES: dict[str, np.dtype] = {"bfloat16": np.dtype(np.uint16), "float8_e4m3fn": np.dtype(np.uint8),
              "float8_e5m2": np.dtype(np.uint8)}

Presenter = Callable[[np.ndarray], np.ndarray]


def _axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what} {axis} is out of range for a {ndim}-D array")
    return axis % ndim


def plane(array: np.ndarray, axes: tuple[int, int] = (0, 1),
          fixed: Mapping[int, int] | None = None) -> np.ndarray:
    """A 2-D view of ``array``: ``axes = (row_axis, col_axis)`` displayed, the other axes fixed.

    Parameters
    ----------
    array:
        Any numpy array (a memory-mapped one stays memory-mapped: nothing is copied).
    axes:
        The axis shown as rows and the axis shown as columns (distinct; negative values count from the
        end). Choosing ``(1, 0)`` gives the transposed view.
    fixed:
        ``{axis: index}`` for the non-displayed axes; negative indices count from the end. Axes left out
        are fixed at index 0. Fixing a displayed axis, or an index outside its extent, is an error.

    Returns
    -------
    numpy.ndarray
        A view (``np.shares_memory(result, array)``) of shape ``(shape[row_axis], shape[col_axis])``.
        0-D and 1-D arrays are shown as one row: shapes ``(1, 1)`` and ``(1, n)``.
    """
    fixed = dict(fixed or {})
    if array.ndim < 2:
        if fixed:
            raise ValueError(f"a {array.ndim}-D array has no axis to fix")
        return array.reshape((1,) * (2 - array.ndim) + array.shape)
    row, col = (_axis(int(a), array.ndim, "displayed axis") for a in axes)
    if row == col:
        raise ValueError(f"the row and column axes must differ, got {tuple(axes)}")
    index: list[int | slice] = [slice(None)] * array.ndim
    for axis in range(array.ndim):
        if axis not in (row, col):
            index[axis] = 0
    for key, value in fixed.items():
        axis = _axis(int(key), array.ndim, "fixed axis")
        if axis in (row, col):
            raise ValueError(f"axis {axis} is displayed and cannot also be fixed")
        extent = array.shape[axis]
        if not -extent <= int(value) < extent:
            raise IndexError(f"index {value} is out of range for axis {axis} of extent {extent}")
        index[axis] = int(value) % extent
    for axis, item in enumerate(index):
        if isinstance(item, int) and array.shape[axis] == 0:
            raise IndexError(f"axis {axis} has extent 0: no plane can be selected")
    view = array[tuple(index)]
    return view.T if row > col else view


def display_dtype(dtype: np.dtype | type, dtype_name: str | None = None) -> np.dtype:
    """The float dtype values of ``dtype`` are shown as (float32 for small types, float64 otherwise)."""
    dtype = np.dtype(dtype)
    if dtype_name in BIT_DTYPES and dtype.kind == "u":
        return np.dtype(np.float32)
    if dtype.kind == "f":
        return np.dtype(np.float64 if dtype.itemsize >= 8 else np.float32)
    if dtype.kind == "c":
        return np.dtype(np.float64 if dtype.itemsize >= 16 else np.float32)
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize <= 2):
        return np.dtype(np.float32)
    if dtype.kind in "iu":
        return np.dtype(np.float64)
    raise TypeError(f"values of dtype {dtype} cannot be shown as numbers")


def is_identity(dtype: np.dtype | type, dtype_name: str | None = None) -> bool:
    """True when values of ``dtype`` are shown as they are (native float32 / float64)."""
    dtype = np.dtype(dtype)
    return (dtype.kind == "f" and dtype.isnative and dtype.itemsize in (4, 8)
            and not (dtype_name in BIT_DTYPES and dtype.kind == "u"))


def presenter(dtype: np.dtype | type, dtype_name: str | None = None,
              complex_mode: ComplexMode = "magnitude") -> Presenter:
    """A function turning an array of ``dtype`` into the float array that is displayed.

    Parameters
    ----------
    dtype:
        The numpy dtype of the arrays that will be passed (raw uint bits for bfloat16 / float8).
    dtype_name:
        The canonical dtype name; needed only when ``dtype`` holds raw ``bfloat16`` / ``float8_*`` bits.
    complex_mode:
        ``"magnitude"`` (``abs``), ``"phase"`` (``angle``, radians), ``"real"`` or ``"imag"``.

    Returns
    -------
    callable
        ``f(values) -> float array`` of :func:`display_dtype`. Native float32/float64 values come back as
        they are (a view, not a copy), every other type as a new array of the same shape.
    """
    dtype = np.dtype(dtype)
    if complex_mode not in COMPLEX_MODES:
        raise ValueError(f"complex_mode must be one of {COMPLEX_MODES}, got {complex_mode!r}")
    out = display_dtype(dtype, dtype_name)
    if dtype_name in BIT_DTYPES and dtype.kind == "u":
        if dtype.itemsize != BIT_DTYPES[dtype_name].itemsize:
            raise TypeError(f"{dtype_name} bits must be {BIT_DTYPES[dtype_name]}, got {dtype}")
        name = dtype_name
        return lambda values: to_float32(_native(values), name)
    if dtype.kind == "c":
        parts: dict[str, Presenter] = {"magnitude": np.abs, "phase": np.angle, "real": np.real, "imag": np.imag}
        part = parts[complex_mode]
        return lambda values: np.asarray(part(_native(values)), dtype=out)
    if dtype.kind == "b":
        return lambda values: values.view(np.uint8).astype(out)
    if is_identity(dtype, dtype_name):
        return lambda values: values
    return lambda values: _native(values).astype(out)


def _native(values: np.ndarray) -> np.ndarray:
    if values.dtype.isnative:
        return values
    return values.astype(values.dtype.newbyteorder("="))


def to_display(values: np.ndarray, dtype_name: str | None = None,
               complex_mode: ComplexMode = "magnitude") -> np.ndarray:
    """``values`` presented as floats (see :func:`presenter`); a view when no conversion is needed."""
    values = np.asarray(values)
    return presenter(values.dtype, dtype_name, complex_mode)(values)
