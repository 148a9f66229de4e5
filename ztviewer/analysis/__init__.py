"""Numerical core of the tensor views: plane selection, screen-sized images, statistics, spy plots, TT facts.

Pure numpy, no Qt: every function can run headless or on a worker thread, takes ``cancelled`` /
``progress`` callbacks where the work is long, and reads large (memory-mapped) data in bounded strips.

Modules: :mod:`.slicing` (N-D → 2-D planes, value presentation), :mod:`.reduce` (strided previews, block
reductions), :mod:`.stats` and :mod:`.tensor_stats` (streaming statistics), :mod:`.spy` and
:mod:`.structure` (sparse patterns), :mod:`.tt_view` (tensor trains).
"""
from .reduce import Image, block_reduce, display_levels, strided_preview
from .slicing import plane, presenter, to_display
from .spy import SpyImage, markers, markers_csr, select_axes, spy_density, spy_density_csr
from .stats import StatsAccumulator, TensorStats, compute_stats
from .structure import (
    SparseStructure,
    dense_markers,
    dense_spy,
    dense_structure,
    nnz_per_col,
    nnz_per_row,
    nnz_per_row_csr,
    structure_facts,
    structure_facts_csr,
)
from .tensor_stats import file_statistics, tensor_stats
from .tt_view import TTPlane, TTSummary, tt_slice2d, tt_summary

__all__ = [
    "Image", "SparseStructure", "SpyImage", "StatsAccumulator", "TTPlane", "TTSummary", "TensorStats",
    "block_reduce", "compute_stats", "dense_markers", "dense_spy", "dense_structure", "display_levels",
    "file_statistics", "markers", "markers_csr", "nnz_per_col", "nnz_per_row", "nnz_per_row_csr", "plane",
    "presenter", "select_axes", "spy_density", "spy_density_csr", "strided_preview", "structure_facts",
    "structure_facts_csr", "tensor_stats", "to_display", "tt_slice2d", "tt_summary",
]
