"""What a viewer shows of one compared pair: the difference B − A as a lazy 2-D plane, and histograms of A
and B over one common set of bins. Pure numpy; nothing here reads more than the pixels or chunks asked for."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from ztviewer.analysis.mapped import releasing
from ztviewer.analysis.slicing import plane as plane_of
from ztviewer.analysis.stats import array_chunks, compute_stats, histogram_of
from ztviewer.codec.dtypes import DTYPES
from ztviewer.codec.mapped_pages import require_unchanged

from .accumulate import presenter, work_dtype


def as_numbers(bits: np.ndarray, dtype_name: str, work: np.dtype) -> np.ndarray:
    """Stored bits of ``dtype_name`` as numbers of the ``work`` dtype (:func:`work_dtype`)."""
    return np.asarray(presenter(dtype_name)(np.asarray(bits))).astype(work, copy=False)


class DifferencePlane:
    """``b − a`` of two equally shaped 2-D planes of stored bits, computed only for the slices asked for.

    Has ``shape``, ``dtype``, ``ndim`` and 2-D basic slicing, like the planes the heatmap reductions take
    (:func:`ztviewer.analysis.reduce.block_reduce`).
    """

    def __init__(self, a: np.ndarray, dtype_a: str, b: np.ndarray, dtype_b: str) -> None:
        if tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"planes differ in shape: {a.shape} vs {b.shape}")
        self.a, self.b, self.dtype_a, self.dtype_b = a, b, dtype_a, dtype_b
        self.dtype = work_dtype(dtype_a, dtype_b)
        self.shape = tuple(a.shape)
        self.ndim = len(self.shape)

    def __getitem__(self, key) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            b = as_numbers(self.b[key], self.dtype_b, self.dtype)
            return b - as_numbers(self.a[key], self.dtype_a, self.dtype)


class _Shaped(Protocol):
    @property
    def shape(self) -> tuple[int, ...]: ...


Side = TypeVar("Side", bound=_Shaped)


@dataclass(slots=True)
class _Difference(Generic[Side]):
    """B − A of two equally shaped sides; ``dtype_a`` / ``dtype_b`` name what they hold. The difference is
    shown as ``float64``, or ``complex128`` when either side is complex."""

    a: Side
    dtype_a: str
    b: Side
    dtype_b: str

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.a.shape)

    @property
    def dtype_name(self) -> str:
        return "complex128" if work_dtype(self.dtype_a, self.dtype_b).kind == "c" else "float64"

    @property
    def kind(self) -> str:
        return DTYPES[self.dtype_name].kind


@dataclass(slots=True)
class DifferenceData(_Difference[np.ndarray]):
    """B − A of two N-D arrays of stored bits, shown like a dense tensor (``plane``, ``value``, ``kind``)."""

    @property
    def array(self) -> DifferencePlane:
        """The whole difference as a lazy array (only 2-D tensors and below slice like numpy)."""
        return DifferencePlane(self.a, self.dtype_a, self.b, self.dtype_b)

    def plane(self, axes: tuple[int, int], fixed: Mapping[int, int]) -> DifferencePlane:
        """Planes of file maps are read through :func:`~ztviewer.analysis.mapped.releasing` (checked copies)."""
        if self.a.ndim < 2:
            return DifferencePlane(releasing(plane_of(self.a)), self.dtype_a, releasing(plane_of(self.b)),
                                   self.dtype_b)
        return DifferencePlane(releasing(plane_of(self.a, axes, fixed)), self.dtype_a,
                               releasing(plane_of(self.b, axes, fixed)), self.dtype_b)

    def value(self, index: tuple[int, ...]) -> object:
        require_unchanged(self.a)
        require_unchanged(self.b)
        work = work_dtype(self.dtype_a, self.dtype_b)
        a = as_numbers(np.asarray(self.a[index]).reshape(1), self.dtype_a, work)
        b = as_numbers(np.asarray(self.b[index]).reshape(1), self.dtype_b, work)
        with np.errstate(invalid="ignore", over="ignore"):
            return (b - a)[0].item()


@dataclass(slots=True)
class SliceDifference(_Difference[Any]):
    """B − A of two tensors shown through their 2-D planes: any objects with ``shape``, ``plane(axes, fixed)``
    and ``value(index)`` (a tensor train's reconstructed slices included); ``dtype_a`` / ``dtype_b`` name
    what their planes hold (stored bits of that dtype, or plain numbers as ``float64`` / ``complex128``)."""

    def plane(self, axes: tuple[int, int], fixed: Mapping[int, int]) -> DifferencePlane:
        return DifferencePlane(self.a.plane(axes, fixed), self.dtype_a, self.b.plane(axes, fixed), self.dtype_b)

    def value(self, index: tuple[int, ...]) -> object:
        a, b = self.a.value(index), self.b.value(index)
        if isinstance(a, (int, float, complex)) and isinstance(b, (int, float, complex)):
            return b - a
        return None


#: elements of each side a pair histogram counts at most (a first quick pass counts PREVIEW_SAMPLE).
HISTOGRAM_SAMPLE = 1 << 20
PREVIEW_SAMPLE = 1 << 14


@dataclass(slots=True)
class PairHistograms:
    """Counts of A's and B's finite values in the same ``edges`` (``None`` counts: no finite value), over
    ``counted`` of the ``total`` elements of each side (an evenly spread sample when fewer)."""

    edges: np.ndarray
    counts_a: np.ndarray
    counts_b: np.ndarray
    counted: tuple[int, int] = (0, 0)
    total: tuple[int, int] = (0, 0)

    @property
    def sampled(self) -> bool:
        return self.counted != self.total


def spread_sample(array: np.ndarray, count: int) -> np.ndarray:
    """At most about ``count`` elements of ``array`` evenly spread over it in row-major order (only those read;
    a view of a C-contiguous array, memory-mapped ones included)."""
    size = int(array.size)
    if size <= count:
        return np.asarray(array).reshape(-1)
    step = -(-size // max(1, count))
    if array.flags.c_contiguous:
        return array.reshape(-1)[::step]
    return np.asarray(array[np.unravel_index(np.arange(0, size, step, dtype=np.int64), array.shape)])


def pair_histograms(a: np.ndarray, dtype_a: str, b: np.ndarray, dtype_b: str, bins: int = 64,
                    cancelled=None, sample: int = HISTOGRAM_SAMPLE) -> PairHistograms | None:
    """Histograms of both arrays over the common range ``[min(min a, min b), max(max a, max b)]`` of at most
    ``sample`` evenly spread elements of each; complex values by magnitude. ``None`` when neither side has a
    finite value."""
    parts = [spread_sample(a, sample), spread_sample(b, sample)]
    stats = [compute_stats(x, bins=0, dtype_name=d, cancelled=cancelled) for x, d in zip(parts, (dtype_a, dtype_b))]
    lows = [float(s.min) for s in stats if s.finite and s.min is not None]
    highs = [float(s.max) for s in stats if s.finite and s.max is not None]
    if not lows or not highs:
        return None
    low, high = min(lows), max(highs)
    if not high > low:
        high = low + (abs(low) * 1e-6 or 1.0)
    counts = [histogram_of(array_chunks(x), low, high, bins, d)[0] for x, d in zip(parts, (dtype_a, dtype_b))]
    edges = np.histogram_bin_edges(np.zeros(0), bins, range=(low, high))
    return PairHistograms(edges, counts[0], counts[1], (int(parts[0].size), int(parts[1].size)),
                          (int(a.size), int(b.size)))
