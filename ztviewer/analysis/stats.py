"""Streaming statistics of a tensor, computed chunk by chunk with bounded memory.

min / max / mean / std are over the *finite* values only; NaN, +Inf and -Inf are counted apart and left out
of the histogram as well. Chunks are merged with the pairwise update of Chan, Golub & LeVeque (1979), so
the result does not depend on how the data is cut. Complex values are summarised by their magnitude, bool
as 0/1, bfloat16 / float8 after conversion to float32. Integer min / max stay exact Python ints.
The histogram needs the final min / max, so it is a second pass over the chunks (``bins=0`` skips it).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ztviewer.codec.mapped_pages import require_unchanged

from ._common import CancelCheck, Progress, checkpoint, report
from .slicing import BIT_DTYPES, presenter

ChunkSource = Callable[[], Iterable[np.ndarray]]
#: elements processed at once (temporaries of this many float64 stay in cache).
SUB_CHUNK = 1 << 18


@dataclass(slots=True)
class TensorStats:
    """Summary of one tensor (see the module docstring for what counts where).

    ``std`` is the population standard deviation (ddof=0). ``histogram`` has ``len(bin_edges) - 1`` counts
    of the finite values (as float64) in uniform bins from ``min`` to ``max``, the last bin closed, as
    ``np.histogram(..., range=(min, max))``; when all finite values are equal it is one bin ``[min, max]``.
    """

    count: int = 0
    finite: int = 0
    zeros: int = 0
    nan: int = 0
    pos_inf: int = 0
    neg_inf: int = 0
    min: float | int | None = None
    max: float | int | None = None
    mean: float | None = None
    std: float | None = None
    histogram: np.ndarray | None = None
    bin_edges: np.ndarray | None = None

    @property
    def nonzero(self) -> int:
        """Elements that are not zero (NaN counts as non-zero)."""
        return self.count - self.zeros

    @property
    def sparsity(self) -> float:
        """Fraction of elements that are exactly zero (0.0 for an empty tensor)."""
        return self.zeros / self.count if self.count else 0.0


@dataclass(slots=True)
class StatsAccumulator:
    """Running statistics; feed chunks with :meth:`update`, combine with :meth:`merge`."""

    count: int = 0
    finite: int = 0
    zeros: int = 0
    nan: int = 0
    pos_inf: int = 0
    neg_inf: int = 0
    min: float | int | None = None
    max: float | int | None = None
    mean: float = 0.0
    m2: float = 0.0
    int_total: int | None = 0  # exact sum while every chunk so far held integers (None after a float one)
    _present: dict = field(default_factory=dict, repr=False)

    def update(self, values: np.ndarray, dtype_name: str | None = None) -> None:
        """Add the elements of ``values`` (any shape; raw bfloat16/float8 bits need ``dtype_name``)."""
        flat = np.asarray(values).reshape(-1)
        key = (flat.dtype, dtype_name)
        if key not in self._present:
            self._present[key] = _stats_presenter(flat.dtype, dtype_name)
        present = self._present[key]
        for start in range(0, flat.size, SUB_CHUNK):
            self._update(present(flat[start:start + SUB_CHUNK]))

    def add_zeros(self, k: int) -> None:
        """Add ``k`` zero elements (the implied zeros of a sparse tensor)."""
        if k > 0:
            self._merge_part(k, k, 0.0, 0.0, 0, 0, exact=isinstance(self.min, int))

    def _update(self, x: np.ndarray) -> None:
        n = x.size
        if n == 0:
            return
        self.count += n
        self.zeros += int(np.count_nonzero(x == 0))
        with np.errstate(invalid="ignore"):  # signalling-NaN bit patterns (bfloat16, float8) cast quietly
            d = x.astype(np.float64)
        if x.dtype.kind in "iu":
            total = _exact_sum(x)
            if self.int_total is not None:
                self.int_total += total
            d -= total / n
            np.multiply(d, d, out=d)
            self._merge_part(n, 0, total / n, float(d.sum()), x.min(), x.max(), exact=True)
            return
        self.int_total = None
        with np.errstate(over="ignore", invalid="ignore"):
            float_total = float(d.sum())
        if not math.isfinite(float_total):
            finite = np.isfinite(x)
            self.nan += int(np.count_nonzero(np.isnan(x)))
            self.pos_inf += int(np.count_nonzero(x == np.inf))
            self.neg_inf += int(np.count_nonzero(x == -np.inf))
            x, d = x[finite], d[finite]
            if x.size == 0:
                return
        self._merge_part(x.size, 0, *_moments(d), x.min(), x.max())

    def _merge_part(self, n: int, zeros: int, mean: float, m2: float, lo: float, hi: float,
                    exact: bool = False) -> None:
        self.count += zeros
        self.zeros += zeros
        lo, hi = (int(lo), int(hi)) if exact else (float(lo), float(hi))
        na, total = self.finite, self.finite + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta * delta * na * n / total
        self.finite = total
        self.min = lo if self.min is None else min(self.min, lo)
        self.max = hi if self.max is None else max(self.max, hi)

    def merge(self, other: StatsAccumulator) -> None:
        """Fold ``other``'s elements into this accumulator (Chan et al. parallel update)."""
        self.count += other.count
        self.zeros += other.zeros
        self.nan, self.pos_inf, self.neg_inf = (self.nan + other.nan, self.pos_inf + other.pos_inf,
                                                self.neg_inf + other.neg_inf)
        if self.int_total is not None and other.int_total is not None:
            self.int_total += other.int_total
        else:
            self.int_total = None
        if other.finite and other.min is not None and other.max is not None:
            exact = isinstance(other.min, int) and (self.min is None or isinstance(self.min, int))
            self._merge_part(other.finite, 0, other.mean, other.m2, other.min, other.max, exact)

    def result(self) -> TensorStats:
        """The statistics so far (without histogram)."""
        has = self.finite > 0
        return TensorStats(self.count, self.finite, self.zeros, self.nan, self.pos_inf, self.neg_inf,
                           self.min, self.max, self._mean() if has else None,
                           math.sqrt(max(self.m2, 0.0) / self.finite) if has else None)

    def _mean(self) -> float:
        return self.int_total / self.finite if self.int_total is not None else self.mean


