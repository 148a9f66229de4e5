"""Plane selection (views, validation) and value presentation."""
from __future__ import annotations

import numpy as np
import pytest

from ztviewer.analysis.slicing import display_dtype, plane, presenter, to_display
from ztviewer.codec.dtypes import to_float32


def test_plane_is_a_view_with_fixed_axes() -> None:
    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    p = plane(a, axes=(1, 3), fixed={0: 1, 2: -1})
    assert p.shape == (3, 5)
    assert np.shares_memory(p, a)
    np.testing.assert_array_equal(p, a[1, :, 3, :])


def test_plane_transposed_and_defaults() -> None:
    a = np.arange(24).reshape(2, 3, 4)
    p = plane(a, axes=(2, 0))
    np.testing.assert_array_equal(p, a[:, 0, :].T)
    assert np.shares_memory(p, a)
    np.testing.assert_array_equal(plane(a, axes=(-1, -2), fixed={0: 1}), a[1].T)


def test_plane_of_memmap_stays_mapped(tmp_path) -> None:
    path = tmp_path / "m.f32"
    np.arange(60, dtype=np.float32).tofile(path)
    mm = np.memmap(path, dtype=np.float32, mode="r", shape=(3, 4, 5))
    p = plane(mm, axes=(0, 2), fixed={1: 2})
    assert np.shares_memory(p, mm)
    np.testing.assert_array_equal(p, np.arange(60).reshape(3, 4, 5)[:, 2, :])


def test_plane_low_rank_arrays() -> None:
    assert plane(np.arange(5)).shape == (1, 5)
    assert plane(np.float64(3.0) * np.ones(())).shape == (1, 1)


@pytest.mark.parametrize("axes, fixed, error", [
    ((0, 0), None, ValueError),
    ((0, 3), None, ValueError),
    ((0, 1), {1: 0}, ValueError),
    ((0, 1), {2: 4}, IndexError),
    ((0, 1), {2: -5}, IndexError),
    ((0, 1), {7: 0}, ValueError),
])
def test_plane_validation(axes, fixed, error) -> None:
    with pytest.raises(error):
        plane(np.zeros((2, 3, 4)), axes=axes, fixed=fixed)


def test_plane_zero_extent_fixed_axis() -> None:
    with pytest.raises(IndexError):
        plane(np.zeros((2, 0, 4)), axes=(0, 2))


def test_presentation_of_each_kind() -> None:
    assert to_display(np.array([True, False])).tolist() == [1.0, 0.0]
    assert to_display(np.array([True])).dtype == np.float32
    assert to_display(np.array([-3], np.int8)).dtype == np.float32
    assert to_display(np.array([2**40], np.int64)).tolist() == [2.0**40]
    assert to_display(np.array([1.5], np.float16)).dtype == np.float32
    x = np.array([1.0, 2.0])
    assert to_display(x) is x  # native float64: no copy
    z = np.array([3 + 4j, -1j], np.complex64)
    np.testing.assert_allclose(to_display(z), [5, 1])
    np.testing.assert_allclose(to_display(z, complex_mode="phase"), np.angle(z))
    np.testing.assert_array_equal(to_display(z, complex_mode="real"), [3, 0])
    np.testing.assert_array_equal(to_display(z, complex_mode="imag"), [4, -1])
    assert to_display(z).dtype == np.float32
    assert to_display(z.astype(np.complex128)).dtype == np.float64
    big = np.array([1.25, -2.0], dtype=">f4")
    assert to_display(big).tolist() == [1.25, -2.0]
    with pytest.raises(ValueError):
        presenter(np.complex64, complex_mode="angle")


@pytest.mark.parametrize("name, bits", [
    ("bfloat16", np.array([0x3F80, 0xC040, 0x7FC0], np.uint16)),
    ("float8_e4m3fn", np.arange(256, dtype=np.uint8)),
    ("float8_e5m2", np.arange(256, dtype=np.uint8)),
])
def test_bits_converted_with_codec_table(name, bits) -> None:
    shown = to_display(bits, name)
    assert shown.dtype == np.float32 and display_dtype(bits.dtype, name) == np.float32
    np.testing.assert_array_equal(shown, to_float32(bits, name))


def test_bits_of_wrong_width_rejected() -> None:
    with pytest.raises(TypeError):
        to_display(np.zeros(3, np.uint8), "bfloat16")
