"""Bounded memory: large memory-mapped planes are reduced strip by strip (tracemalloc peaks)."""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ztviewer.analysis import spy
from ztviewer.analysis.reduce import block_reduce, strided_preview
from ztviewer.analysis.stats import compute_stats
from ztviewer.analysis.structure import dense_spy, dense_structure

N = 4096
STRIP = 4 << 20
SLACK = 256 << 10  # edges, index arrays, Python objects


@pytest.fixture(scope="module")
def mapped(tmp_path_factory) -> np.memmap:
    path: Path = tmp_path_factory.mktemp("mem") / "plane.f32"
    rng = np.random.default_rng(0)
    out = np.memmap(path, dtype=np.float32, mode="w+", shape=(N, N))
    for r in range(0, N, 512):
        out[r:r + 512] = rng.standard_normal((512, N), dtype=np.float32)
    out[100, 200] = 1e6  # a spike a stride would miss
    out.flush()
    del out
    return np.memmap(path, dtype=np.float32, mode="r", shape=(N, N))


def peak_of(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("method", ["maxabs", "mean", "max", "min"])
@pytest.mark.parametrize("out_shape", [(1024, 1024), (1000, 700), (3, 5)])
def test_block_reduce_peak_is_strip_plus_output(mapped, method, out_shape) -> None:
    image, peak = peak_of(lambda: block_reduce(mapped, None, out_shape, method, strip_bytes=STRIP))
    out_bytes = image.data.nbytes * (3 if method == "mean" else 1)  # mean keeps float64 sums + counts
    assert peak <= STRIP + out_bytes + SLACK, f"peak {peak:,} B > strip {STRIP:,} + output {out_bytes:,}"
    if method == "maxabs":
        assert image.data.max() == np.float32(1e6)


def test_strided_preview_touches_only_the_preview(mapped) -> None:
    image, peak = peak_of(lambda: strided_preview(mapped, 512, 512))
    assert image.data.shape == (512, 512)
    assert peak <= image.data.nbytes + SLACK


def test_statistics_and_dense_spy_are_bounded(mapped) -> None:
    stats, peak = peak_of(lambda: compute_stats(mapped, bins=32))
    assert stats.count == N * N and stats.max == np.float32(1e6)
    nonzero = int(np.count_nonzero(mapped))
    assert peak <= 64 << 20  # chunk of 4M float32 views + 256K-element float64 temporaries
    spy, peak = peak_of(lambda: dense_spy(mapped, None, (256, 256), strip_bytes=STRIP))
    assert spy.counts.sum() == nonzero
    assert peak <= STRIP + spy.counts.nbytes + SLACK
    (facts, per_row, per_col), peak = peak_of(lambda: dense_structure(mapped, strip_bytes=STRIP))
    assert facts.nnz == nonzero
    assert peak <= STRIP + per_row.nbytes + per_col.nbytes + SLACK


@pytest.mark.parametrize("region", [None, (1000, 2_900_000, 5, 2_999_000)])
def test_coo_spy_peak_is_chunk_buffers_plus_tally(region) -> None:
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 3_000_000, 3_000_000).astype(np.uint64)
    cols = rng.integers(0, 3_000_000, 3_000_000).astype(np.uint64)
    r0, r1, c0, c1 = region or (0, 3_000_000, 0, 3_000_000)
    inside = int(np.count_nonzero((rows >= r0) & (rows < r1) & (cols >= c0) & (cols < c1)))
    image, peak = peak_of(lambda: spy.spy_density(rows, cols, (3_000_000, 3_000_000), region, (512, 512)))
    assert image.counts.sum() == inside
    buffers = 2 * spy._TALLY * 8  # uint64 pixel ids and column bins of one chunk
    table = 514 * 514 * 4  # int32 tally, with the outside bins of a region
    output = 514 * 514 * 8 + image.counts.nbytes  # its int64 copy, and the crop of a region
    assert peak <= buffers + table + output + SLACK, f"peak {peak:,} B"

