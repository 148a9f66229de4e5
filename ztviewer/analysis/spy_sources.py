"""Sparsity patterns behind the spy view (no Qt): CSR matrices, 2-D planes of COO tensors, and dense planes
seen as sparse (exact zeros are structural). Each source bins its entries into screen pixels, lists exact
entries of a small region, and states its structure facts with per-row / per-column entry profiles."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ztviewer.analysis._common import block_edges
from ztviewer.analysis.slicing import to_display
from ztviewer.analysis.spy import SpyImage, markers, markers_csr, select_axes, spy_density, spy_density_csr
from ztviewer.analysis.structure import (
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
from ztviewer.codec import decode
from ztviewer.codec.mapped_pages import require_unchanged
from ztviewer.codec.sparse import SparseCOO, SparseCSR

from .mapped import done_with, releasing

#: at most this many entries are drawn one marker each; regions must also be at most this many rows/columns.
MARKER_LIMIT = 4096
MARKER_SPAN = 200
PROFILE_BINS = 512


def _unchanged(*arrays: np.ndarray | None) -> None:
    """Check the file under arrays that are views of its map (a large sparse structure is not read into memory)
    before a view reads them again: one that another program changed is an error, never a fatal fault."""
    for array in arrays:
        if array is not None:
            require_unchanged(array)


def _shown(values: np.ndarray | None, dtype_name: str) -> np.ndarray | None:
    """Values of exact markers as floats (complex by magnitude) for colouring."""
    return None if values is None else to_display(np.asarray(values), dtype_name, "magnitude")


class CsrSource:
    def __init__(self, sparse: SparseCSR) -> None:
        self.sparse, self.shape, self.dtype_name = sparse, sparse.shape, sparse.dtype

    def density(self, region, out_shape, ctx) -> SpyImage:
        s = self.sparse
        _unchanged(s.indptr, s.indices)
        return spy_density_csr(s.indptr, s.indices, self.shape, region, out_shape, cancelled=ctx.is_cancelled,
                               progress=ctx.report_progress)

    def markers(self, region):
        _unchanged(self.sparse.indptr, self.sparse.indices, self.sparse.values)
        found = markers_csr(self.sparse.indptr, self.sparse.indices, self.sparse.values, region, MARKER_LIMIT)
        return None if found is None else (found[0], found[1], _shown(found[2], self.dtype_name))

    def facts(self, ctx) -> tuple[SparseStructure, tuple, tuple]:
        s = self.sparse
        _unchanged(s.indptr, s.indices, s.values)
        facts = structure_facts_csr(s.indptr, s.indices, self.shape, decode.present(s.values, s.dtype))
        return facts, nnz_per_row_csr(s.indptr, PROFILE_BINS), nnz_per_col(s.indices, self.shape[1], PROFILE_BINS)


class CooPlaneSource:
    """Entries of one 2-D plane of a COO tensor (``rows``, ``cols``, their ``values``)."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray | None, shape: tuple[int, int],
                 dtype_name: str) -> None:
        self.rows, self.cols, self.values, self.shape, self.dtype_name = rows, cols, values, shape, dtype_name

    @classmethod
    def from_coo(cls, sparse: SparseCOO, axes: tuple[int, int], fixed: Mapping[int, int], project: bool = False):
        _unchanged(sparse.coords, sparse.values)
        if len(sparse.shape) == 1:
            cols = sparse.coordinates()[0]
            return cls(np.zeros_like(cols), cols, sparse.values, (1, int(sparse.shape[0])), sparse.dtype)
        plane = select_axes(sparse.coords, tuple(sparse.shape), axes, fixed, project)
        return cls(plane.rows, plane.cols, plane.values_of(sparse.values), plane.shape, sparse.dtype)

    def density(self, region, out_shape, ctx) -> SpyImage:
        _unchanged(self.rows, self.cols)
        return spy_density(self.rows, self.cols, self.shape, region, out_shape, cancelled=ctx.is_cancelled,
                           progress=ctx.report_progress)

    def markers(self, region):
        _unchanged(self.rows, self.cols, self.values)
        found = markers(self.rows, self.cols, self.values, region, MARKER_LIMIT)
        return None if found is None else (found[0], found[1], _shown(found[2], self.dtype_name))

    def facts(self, ctx):
        _unchanged(self.rows, self.cols, self.values)
        values = None if self.values is None else decode.present(self.values, self.dtype_name)
        facts = structure_facts(self.rows, self.cols, self.shape, values)
        return (facts, nnz_per_row(self.rows, self.shape[0], PROFILE_BINS),
                nnz_per_col(self.cols, self.shape[1], PROFILE_BINS))