def _exact_sum(x: np.ndarray) -> int:
    """Exact sum of an integer chunk (at most 2**31 elements) as a Python int."""
    if x.dtype.itemsize <= 4:
        return int(x.sum(dtype=np.int64))
    high = (x >> 32).astype(np.int64)
    low = (x & 0xFFFFFFFF).astype(np.int64)
    return (int(high.sum()) << 32) + int(low.sum())


def _moments(d: np.ndarray) -> tuple[float, float]:
    """(mean, sum of squared deviations) of a float64 chunk, which is overwritten."""
    mean = float(d.sum()) / d.size
    d -= mean
    np.multiply(d, d, out=d)  # not BLAS: its thread wake-ups cost more than the arithmetic here
    return mean, float(d.sum())


def _stats_presenter(dtype: np.dtype, dtype_name: str | None) -> Callable[[np.ndarray], np.ndarray]:
    if dtype.kind == "b":
        return lambda x: x.view(np.uint8)
    if dtype.kind in "iu" and dtype_name not in BIT_DTYPES:
        return lambda x: x if x.dtype.isnative else x.astype(x.dtype.newbyteorder("="))
    return presenter(dtype, dtype_name, "magnitude")


def histogram_of(chunks: Iterable[np.ndarray], low: float, high: float, bins: int,
                 dtype_name: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the finite values of ``chunks`` in ``bins`` uniform bins over ``[low, high]``.

    Equal to ``np.histogram(finite_values.astype(float64), bins, range=(low, high))`` over all chunks'
    presented values (each element is binned on its own, so chunking does not matter); ``low < high``.
    Returns ``(counts, edges)``.
    """
    counts = np.zeros(bins, np.int64)
    edges = None
    for chunk in chunks:
        part, chunk_edges = _chunk_histogram(chunk, low, high, bins, dtype_name)
        counts += part
        edges = chunk_edges if chunk_edges is not None else edges
    if edges is None:
        edges = np.histogram_bin_edges(np.zeros(0), bins, range=(low, high))
    return counts, edges


def _chunk_histogram(chunk: np.ndarray, low: float, high: float, bins: int,
                     dtype_name: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    flat = np.asarray(chunk).reshape(-1)
    present = _stats_presenter(flat.dtype, dtype_name)
    counts = np.zeros(bins, np.int64)
    edges = None
    for start in range(0, flat.size, SUB_CHUNK):
        with np.errstate(invalid="ignore"):
            x = present(flat[start:start + SUB_CHUNK]).astype(np.float64, copy=False)
        part, edges = np.histogram(x[np.isfinite(x)], bins, range=(low, high))
        counts += part
    return counts, edges


def array_chunks(array: np.ndarray, chunk_elements: int = 1 << 22) -> Iterator[np.ndarray]:
    """Flat chunks of ``array`` (views for C-contiguous arrays, else row strips copied one at a time). A view of
    a file map is checked before every chunk (:func:`~ztviewer.codec.mapped_pages.require_unchanged`)."""
    if array.ndim == 0 or array.flags.c_contiguous:
        flat = array.reshape(-1)
        for start in range(0, flat.size, chunk_elements):
            require_unchanged(array)
            yield flat[start:start + chunk_elements]
        return
    row = max(1, array[0].size if array.shape[0] else 1)
    step = max(1, chunk_elements // row)
    for start in range(0, array.shape[0], step):
        require_unchanged(array)
        yield np.ravel(array[start:start + step])


def compute_stats(source: np.ndarray | ChunkSource, *, bins: int = 64, dtype_name: str | None = None,
                  total: int | None = None, implied_zeros: int = 0, cancelled: CancelCheck | None = None,
                  progress: Progress | None = None) -> TensorStats:
    """Statistics of all elements of ``source`` in one pass, plus a second pass for the histogram.

    Parameters
    ----------
    source:
        An array (memory-mapped is fine: it is read in chunks) or a zero-argument callable returning a
        fresh iterable of array chunks (called once per pass, e.g. over ``decode.iter_decoded``).
    bins:
        Histogram bins over ``[min, max]`` of the finite values; 0 for no histogram (one pass only).
    dtype_name:
        Canonical dtype when the chunks are raw bfloat16 / float8 bits.
    total:
        Elements in ``source`` (for progress; taken from the array when ``source`` is one).
    implied_zeros:
        Extra zero elements not present in the chunks (sparse tensors).
    cancelled, progress:
        ``cancelled()`` checked before each chunk; ``progress(done, total)`` in elements over both passes.
    """
    if isinstance(source, np.ndarray):
        array = source

        def source() -> Iterator[np.ndarray]:
            return array_chunks(array)

        total = array.size
    total = total or 0
    passes = 2 if bins > 0 else 1
    acc, done = StatsAccumulator(), 0
    for chunk in source():
        checkpoint(cancelled)
        acc.update(chunk, dtype_name)
        done += np.size(chunk)
        report(progress, done, total * passes)
    acc.add_zeros(implied_zeros)
    stats = acc.result()
    if bins > 0 and stats.finite and stats.min is not None and stats.max is not None:
        low, high = float(stats.min), float(stats.max)
        if low == high or np.any(np.diff(np.linspace(low, high, bins + 1)) <= 0):
            stats.histogram, stats.bin_edges = np.array([stats.finite], np.int64), np.array([low, high])
            return stats

        def counted() -> Iterator[np.ndarray]:
            nonlocal done
            for chunk in source():
                checkpoint(cancelled)
                yield chunk
                done += np.size(chunk)
                report(progress, done, total * passes)

        counts, edges = histogram_of(counted(), low, high, bins, dtype_name)
        if implied_zeros:
            counts += np.histogram(np.zeros(1), edges)[0] * implied_zeros
        stats.histogram, stats.bin_edges = counts, edges
    return stats
