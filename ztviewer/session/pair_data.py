"""What the selected pair of a Compare tab shows: both sides loaded (dense bits or tensor-train cores) and the
histograms of their values, computed on a worker."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ztviewer.analysis.diff.planes import HISTOGRAM_SAMPLE, PREVIEW_SAMPLE, PairHistograms, pair_histograms
from ztviewer.codec.model import Tensor, TensorFile

from .decode_cache import DecodedCache
from .inspect_data import CancelCheck, DenseData, TTData, load_dense, load_tt
from .view_registry import view_kind


@dataclass(slots=True)
class PairData:
    """What a selected pair's views show (loaded on a worker)."""

    a: DenseData | TTData
    b: DenseData | TTData
    histograms: PairHistograms | None


def _load_side(tf: TensorFile, tensor: Tensor, cache: DecodedCache | None,
               cancelled: CancelCheck | None) -> DenseData | TTData:
    if view_kind(tensor) == "tt":
        return load_tt(tf, tensor)
    return load_dense(tf, tensor, cache=cache, cancelled=cancelled)


def plane_dtype(data: DenseData | TTData) -> str:
    """What a side's planes hold: stored bits of its dtype, or (tensor trains) reconstructed numbers."""
    if isinstance(data, TTData):
        return "complex128" if data.kind == "complex" else "float64"
    return data.dtype_name


def load_pair(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor, cache: DecodedCache | None,
              cancelled: CancelCheck | None = None, emit: Callable[[PairData], None] | None = None) -> PairData:
    """Both sides and their histograms. A large pair's histograms come in two steps: ``emit`` (when given)
    gets the pair with histograms of a small spread sample first, the result counts up to
    :data:`HISTOGRAM_SAMPLE` elements of each side: the work is bounded whatever the size."""
    data_a = _load_side(tf_a, a, cache, cancelled)
    data_b = _load_side(tf_b, b, cache, cancelled)
    if not (isinstance(data_a, DenseData) and isinstance(data_b, DenseData)):
        return PairData(data_a, data_b, None)
    arrays = (data_a.array, data_a.dtype_name, data_b.array, data_b.dtype_name)
    if emit is not None and max(data_a.array.size, data_b.array.size) > PREVIEW_SAMPLE:
        emit(PairData(data_a, data_b, pair_histograms(*arrays, cancelled=cancelled, sample=PREVIEW_SAMPLE)))
    return PairData(data_a, data_b, pair_histograms(*arrays, cancelled=cancelled, sample=HISTOGRAM_SAMPLE))
