"""Difference statistics (ztviewer.analysis.diff.accumulate) against plain numpy on small arrays."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ztviewer.analysis.diff import DiffAccumulator, Tolerance
from ztviewer.analysis.diff.accumulate import unravel
from ztviewer.analysis.diff.ulp import max_ulp, ordered_keys
from ztviewer.codec.dtypes import to_float32


def reference(a: np.ndarray, b: np.ndarray) -> dict:
    """The statistics written out with numpy on whole arrays (float64 / complex128)."""
    a, b = a.reshape(-1), b.reshape(-1)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    both = np.isfinite(a) & np.isfinite(b)
    differing = int(np.count_nonzero(~((a == b) | (nan_a & nan_b))))
    nan_mismatch = int(np.count_nonzero(nan_a != nan_b))
    inf_mismatch = int(np.count_nonzero(~nan_a & ~nan_b & ~both & (a != b)))
    work = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    fa, fb = a[both].astype(work), b[both].astype(work)
    d = np.abs(fa - fb)
    norm_a, norm_b = np.linalg.norm(fa), np.linalg.norm(fb)
    return {
        "differing": differing, "nan_mismatch": nan_mismatch, "inf_mismatch": inf_mismatch,
        "compared": int(both.sum()), "max_abs": float(d.max()) if d.size else 0.0,
        "max_abs_flat": int(np.flatnonzero(both)[d.argmax()]) if d.size else None,
        "mean_abs": float(d.mean()) if d.size else 0.0,
        "rel_l2": float(np.linalg.norm(fa - fb) / norm_a),
        "cosine": float(np.vdot(fa, fb).real / (norm_a * norm_b)),
        "snr_db": float(10 * np.log10(np.sum(np.abs(fa) ** 2) / np.sum(d ** 2))) if d.any() else math.inf,
    }


def run(a: np.ndarray, b: np.ndarray, dtype_a: str, dtype_b: str, chunk: int = 7, **kw):
    acc = DiffAccumulator(a.shape, dtype_a, dtype_b, **kw)
    fa, fb = a.reshape(-1), b.reshape(-1)
    for start in range(0, fa.size, chunk):
        acc.update(fa[start:start + chunk], fb[start:start + chunk], start)
    return acc.result()


def check(stats, ref: dict, shape: tuple[int, ...]) -> None:
    for key in ("differing", "nan_mismatch", "inf_mismatch", "compared"):
        assert getattr(stats, key) == ref[key], key
    for key in ("max_abs", "mean_abs", "rel_l2", "cosine", "snr_db"):
        assert getattr(stats, key) == pytest.approx(ref[key], rel=1e-12, abs=1e-300), key
    if ref["max_abs_flat"] is not None and ref["max_abs"] > 0:
        assert stats.max_abs_index == np.unravel_index(ref["max_abs_flat"], shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.complex64,
                                   np.complex128])
def test_numbers_match_numpy(dtype):
    rng = np.random.default_rng(1)
    shape = (5, 9, 3)
    if np.issubdtype(dtype, np.integer):
        a = rng.integers(0, 100, shape).astype(dtype)
        b = a.copy()
        b[1, 2, 0] += 7
        b[4, 8, 2] -= 3
    else:
        a = (rng.standard_normal(shape) * 3).astype(dtype)
        if np.issubdtype(dtype, np.complexfloating):
            a = a + 1j * rng.standard_normal(shape).astype(dtype)
        b = (a + (rng.standard_normal(shape) * 1e-3).astype(a.dtype)).astype(dtype)
    name = np.dtype(dtype).name
    stats = run(a, b, name, name)
    check(stats, reference(a, b), shape)
    assert stats.count == a.size and not stats.bit_identical


def test_nan_and_inf_mismatches_are_counted_apart():
    a = np.array([1.0, np.nan, np.nan, np.inf, np.inf, -np.inf, 2.0, 5.0, np.inf], np.float32)
    b = np.array([1.0, np.nan, 3.0, np.inf, -np.inf, 4.0, 2.5, np.nan, np.nan], np.float32)
    stats = run(a, b, "float32", "float32", chunk=4)
    ref = reference(a, b)
    check(stats, ref, a.shape)
    assert (stats.nan_mismatch, stats.inf_mismatch, stats.differing) == (3, 2, 6)
    assert stats.compared == 2 and stats.max_abs == 0.5 and stats.max_abs_index == (6,)


def test_equal_nans_and_infs_are_equal():
    a = np.array([np.nan, np.inf, -np.inf, 0.0], np.float64)
    stats = run(a, a.copy(), "float64", "float64")
    assert stats.differing == 0 and stats.bit_identical and stats.max_ulp == 0


def test_signed_zero_is_equal_but_not_bit_identical():
    stats = run(np.array([0.0, 1.0], np.float32), np.array([-0.0, 1.0], np.float32), "float32", "float32")
    assert stats.differing == 0 and not stats.bit_identical and stats.max_ulp == 0


def test_ulp_distance_of_neighbours_and_across_zero():
    a = np.array([1.0, -1.0, 1e-45, 0.0], np.float32)
    b = np.nextafter(a, np.float32(np.inf))
    b[2] = -1e-45  # the smallest subnormals on both sides of zero: 2 ULP apart
    stats = run(a, b, "float32", "float32")
    assert stats.max_ulp == 2
    assert max_ulp(np.array([1.0], np.float64), np.array([np.nextafter(1.0, 2.0)], np.float64)) == 1
    extremes = np.array([np.finfo(np.float64).max, -np.finfo(np.float64).max])
    assert max_ulp(extremes[:1], extremes[1:]) == 2 * int(ordered_keys(extremes[:1])[0])


def test_ulps_of_bfloat16_count_in_bfloat16():
    a = np.array([0x3F80, 0x3F80, 0xBF80], np.uint16)  # 1.0, 1.0, -1.0
    b = np.array([0x3F81, 0x3F83, 0xBF80], np.uint16)
    stats = run(a, b, "bfloat16", "bfloat16")
    assert stats.max_ulp == 3
    fa, fb = to_float32(a, "bfloat16"), to_float32(b, "bfloat16")
    assert stats.max_abs == pytest.approx(float(np.abs(fa - fb).max()))


def test_float8_values_are_decoded():
    a = np.array([0x38, 0x40, 0x00], np.uint8)  # e4m3fn: 1.0, 2.0, 0
    b = np.array([0x39, 0x40, 0x80], np.uint8)  # 1.125, 2.0, -0
    stats = run(a, b, "float8_e4m3fn", "float8_e4m3fn")
    assert stats.max_abs == 0.125 and stats.differing == 1 and stats.max_ulp == 1


def test_mixed_dtypes_compare_values_and_ulps_in_the_wider_one():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.array([0x3F80, 0x4000, 0x4041], np.uint16)  # bf16 1.0, 2.0, 3.015625
    stats = run(a, b, "float32", "bfloat16")
    assert stats.max_abs == 0.015625 and stats.differing == 1
    assert stats.max_ulp == 0x40410000 - 0x40400000 and not stats.bit_identical


def test_tolerance_as_numpy_isclose():
    rng = np.random.default_rng(2)
    a = rng.standard_normal(100)
    b = a * (1 + 1e-6)
    close = run(a, b, "float64", "float64", tolerance=Tolerance(1e-5, 0.0))
    far = run(a, b, "float64", "float64", tolerance=Tolerance(1e-7, 0.0))
    assert close.within_tolerance is True and np.isclose(a, b, rtol=1e-5, atol=0).all()
    assert far.within_tolerance is False and not np.isclose(a, b, rtol=1e-7, atol=0).all()
    nan = run(np.array([np.nan]), np.array([1.0]), "float64", "float64", tolerance=Tolerance(1.0, 1.0))
    assert nan.within_tolerance is False


def test_worst_positions_are_the_largest_differences():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20, 30))
    b = a + rng.standard_normal((20, 30)) * 1e-3
    stats = run(a, b, "float64", "float64", chunk=11, worst=5)
    d = np.abs(a - b).reshape(-1)
    expected = [tuple(int(i) for i in np.unravel_index(k, a.shape)) for k in np.argsort(-d)[:5]]
    assert [w[0] for w in stats.worst] == expected
    assert stats.worst[0][1] == a[expected[0]] and stats.worst[0][2] == b[expected[0]]


def test_identical_and_empty_inputs():
    a = np.arange(12, dtype=np.float32)
    same = run(a, a.copy(), "float32", "float32")
    assert same.differing == 0 and same.bit_identical and same.rel_l2 == 0 and same.snr_db == math.inf
    assert same.cosine == pytest.approx(1.0)
    empty = run(np.zeros(0, np.float32), np.zeros(0, np.float32), "float32", "float32")
    assert empty.count == 0 and empty.max_abs_index is None and empty.rel_l2 == 0


def test_unravel_beyond_int64():
    shape = (2**40, 2**40, 3)
    flat = (2**40 - 1) * 2**40 * 3 + 5 * 3 + 2
    assert unravel(flat, shape) == (2**40 - 1, 5, 2)


def test_misaligned_chunks_are_refused():
    acc = DiffAccumulator((3,), "float32", "float32")
    with pytest.raises(ValueError):
        acc.update(np.zeros(3, np.float32), np.zeros(2, np.float32), 0)
