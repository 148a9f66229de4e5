"""Block reductions and strided previews against the slow, obvious numpy computation."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ztviewer.analysis._common import block_edges
from ztviewer.analysis.reduce import block_reduce, display_levels, strided_preview
from ztviewer.codec.dtypes import to_float32
from ztviewer.codec.errors import Cancelled

REDUCERS = {
    "maxabs": lambda b: np.nanmax(np.abs(b)),
    "max": np.nanmax,
    "min": np.nanmin,
    "mean": np.nanmean,
}


def ref_edges(start: int, stop: int, bins: int) -> list[int]:
    n = stop - start
    bins = min(bins, n)
    return [start + -(-i * n // bins) for i in range(bins + 1)]


def reference(a: np.ndarray, region, out_shape, method: str) -> np.ndarray:
    """Loop over the blocks, reducing each with numpy's nan-functions in float64."""
    r0, r1, c0, c1 = region
    re, ce = ref_edges(r0, r1, out_shape[0]), ref_edges(c0, c1, out_shape[1])
    out = np.empty((len(re) - 1, len(ce) - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN blocks
        for i in range(len(re) - 1):
            for j in range(len(ce) - 1):
                block = a[re[i]:re[i + 1], ce[j]:ce[j + 1]].astype(np.float64)
                out[i, j] = REDUCERS[method](block)
    return out


def check(a, region, out_shape, method, **kw) -> None:
    image = block_reduce(a, region, out_shape, method, **kw)
    r0, r1, c0, c1 = region
    np.testing.assert_array_equal(image.row_edges, ref_edges(r0, r1, out_shape[0]))
    np.testing.assert_array_equal(image.col_edges, ref_edges(c0, c1, out_shape[1]))
    assert image.data.flags.c_contiguous
    if image.method == "exact":
        np.testing.assert_array_equal(image.data, a[r0:r1, c0:c1])
        return
    expected = reference(a, region, out_shape, method)
    assert image.data.shape == expected.shape
    if method == "mean":
        rtol = 1e-5 if image.data.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(image.data, expected, rtol=rtol, atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(image.data.astype(np.float64), expected)


def noisy(rng, shape, dtype=np.float64, nan=0.05, inf=0.02) -> np.ndarray:
    a = rng.standard_normal(shape) * 10
    a[rng.random(shape) < nan] = np.nan
    a[rng.random(shape) < inf] = np.inf
    a[rng.random(shape) < inf] = -np.inf
    return a.astype(dtype)


@pytest.mark.parametrize("method", list(REDUCERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_whole_plane_non_divisible(method, dtype) -> None:
    a = noisy(np.random.default_rng(1), (103, 77), dtype)
    check(a, (0, 103, 0, 77), (10, 9), method)
    check(a, (0, 103, 0, 77), (16, 16), method)


@pytest.mark.parametrize("method", list(REDUCERS))
def test_divisible_and_tiny_strips(method) -> None:
    a = noisy(np.random.default_rng(2), (64, 96), np.float32)
    check(a, (0, 64, 0, 96), (8, 12), method)
    check(a, (0, 64, 0, 96), (8, 12), method, strip_bytes=1)  # one row per strip, blocks split
    check(a, (0, 64, 0, 96), (3, 5), method, strip_bytes=2000)


@pytest.mark.parametrize("method", list(REDUCERS))
def test_nan_and_inf_blocks(method) -> None:
    a = np.ones((8, 8))
    a[0:4, 0:4] = np.nan  # a whole block NaN → NaN
    a[0:4, 4:8] = np.nan
    a[1, 5] = -7.0  # NaN ignored around one value
    a[4:8, 0:4] = np.inf
    a[4, 4], a[5, 5] = np.inf, -np.inf  # mean of +Inf and -Inf is NaN
    image = block_reduce(a, None, (2, 2), method).data
    assert np.isnan(image[0, 0])
    assert image[0, 1] == {"maxabs": 7, "max": -7, "min": -7, "mean": -7}[method]
    assert image[1, 0] == np.inf
    check(a, (0, 8, 0, 8), (2, 2), method)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_regions_and_shapes(data) -> None:
    rows = data.draw(st.integers(1, 60))
    cols = data.draw(st.integers(1, 60))
    r0 = data.draw(st.integers(0, rows - 1))
    r1 = data.draw(st.integers(r0 + 1, rows))
    c0 = data.draw(st.integers(0, cols - 1))
    c1 = data.draw(st.integers(c0 + 1, cols))
    out = (data.draw(st.integers(1, 40)), data.draw(st.integers(1, 40)))
    method = data.draw(st.sampled_from(list(REDUCERS)))
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    strip = data.draw(st.sampled_from([1, 300, 1 << 20]))
    a = noisy(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), (rows, cols), dtype,
              nan=data.draw(st.sampled_from([0.0, 0.2, 0.9])))
    check(a, (r0, r1, c0, c1), out, method, strip_bytes=strip)


def test_one_axis_reduced_other_exact() -> None:
    a = noisy(np.random.default_rng(3), (200, 7))
    image = block_reduce(a, None, (20, 50), "maxabs")
    assert image.data.shape == (20, 7) and image.method == "maxabs"
    check(a, (0, 200, 0, 7), (20, 50), "maxabs")
    check(a.T.copy(), (0, 7, 0, 200), (50, 20), "mean")


def test_small_region_is_exact_signed_values() -> None:
    a = noisy(np.random.default_rng(4), (50, 50))
    image = block_reduce(a, (10, 20, 5, 9), (64, 64), "maxabs")
    assert image.method == "exact" and image.exact
    np.testing.assert_array_equal(image.data, a[10:20, 5:9])
    assert not np.shares_memory(image.data, a)


@pytest.mark.parametrize("method", list(REDUCERS))
def test_integer_bool_and_complex_inputs(method) -> None:
    rng = np.random.default_rng(5)
    ints = rng.integers(-2**40, 2**40, (30, 41))
    image = block_reduce(ints, None, (7, 6), method)
    assert image.data.dtype == np.float64
    check(ints, (0, 30, 0, 41), (7, 6), method)
    small = rng.integers(-128, 127, (30, 41)).astype(np.int8)
    assert block_reduce(small, None, (7, 6), method).data.dtype == np.float32
    check(small, (0, 30, 0, 41), (7, 6), method)
    flags = rng.random((30, 41)) < 0.1
    check(flags, (0, 30, 0, 41), (7, 6), method)
    z = (rng.standard_normal((30, 41)) + 1j * rng.standard_normal((30, 41))).astype(np.complex64)
    for mode, part in [("magnitude", np.abs), ("phase", np.angle), ("real", np.real), ("imag", np.imag)]:
        got = block_reduce(z, None, (7, 6), method, complex_mode=mode).data
        expected = reference(part(z).astype(np.float32), (0, 30, 0, 41), (7, 6), method)
        np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize("mode", ["real", "imag", "magnitude"])
def test_inputs_are_never_modified_or_shared(mode) -> None:
    z = np.random.default_rng(9).standard_normal((40, 30)) * (1 - 2j)
    before = z.copy()
    for method in REDUCERS:
        block_reduce(z, None, (7, 6), method, complex_mode=mode)
    np.testing.assert_array_equal(z, before)
    x = np.random.default_rng(9).standard_normal((40, 30))
    for image in (strided_preview(x, 64, 64), block_reduce(x, None, (64, 64)),
                  strided_preview(z, 64, 64, complex_mode=mode)):
        assert not np.shares_memory(image.data, x) and not np.shares_memory(image.data, z)


def test_big_endian_plane() -> None:
    a = noisy(np.random.default_rng(8), (37, 29))
    big = a.astype(">f8")
    for method in REDUCERS:
        np.testing.assert_array_equal(block_reduce(big, None, (5, 4), method).data,
                                      block_reduce(a, None, (5, 4), method).data)
    np.testing.assert_array_equal(strided_preview(big, 10, 10).data, a[::4, ::3])


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_raw_bits_converted_strip_by_strip(name) -> None:
    rng = np.random.default_rng(6)
    dtype = np.uint16 if name == "bfloat16" else np.uint8
    bits = rng.integers(0, np.iinfo(dtype).max, (40, 33), dtype=dtype)
    values = to_float32(bits, name)
    for method in REDUCERS:
        got = block_reduce(bits, None, (6, 5), method, dtype_name=name, strip_bytes=500)
        expected = reference(values, (0, 40, 0, 33), (6, 5), method)
        if method == "mean":
            np.testing.assert_allclose(got.data, expected, rtol=1e-5, equal_nan=True)
        else:
            np.testing.assert_array_equal(got.data.astype(np.float64), expected)
    preview = strided_preview(bits, 10, 10, dtype_name=name)
    np.testing.assert_array_equal(preview.data, values[::4, ::4])


def test_strided_preview_semantics() -> None:
    a = np.arange(1000 * 37, dtype=np.float32).reshape(1000, 37)
    p = strided_preview(a, 100, 10)
    assert p.method == "strided"
    np.testing.assert_array_equal(p.data, a[::10, ::4])  # s = ceil(n / max)
    assert p.data.shape == (100, 10) and p.data.flags.c_contiguous
    np.testing.assert_array_equal(p.row_edges, list(range(0, 1000, 10)) + [1000])
    np.testing.assert_array_equal(p.col_edges, list(range(0, 37, 4)) + [37])
    q = strided_preview(a, 64, 64, region=(100, 301, 3, 30))
    np.testing.assert_array_equal(q.data, a[100:301:4, 3:30])
    assert q.data.shape[0] <= 64
    small = strided_preview(a[:5, :5], 64, 64)
    np.testing.assert_array_equal(small.data, a[:5, :5])
    assert small.exact


def test_strided_preview_of_memmap_and_complex(tmp_path) -> None:
    path = tmp_path / "p.f32"
    data = np.random.default_rng(7).standard_normal((300, 200)).astype(np.float32)
    data.tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r", shape=(300, 200))
    p = strided_preview(mm, 64, 64)
    np.testing.assert_array_equal(p.data, data[::5, ::4])
    assert type(p.data) is np.ndarray and not np.shares_memory(p.data, mm)
    z = data[:, :100] + 1j * data[:, 100:]
    np.testing.assert_allclose(strided_preview(z, 30, 30, complex_mode="phase").data,
                               np.angle(z[::10, ::4]))


def test_cancel_and_progress() -> None:
    a = np.ones((1000, 100), np.float32)
    seen: list[tuple[int, int]] = []
    block_reduce(a, None, (10, 10), "mean", strip_bytes=100 * 4 * 3 * 50,
                 progress=lambda done, total: seen.append((done, total)))
    assert len(seen) > 2 and seen[-1] == (1000, 1000)
    assert all(d1 < d2 for (d1, _), (d2, _) in itertools.pairwise(seen))
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled):
        block_reduce(a, None, (10, 10), "maxabs", strip_bytes=100 * 4 * 3 * 50, cancelled=cancelled)
    assert len(calls) == 4


def test_validation() -> None:
    a = np.zeros((10, 10))
    with pytest.raises(ValueError):
        block_reduce(a, (0, 11, 0, 10), (4, 4))
    with pytest.raises(ValueError):
        block_reduce(a, (5, 4, 0, 10), (4, 4))
    with pytest.raises(ValueError):
        block_reduce(a, None, (0, 4))
    with pytest.raises(ValueError):
        block_reduce(a, None, (4, 4), "median")
    with pytest.raises(ValueError):
        block_reduce(np.zeros((2, 2, 2)), None, (4, 4))
    empty = block_reduce(a, (3, 3, 0, 10), (4, 4))
    assert empty.data.shape == (0, 4)


def test_block_edges_properties() -> None:
    for n in range(1, 60):
        for bins in range(1, 70):
            e = block_edges(5, 5 + n, bins)
            sizes = np.diff(e)
            assert e[0] == 5 and e[-1] == 5 + n and sizes.min() >= 1 and sizes.max() - sizes.min() <= 1
            x = np.arange(n)
            np.testing.assert_array_equal(np.searchsorted(e, 5 + x, side="right") - 1, x * (len(e) - 1) // n)


def test_display_levels() -> None:
    img = np.array([[np.nan, 1.0], [np.inf, 5.0]])
    assert display_levels(img) == (1.0, 5.0)
    assert display_levels(np.full((2, 2), np.nan)) == (0.0, 1.0)
    lo, hi = display_levels(np.arange(101.0).reshape(1, -1), clip_percent=1.0)
    assert lo == pytest.approx(1.0) and hi == pytest.approx(99.0)
