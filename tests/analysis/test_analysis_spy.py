"""Spy density against np.histogram2d; structure facts against the dense matrix; axis selection."""
from __future__ import annotations

import bisect
import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ztviewer.analysis import spy
from ztviewer.analysis._common import block_edges
from ztviewer.analysis.spy import markers, markers_csr, select_axes, spy_density, spy_density_csr
from ztviewer.analysis.structure import (
    count_histogram,
    dense_markers,
    dense_spy,
    dense_structure,
    nnz_per_col,
    nnz_per_line,
    nnz_per_row,
    nnz_per_row_csr,
    structure_facts,
    structure_facts_csr,
)
from ztviewer.codec.errors import Cancelled


def ref_edges(start: int, stop: int, bins: int) -> np.ndarray:
    n = stop - start
    bins = min(bins, n)
    return np.array([start + -(-i * n // bins) for i in range(bins + 1)], dtype=float)


def histogram_reference(rows, cols, region, out_shape) -> np.ndarray:
    r0, r1, c0, c1 = region
    inside = (rows >= r0) & (rows < r1) & (cols >= c0) & (cols < c1)
    counts, _, _ = np.histogram2d(rows[inside].astype(float), cols[inside].astype(float),
                                  bins=[ref_edges(r0, r1, out_shape[0]), ref_edges(c0, c1, out_shape[1])])
    return counts


def csr_of(rows, cols, n_rows):
    order = np.lexsort((cols, rows))
    indptr = np.searchsorted(rows[order], np.arange(n_rows + 1)).astype(np.uint64)
    return indptr, cols[order].astype(np.uint64)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_spy_density_matches_histogram2d(data) -> None:
    n0, n1 = data.draw(st.integers(1, 300)), data.draw(st.integers(1, 300))
    nnz = data.draw(st.integers(0, 3000))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    rows = rng.integers(0, n0, nnz).astype(np.uint64)
    cols = rng.integers(0, n1, nnz).astype(data.draw(st.sampled_from([np.uint64, np.int64, np.int32])))
    if data.draw(st.booleans()):
        order = np.argsort(rows, kind="stable")
        rows, cols = rows[order], cols[order]
    r0 = data.draw(st.integers(0, n0 - 1))
    r1 = data.draw(st.integers(r0 + 1, n0))
    c0 = data.draw(st.integers(0, n1 - 1))
    c1 = data.draw(st.integers(c0 + 1, n1))
    region = data.draw(st.sampled_from([(0, n0, 0, n1), (r0, r1, c0, c1)]))
    out = (data.draw(st.integers(1, 64)), data.draw(st.integers(1, 64)))
    expected = histogram_reference(rows, cols, region, out)
    image = spy_density(rows, cols, (n0, n1), region, out)
    np.testing.assert_array_equal(image.counts, expected)
    np.testing.assert_array_equal(image.row_edges, ref_edges(region[0], region[1], out[0]))
    indptr, indices = csr_of(rows, cols, n0)
    np.testing.assert_array_equal(spy_density_csr(indptr, indices, (n0, n1), region, out).counts, expected)


def test_zoomed_in_is_one_element_per_pixel_and_density() -> None:
    rows, cols = np.array([0, 2, 2, 5]), np.array([1, 3, 3, 0])
    image = spy_density(rows, cols, (6, 4), None, (100, 100))
    assert image.counts.shape == (6, 4) and image.counts[2, 3] == 2 and image.counts.sum() == 4
    coarse = spy_density(rows, cols, (6, 4), None, (3, 2))
    np.testing.assert_allclose(coarse.density, coarse.counts / 4.0)


def test_large_extent_and_progress_cancel() -> None:
    rng = np.random.default_rng(1)
    n = 10**12  # no per-row table: indices binned arithmetically
    rows = rng.integers(0, n, 50_000).astype(np.uint64)
    cols = rng.integers(0, n, 50_000).astype(np.uint64)
    image = spy_density(rows, cols, (n, n), None, (64, 64))
    assert image.counts.sum() == 50_000
    expected = np.zeros((64, 64), np.int64)
    np.add.at(expected, ((rows.astype(object) * 64 // n).astype(np.int64),
                         (cols.astype(object) * 64 // n).astype(np.int64)), 1)
    np.testing.assert_array_equal(image.counts, expected)
    with pytest.raises(Cancelled):
        spy_density(rows, cols, (n, n), None, (64, 64), cancelled=lambda: True)
    seen = []
    order = np.argsort(rows)
    spy_density(rows[order], cols[order], (n, n), None, (64, 64), progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (50_000, 50_000)


def python_bin(x: int, lo: int, hi: int, bins: int, clip: bool) -> int:
    """The bin of ``x`` in exact integers: the one whose block edges hold it; 0 / bins + 1 outside."""
    if not lo <= x < hi:
        assert clip
        return 0 if x < lo else bins + 1
    i = bisect.bisect_right(python_edges(lo, hi, bins), x) - 1
    return i + 1 if clip else i


@functools.cache
def python_edges(lo: int, hi: int, bins: int) -> list[int]:
    return [lo + -(-i * (hi - lo) // bins) for i in range(bins + 1)]


def binned(xs: list[int], lo: int, hi: int, bins: int, clip: bool) -> list[int]:
    out = np.empty(len(xs), np.uint64)
    return spy._bin_into(np.array(xs, np.int64), spy._axis(lo, hi, bins, clip), out).tolist()


def probes(lo: int, hi: int, bins: int, clip: bool, extent: int) -> list[int]:
    """Coordinates where a binning can go wrong: every block edge and its left neighbour, the ends, and
    (when clipping) just outside and far outside the range."""
    edges = [int(e) for e in block_edges(lo, hi, bins)]
    xs = {lo, hi - 1, *edges[:-1], *(e - 1 for e in edges[1:])}
    if clip:
        xs |= {0, lo - 1, hi, hi + 1, extent - 1}
    return sorted(x for x in xs if 0 <= x < extent)


def test_binning_is_exact_for_every_coordinate_of_small_ranges() -> None:
    for n in range(1, 41):
        for lo in (0, 3):
            hi = lo + n
            for bins in range(1, n + 1):
                assert binned(list(range(lo, hi)), lo, hi, bins, False) == \
                    [python_bin(x, lo, hi, bins, False) for x in range(lo, hi)]
                xs = list(range(hi + 3))
                assert binned(xs, lo, hi, bins, True) == [python_bin(x, lo, hi, bins, True) for x in xs]


def last_exact_shift(bins: int, clip: bool, lo: int = 2, hi: int = 2**40) -> int:
    """An extent ``n`` binned by multiply-shift while ``n + 1`` falls back to division."""
    def fast(n: int) -> bool:
        return bool(spy._axis(0, n, bins, clip).multiplier)

    assert fast(lo) and not fast(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fast(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("bins", [1, 2, 3, 7, 1000, 1024, 1026])
@pytest.mark.parametrize("clip", [False, True])
def test_binning_is_exact_at_block_edges_of_large_ranges(bins, clip) -> None:
    boundary = last_exact_shift(bins, clip)
    extents = {10**6, 2**24 + 1, 2**31 - 1, 2**31, 2**31 + 1, 2**32 + 7, 3 * 2**33 + 1, 10**12,
               boundary - 1, boundary, boundary + 1, boundary + 2}
    rng = np.random.default_rng(bins)
    for n in sorted(extents):
        if n < bins:
            continue
        lo = 2 if clip else 0  # a region [2, n + 2) of an axis of n + 5 when clipping
        hi, extent = lo + n, n + 5 if clip else n
        xs = probes(lo, hi, bins, clip, extent) + rng.integers(0, extent, 200).tolist()
        if not clip:
            xs = [x for x in xs if lo <= x < hi]
        assert binned(xs, lo, hi, bins, clip) == [python_bin(x, lo, hi, bins, clip) for x in xs], n


def exact_counts(rows, cols, region, out_shape) -> np.ndarray:
    """Spy counts from Python-int block edges (independent of the module's arithmetic)."""
    r0, r1, c0, c1 = region
    re, ce = (np.array([lo + -(-i * (hi - lo) // min(b, hi - lo)) for i in range(min(b, hi - lo) + 1)],
                       dtype=np.int64) for lo, hi, b in ((r0, r1, out_shape[0]), (c0, c1, out_shape[1])))
    rows, cols = rows.astype(np.int64), cols.astype(np.int64)
    inside = (rows >= r0) & (rows < r1) & (cols >= c0) & (cols < c1)
    i = np.searchsorted(re, rows[inside], side="right") - 1
    j = np.searchsorted(ce, cols[inside], side="right") - 1
    counts = np.zeros((len(re) - 1, len(ce) - 1), np.int64)
    np.add.at(counts, (i, j), 1)
    return counts


@pytest.mark.parametrize("shape", [(2**31 - 1, 2**31 + 1), (2**31 + 5, 2**33 + 3), (3 * 2**40, 7),
                                   (1000, 997), (10**6, 10**6)])
@pytest.mark.parametrize("out_shape", [(3, 5), (1024, 1024), (999, 1)])
def test_coo_spy_is_exact_near_and_beyond_2_31(shape, out_shape) -> None:
    n0, n1 = shape
    rng = np.random.default_rng(n0 % 1000 + out_shape[0])
    regions = [(0, n0, 0, n1), (n0 // 3, n0 - 1, 1, n1), (max(0, n0 - 2**31 - 9), n0, 0, max(1, n1 // 5))]
    for region in regions:
        edges = [probes(region[0], region[1], out_shape[0], True, n0),
                 probes(region[2], region[3], out_shape[1], True, n1)]
        rows = np.concatenate([rng.choice(edges[0], 3000), rng.integers(0, n0, 3000)]).astype(np.uint64)
        cols = np.concatenate([rng.choice(edges[1], 3000), rng.integers(0, n1, 3000)]).astype(np.uint64)
        image = spy_density(rows, cols, shape, region, out_shape)
        assert image.counts.dtype == np.int64
        np.testing.assert_array_equal(image.counts, exact_counts(rows, cols, region, out_shape))


def test_coo_spy_of_no_entries() -> None:
    empty = np.array([], np.uint64)
    for region, shape in [(None, (6, 4)), ((1, 5, 0, 3), (6, 4)), (None, (2**33, 2**31))]:
        image = spy_density(empty, empty, shape, region, (3, 3))
        assert image.counts.shape == (3, 3) and image.counts.dtype == np.int64 and not image.counts.any()


def test_coo_spy_in_many_chunks_and_with_an_int64_tally(monkeypatch) -> None:
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 5000, 20_000).astype(np.uint64)
    cols = rng.integers(0, 3001, 20_000).astype(np.uint64)
    region = (17, 4990, 3, 2999)
    expected = {r: exact_counts(rows, cols, r if r else (0, 5000, 0, 3001), (64, 33)) for r in (None, region)}
    monkeypatch.setattr(spy, "_TALLY", 999)
    for limit in (spy._TALLY32, 0):  # 0: counted in int64
        monkeypatch.setattr(spy, "_TALLY32", limit)
        for r in (None, region):
            seen: list[tuple[int, int]] = []
            image = spy_density(rows, cols, (5000, 3001), r, (64, 33), progress=lambda *p, seen=seen: seen.append(p))
            np.testing.assert_array_equal(image.counts, expected[r])
            assert len(seen) == 21 and seen[-1] == (20_000, 20_000)
    with pytest.raises(Cancelled):
        spy_density(rows, cols, (5000, 3001), None, (64, 33), cancelled=lambda: True)


def test_markers_only_when_few() -> None:
    rows, cols = np.array([1, 5, 5, 9]), np.array([2, 2, 8, 9])
    values = np.array([10.0, 20.0, 30.0, 40.0])
    r, c, v = markers(rows, cols, values, (4, 10, 0, 9))
    assert r.tolist() == [5, 5] and c.tolist() == [2, 8] and v.tolist() == [20.0, 30.0]
    assert markers(rows, cols, values, (0, 10, 0, 10), threshold=3) is None
    indptr, indices = csr_of(rows, cols, 10)
    r, c, v = markers_csr(indptr, indices, values, (4, 10, 0, 9))
    assert r.tolist() == [5, 5] and c.tolist() == [2, 8] and v.tolist() == [20.0, 30.0]
    assert markers_csr(indptr, indices, None, (0, 10, 0, 10), threshold=3) is None
    dense = np.zeros((10, 10))
    dense[rows, cols] = values
    r, c, v = dense_markers(dense, (4, 10, 0, 9))
    assert sorted(zip(r.tolist(), c.tolist(), v.tolist(), strict=True)) == [(5, 2, 20.0), (5, 8, 30.0)]
    assert dense_markers(dense, (0, 10, 0, 10), threshold=99) is None


def test_select_axes_of_3d_coo() -> None:
    rng = np.random.default_rng(2)
    shape = (7, 5, 9)
    coords = np.stack([rng.integers(0, d, 400) for d in shape]).astype(np.uint64)
    sel = select_axes(coords, shape, axes=(2, 0), fixed={1: 3})
    keep = coords[1] == 3
    assert sel.shape == (9, 7)
    np.testing.assert_array_equal(sel.rows, coords[2][keep])
    np.testing.assert_array_equal(sel.cols, coords[0][keep])
    np.testing.assert_array_equal(sel.positions, np.flatnonzero(keep))
    default = select_axes(coords, shape, axes=(0, 1))
    np.testing.assert_array_equal(default.positions, np.flatnonzero(coords[2] == 0))
    projected = select_axes(coords, shape, axes=(0, 1), project=True)
    assert projected.positions.size == 400
    image = spy_density(projected.rows, projected.cols, projected.shape, None, (7, 5))
    dense = np.zeros(shape)
    np.add.at(dense, tuple(coords.astype(np.int64)), 1)
    np.testing.assert_array_equal(image.counts, dense.sum(axis=2))
    for bad in [{"axes": (0, 0)}, {"axes": (0, 3)}, {"fixed": {0: 1}}, {"fixed": {2: 9}}]:
        with pytest.raises((ValueError, IndexError)):
            select_axes(coords, shape, **bad)


def dense_reference(a: np.ndarray) -> dict:
    i, j = np.nonzero(a)
    d = i - j
    return {"nnz": i.size, "lower_bandwidth": int(max(0, d.max(initial=0))),
                "upper_bandwidth": int(max(0, (-d).max(initial=0))),
                "empty_rows": int(np.count_nonzero(~a.any(axis=1))),
                "empty_cols": int(np.count_nonzero(~a.any(axis=0)))}


@pytest.mark.parametrize("seed", range(12))
def test_structure_facts_all_paths_agree(seed) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 80, 2))
    a = np.where(rng.random(shape) < rng.choice([0.0, 0.02, 0.3]), rng.standard_normal(shape), 0.0)
    if seed == 3:
        a = np.zeros(shape)
        np.fill_diagonal(a, np.arange(1.0, 1 + min(shape)))
    if seed == 4:
        a[0, -1] = np.nan  # NaN is an entry
    expected = dense_reference(a)
    i, j = np.nonzero(a)
    stored = a[i, j].copy()
    stored[::3] = 0.0  # explicit zeros are still entries
    for facts in [structure_facts(i.astype(np.uint64), j, shape, stored),
                  structure_facts_csr(*csr_of(i, j, shape[0]), shape, stored),
                  dense_structure(a, strip_bytes=int(rng.choice([1, 500, 1 << 20])))[0]]:
        got = {k: getattr(facts, k) for k in expected}
        assert got == expected
        assert facts.bandwidth == max(expected["lower_bandwidth"], expected["upper_bandwidth"])
        assert facts.density == pytest.approx(expected["nnz"] / (shape[0] * shape[1]))
    assert structure_facts(i, j, shape, stored).explicit_zeros == np.count_nonzero(stored == 0)
    _, per_row, per_col = dense_structure(a)
    np.testing.assert_array_equal(per_row, np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(per_col, np.count_nonzero(a, axis=0))
    counts, edges = nnz_per_line(i, shape[0])
    np.testing.assert_array_equal(counts, per_row)
    np.testing.assert_array_equal(nnz_per_row(i, shape[0])[0], per_row)
    np.testing.assert_array_equal(nnz_per_col(j, shape[1])[0], per_col)
    indptr, _ = csr_of(i, j, shape[0])
    np.testing.assert_array_equal(nnz_per_row_csr(indptr)[0], per_row)
    np.testing.assert_array_equal(nnz_per_row_csr(indptr, bins=5)[0], nnz_per_row(i, shape[0], bins=5)[0])
    banded, edges = nnz_per_line(j, shape[1], bins=7)
    np.testing.assert_array_equal(banded, np.add.reduceat(per_col, edges[:-1].astype(int)))
    hist, _ = count_histogram(per_row, bins=5)
    assert hist.sum() == shape[0]
    out = (int(rng.integers(1, 30)), int(rng.integers(1, 30)))
    np.testing.assert_array_equal(dense_spy(a, None, out, strip_bytes=300).counts,
                                  histogram_reference(i, j, (0, shape[0], 0, shape[1]), out))


def test_dense_spy_region_and_cancel() -> None:
    a = np.zeros((100, 120), np.float32)
    a[::7, ::5] = 1.0
    i, j = np.nonzero(a)
    region = (13, 90, 4, 111)
    np.testing.assert_array_equal(dense_spy(a, region, (10, 9)).counts,
                                  histogram_reference(i, j, region, (10, 9)))
    with pytest.raises(Cancelled):
        dense_spy(a, None, (10, 10), cancelled=lambda: True)
    with pytest.raises(Cancelled):
        dense_structure(a, cancelled=lambda: True)


@pytest.mark.parametrize("ncols, col, width", [(2**53 + 1, 2**53, 1024), (1024819115206086202, 1024819115206086201, 9),
                                               (2**63 - 1, 2**63 - 2, 1000)])
@pytest.mark.parametrize("sorted_rows", [False, True], ids=["coo", "banded"])
def test_columns_too_long_for_int64_products_are_binned_exactly(ncols, col, width, sorted_rows):
    rows = np.array([0, 0, 1]) if sorted_rows else np.array([1, 0, 0])
    cols = np.array([0, col, 0])
    if sorted_rows:
        counts = spy_density_csr(np.array([0, 2, 3]), cols, (2, ncols), None, (1, width)).counts
    else:
        counts = spy_density(rows, cols, (2, ncols), None, (1, width)).counts
    expected = np.zeros((1, width), np.int64)
    expected[0, 0] = 2
    expected[0, col * width // ncols] += 1
    assert counts.tolist() == expected.tolist()


def test_block_edges_stay_exact_when_their_products_overflow_int64():
    n, bins = 2**62 + 3, 7
    assert block_edges(5, 5 + n, bins).tolist() == [5 + -(-i * n // bins) for i in range(bins + 1)]


def test_a_plane_holding_every_entry_is_views_not_copies() -> None:
    coords = np.array([[3, 1, 2, 0], [0, 2, 1, 3]], dtype=np.uint64)
    values = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    plane = select_axes(coords, (4, 4))
    assert np.shares_memory(plane.rows, coords) and np.shares_memory(plane.cols, coords)
    assert plane.values_of(values) is values
    np.testing.assert_array_equal(plane.positions, np.arange(4))
    np.testing.assert_array_equal(plane.rows, [3, 1, 2, 0])
