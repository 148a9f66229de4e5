"""Streaming statistics equal numpy's over the whole array, however the data is chunked."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ztviewer.analysis.stats import StatsAccumulator, array_chunks, compute_stats
from ztviewer.codec.dtypes import to_float32
from ztviewer.codec.errors import Cancelled


def cut(a: np.ndarray, cuts: list[int]):
    flat = a.reshape(-1)
    edges = sorted({0, flat.size, *[c % (flat.size + 1) for c in cuts]})
    pieces = [flat[lo:hi] for lo, hi in itertools.pairwise(edges)]
    return lambda: iter(pieces)


def assert_matches_numpy(stats, values: np.ndarray, bins: int) -> None:
    """Compare with numpy over the presented values (float64 for the moments)."""
    flat = values.reshape(-1)
    finite = flat[np.isfinite(flat)] if flat.dtype.kind == "f" else flat
    assert stats.count == flat.size
    assert stats.finite == finite.size
    assert stats.zeros == np.count_nonzero(flat == 0)
    if flat.dtype.kind == "f":
        assert stats.nan == np.count_nonzero(np.isnan(flat))
        assert stats.pos_inf == np.count_nonzero(flat == np.inf)
        assert stats.neg_inf == np.count_nonzero(flat == -np.inf)
    if finite.size == 0:
        assert stats.min is None and stats.mean is None and stats.histogram is None
        return
    assert stats.min == np.nanmin(finite) and stats.max == np.nanmax(finite)
    as64 = finite.astype(np.float64)
    # Chunked merging cancels like any float sum: its error scales with the largest magnitude, not the mean.
    cancellation = 1e-14 * float(np.abs(as64).max()) * as64.size
    assert stats.mean == pytest.approx(as64.mean(), rel=1e-12, abs=max(cancellation, 1e-300))
    assert stats.std == pytest.approx(np.std(as64, ddof=0), rel=1e-9, abs=1e-300)
    if bins and stats.min == stats.max:
        assert stats.histogram.tolist() == [finite.size] and stats.bin_edges.tolist() == [stats.min] * 2
    elif bins:
        expected, edges = np.histogram(as64, bins, range=(float(stats.min), float(stats.max)))
        np.testing.assert_array_equal(stats.histogram, expected)
        np.testing.assert_array_equal(stats.bin_edges, edges)
        assert stats.histogram.sum() == finite.size


floats = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64]),
    shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=40),
    elements=st.one_of(st.floats(-1e6, 1e6, width=32), st.just(0.0), st.just(np.nan), st.just(np.inf),
                       st.just(-np.inf)),
)


@settings(max_examples=200, deadline=None)
@given(floats, st.lists(st.integers(0, 10**6), max_size=8), st.sampled_from([0, 1, 7, 64]))
def test_random_chunkings_match_numpy(a, cuts, bins) -> None:
    stats = compute_stats(cut(a, cuts), bins=bins, total=a.size)
    assert_matches_numpy(stats, a, bins)


@settings(max_examples=60, deadline=None)
@given(st.floats(-1e5, 1e5), st.floats(1e-6, 1e3), st.lists(st.integers(0, 10**5), max_size=6))
def test_large_offset_small_spread_is_stable(ratio, scale, cuts) -> None:
    """Mean up to 1e5 standard deviations away from 0: the chunked merge keeps std to 1e-9."""
    a = ratio * scale + scale * np.random.default_rng(abs(int(ratio)) % 2**32).standard_normal(5000)
    stats = compute_stats(cut(a, cuts), bins=0)
    assert stats.std == pytest.approx(np.std(a), rel=1e-9)
    assert stats.mean == pytest.approx(np.mean(a), rel=1e-12, abs=1e-12 * scale)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(max_dims=2, max_side=50),
                  elements=st.integers(-2**62, 2**62)), st.lists(st.integers(0, 3000), max_size=5))
def test_integers_exact_min_max(a, cuts) -> None:
    stats = compute_stats(cut(a, cuts), bins=16)
    assert isinstance(stats.min, int) and stats.min == int(a.min()) and stats.max == int(a.max())
    assert stats.mean == sum(int(v) for v in a.flat) / a.size  # exact, as integer sums are
    if a.min() == a.max():
        assert stats.histogram.tolist() == [a.size]
    else:
        expected = np.histogram(a.astype(np.float64), 16, range=(float(a.min()), float(a.max())))[0]
        np.testing.assert_array_equal(stats.histogram, expected)


def test_bool_complex_float16_and_bits() -> None:
    rng = np.random.default_rng(0)
    flags = rng.random(1000) < 0.3
    stats = compute_stats(flags, bins=2)
    assert (stats.min, stats.max, stats.zeros) == (0, 1, np.count_nonzero(~flags))
    assert stats.mean == pytest.approx(flags.mean()) and stats.histogram.tolist() == [
        np.count_nonzero(~flags), np.count_nonzero(flags)]
    z = rng.standard_normal(999) + 1j * rng.standard_normal(999)
    z[5] = np.nan
    z[6] = 0
    stats = compute_stats(z, bins=8)
    assert_matches_numpy(stats, np.abs(z), 8)
    half = rng.standard_normal(777).astype(np.float16)
    assert_matches_numpy(compute_stats(half, bins=8), half.astype(np.float32), 8)
    bits = rng.integers(0, 2**16, 5000).astype(np.uint16)
    stats = compute_stats(lambda: array_chunks(bits, 999), bins=8, dtype_name="bfloat16")
    assert_matches_numpy(stats, to_float32(bits, "bfloat16"), 8)


def test_sparsity_implied_zeros_and_empty() -> None:
    values = np.array([1.0, -2.0, 0.0, np.nan])
    stats = compute_stats(values, bins=4, implied_zeros=96)
    dense = np.concatenate([values, np.zeros(96)])
    assert_matches_numpy(stats, dense, 4)
    assert stats.sparsity == pytest.approx(97 / 100) and stats.nonzero == 3
    empty = compute_stats(np.zeros(0, np.float32))
    assert empty.count == 0 and empty.mean is None and empty.sparsity == 0.0
    all_nan = compute_stats(np.full(10, np.nan))
    assert all_nan.nan == 10 and all_nan.finite == 0 and all_nan.std is None


def test_merge_matches_single_pass() -> None:
    rng = np.random.default_rng(3)
    parts = [rng.standard_normal(n) * (k + 1) + k * 100 for k, n in enumerate([10, 1, 5000, 0, 77])]
    parts[2][3] = np.inf
    total = StatsAccumulator()
    for p in parts:
        acc = StatsAccumulator()
        acc.update(p)
        total.merge(acc)
    single = StatsAccumulator()
    single.update(np.concatenate(parts))
    a, b = total.result(), single.result()
    assert (a.count, a.finite, a.pos_inf, a.min, a.max) == (b.count, b.finite, b.pos_inf, b.min, b.max)
    assert a.std == pytest.approx(b.std, rel=1e-12) and a.mean == pytest.approx(b.mean, rel=1e-12)


def test_memmap_non_contiguous_and_progress(tmp_path) -> None:
    a = np.random.default_rng(4).standard_normal((300, 70)).astype(np.float32)
    path = tmp_path / "a.f32"
    a.tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r", shape=(300, 70))
    seen = []
    stats = compute_stats(mm, bins=10, progress=lambda d, t: seen.append((d, t)))
    assert_matches_numpy(stats, a, 10)
    assert seen[-1] == (2 * a.size, 2 * a.size)
    assert_matches_numpy(compute_stats(mm.T[::2], bins=10), a.T[::2], 10)
    pieces = list(array_chunks(mm.T, 1000))
    assert sum(p.size for p in pieces) == a.size and max(p.size for p in pieces) <= 1000


def test_cancel() -> None:
    a = np.ones(10_000)
    with pytest.raises(Cancelled):
        compute_stats(lambda: array_chunks(a, 100), cancelled=lambda: True)
