"""A tensor train against a reference array of the same shape (its dense original, a ``.npy`` or another tensor):
relative Frobenius error and largest absolute error streamed over the whole tensor in bounded memory, and the
difference TT − reference of any 2-D slice, lazily, for an error map. Pure numpy."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ztviewer.analysis._common import checkpoint
from ztviewer.analysis.diff.accumulate import work_dtype
from ztviewer.analysis.diff.planes import DifferencePlane, as_numbers
from ztviewer.analysis.mapped import releasing
from ztviewer.analysis.slicing import plane as plane_of
from ztviewer.analysis.tt_view import Cores, check_cores, tt_chunks
from ztviewer.codec.dtypes import DTYPES
from ztviewer.codec.mapped_pages import require_unchanged

CHUNK_ELEMENTS = 1 << 20


class TTLike(Protocol):
    cores: list[np.ndarray]
    dtype_name: str

    def plane(self, axes: tuple[int, int], fixed: Mapping[int, int]) -> Any: ...

    def value(self, index: tuple[int, ...]) -> object: ...


@dataclass(frozen=True, slots=True)
class TTError:
    """How far the tensor train is from the reference over all ``elements``."""

    relative: float                     # ‖TT − ref‖_F / ‖ref‖_F (the absolute norm when the reference is zero)
    frobenius: float                    # ‖TT − ref‖_F
    reference_norm: float               # ‖ref‖_F
    max_abs: float                      # max |TT − ref|
    max_abs_index: tuple[int, ...]      # where it is (the first such element in C order)
    elements: int


def reference_dtype_name(array: np.ndarray) -> str:
    """The dtype name the codec knows for a numpy array (a ``.npy`` reference), or ValueError."""
    name = np.dtype(array.dtype).newbyteorder("=").name
    if name not in DTYPES or DTYPES[name].kind not in ("float", "int", "uint", "complex", "bool"):
        raise ValueError(f"a reference of dtype {array.dtype} cannot be compared (numbers only)")
    return name


def load_npy_reference(path: str) -> np.ndarray:
    """A ``.npy`` file mapped, not read (pickled objects refused)."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    reference_dtype_name(array)
    return array


def tt_error(cores: Cores, reference: np.ndarray, reference_dtype: str,
             cancelled: Callable[[], bool] | None = None,
             progress: Callable[[int, int], None] | None = None, chunk_elements: int = CHUNK_ELEMENTS) -> TTError:
    """Compare the full tensor of ``cores`` with ``reference`` (stored bits of ``reference_dtype``, e.g. a memory
    map), chunk by chunk in C order: neither side is ever whole in memory."""
    check_cores(cores)
    shape = tuple(int(c.shape[1]) for c in cores)
    if tuple(reference.shape) != shape:
        raise ValueError(f"the reference has shape {tuple(reference.shape)}, the tensor train {shape}")
    total = math.prod(shape)
    tt_dtype = np.result_type(*cores).name
    work = work_dtype(tt_dtype if tt_dtype in DTYPES else "complex128", reference_dtype)
    flat = reference.reshape(-1) if reference.flags.c_contiguous else None
    squares = reference_squares = 0.0
    max_abs, max_at, done = -1.0, 0, 0
    for chunk in tt_chunks(cores, chunk_elements):
        checkpoint(cancelled)
        require_unchanged(reference)  # a view of a file map: never read once another program changed the file
        stop = done + chunk.size
        bits = flat[done:stop] if flat is not None else reference[np.unravel_index(np.arange(done, stop), shape)]
        ref = as_numbers(bits, reference_dtype, work)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(chunk.astype(work, copy=False) - ref)
        squares += float(np.sum(diff.astype(np.float64) ** 2))
        reference_squares += float(np.sum(np.abs(ref).astype(np.float64) ** 2))
        if diff.size and not np.all(np.isnan(diff)):
            at = int(np.nanargmax(diff))
            if diff[at] > max_abs:
                max_abs, max_at = float(diff[at]), done + at
        done = stop
        if progress is not None:
            progress(done, total)
    frobenius, norm = math.sqrt(squares), math.sqrt(reference_squares)
    index = tuple(int(i) for i in np.unravel_index(max_at, shape)) if total else ()
    return TTError(frobenius / norm if norm else frobenius, frobenius, norm, max(max_abs, 0.0), index, total)


@dataclass(slots=True)
class TTErrorData:
    """TT − reference, shown like a dense tensor (``shape``, ``kind``, ``dtype_name``, ``plane``, ``value``):
    only the pixels a view asks for are computed."""

    tt: TTLike
    reference: np.ndarray
    reference_dtype: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(c.shape[1]) for c in self.tt.cores)

    @property
    def dtype_name(self) -> str:
        return "complex128" if work_dtype(self.tt.dtype_name, self.reference_dtype).kind == "c" else "float64"

    @property
    def kind(self) -> str:
        return DTYPES[self.dtype_name].kind

    def plane(self, axes: tuple[int, int], fixed: Mapping[int, int]) -> DifferencePlane:
        reference = plane_of(self.reference) if self.reference.ndim < 2 else plane_of(self.reference, axes, fixed)
        return DifferencePlane(releasing(reference), self.reference_dtype, self.tt.plane(axes, fixed),
                               self.tt.dtype_name)

    def value(self, index: tuple[int, ...]) -> object:
        require_unchanged(self.reference)
        work = work_dtype(self.tt.dtype_name, self.reference_dtype)
        reference = as_numbers(np.asarray(self.reference[index]).reshape(1), self.reference_dtype, work)
        with np.errstate(invalid="ignore", over="ignore"):
            return (np.asarray([self.tt.value(index)], dtype=work) - reference)[0].item()