class DensePlaneSource:
    """A dense 2-D plane (stored bits) whose non-zero elements are the entries."""

    def __init__(self, plane, dtype_name: str) -> None:
        self.plane, self.dtype_name, self.shape = plane, dtype_name, tuple(plane.shape)

    def density(self, region, out_shape, ctx) -> SpyImage:
        plane = self._presented_plane()
        try:
            return dense_spy(plane, region, out_shape, cancelled=ctx.is_cancelled, progress=ctx.report_progress)
        finally:
            done_with(plane.plane if isinstance(plane, _Presented) else plane)

    def _presented_plane(self):
        plane = releasing(self.plane)
        # float8 / bfloat16 bits: +0 and -0 are both zero, so compare presented values, strip by strip
        if self.dtype_name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            return _Presented(plane, self.dtype_name)
        return plane

    def markers(self, region):
        found = dense_markers(self._presented_plane(), region, MARKER_LIMIT)
        return None if found is None else (found[0], found[1], _shown(found[2], self.dtype_name))

    def facts(self, ctx):
        plane = self._presented_plane()
        try:
            facts, per_row, per_col = dense_structure(plane, cancelled=ctx.is_cancelled, progress=ctx.report_progress)
        finally:
            done_with(plane.plane if isinstance(plane, _Presented) else plane)
        return facts, _binned(per_row), _binned(per_col)


SpySource = CsrSource | CooPlaneSource | DensePlaneSource


class _Presented:
    def __init__(self, plane, dtype_name: str) -> None:
        self.plane, self.dtype_name, self.shape, self.ndim = plane, dtype_name, plane.shape, 2

    def __getitem__(self, key):
        return decode.present(np.asarray(self.plane[key]), self.dtype_name)


def _binned(per_line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    edges = block_edges(0, len(per_line), PROFILE_BINS)
    if len(per_line) == 0:
        return per_line, edges
    return np.add.reduceat(per_line, edges[:-1]), edges


@dataclass(frozen=True, slots=True)
class SpyResult:
    """A spy image of ``region`` and, when the region is small enough, its exact entries."""

    image: SpyImage
    region: tuple[int, int, int, int]
    markers: tuple[np.ndarray, np.ndarray, np.ndarray] | None   # (rows, cols, values) of a small region
    base: bool


@dataclass(frozen=True, slots=True)
class Prepared:
    source: SpySource
    facts: SparseStructure
    rows: tuple[np.ndarray, np.ndarray]
    cols: tuple[np.ndarray, np.ndarray]
    overview: SpyResult


def spy_region(ctx, source, region, out_shape, base: bool) -> SpyResult:
    r0, r1, c0, c1 = region
    found = None
    if r1 - r0 <= MARKER_SPAN and c1 - c0 <= MARKER_SPAN:
        found = source.markers(region)
    return SpyResult(source.density(region, out_shape, ctx), region, found, base)


def prepare(ctx, make_source, out_shape) -> Prepared:
    """Build the source (load / select a plane), its facts and profiles, and the whole-plane spy image."""
    source = make_source(ctx)
    facts, rows, cols = source.facts(ctx)
    region = (0, source.shape[0], 0, source.shape[1])
    return Prepared(source, facts, rows, cols, spy_region(ctx, source, region, out_shape, True))
