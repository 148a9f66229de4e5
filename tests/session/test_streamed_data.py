"""Compressed tensors larger than the inspect cache are streamed (issue 17 §9): planes, reductions, level
samples and single values equal the decoded array's, from one forward decoder pass, in bounded memory."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ztviewer.analysis.reduce import block_reduce, level_sample, strided_preview
from ztviewer.codec import open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.session.streamed_data import StreamedData


@pytest.fixture
def zstd_file(tmp_path):
    rng = np.random.default_rng(5)
    arrays = {"w": rng.standard_normal((3, 512, 700)).astype(np.float32),
              "m": (rng.standard_normal((3000, 1800)) * 100).astype(np.float16)}
    path = tmp_path / "big.zt"
    save_arrays(path, arrays, "zt", compress=("zstd", 3))
    with open_file(path) as tf:
        yield tf, arrays


def test_planes_values_and_reductions_match_the_array(zstd_file):
    tf, arrays = zstd_file
    assert tf.tensor("w").components["data"].encoding != "raw"
    data = StreamedData(tf, tf.tensor("w"))
    assert data.shape == (3, 512, 700) and data.kind == "float"
    plane = data.plane((1, 2), {0: 2})
    expected = arrays["w"][2]
    np.testing.assert_array_equal(plane[10:20, 5:9], expected[10:20, 5:9])
    np.testing.assert_array_equal(plane[::37, ::5], expected[::37, ::5])
    np.testing.assert_array_equal(plane[7], expected[7])
    rows, cols = np.array([3, 300, 3, 9])[:, None], np.array([[1, 2], [3, 4], [5, 6], [7, 8]])
    np.testing.assert_array_equal(plane[rows, cols], expected[rows, cols])
    got = block_reduce(plane, None, (64, 64), "max")
    want = block_reduce(expected, None, (64, 64), "max")
    np.testing.assert_array_equal(got.data, want.data)
    np.testing.assert_array_equal(strided_preview(plane, 50, 50).data, strided_preview(expected, 50, 50).data)
    np.testing.assert_array_equal(level_sample(plane, 5000), strided_preview(expected, 70, 70).data.reshape(-1))
    assert data.value((2, 511, 699)) == pytest.approx(float(arrays["w"][2, 511, 699]))
    with pytest.raises(ValueError, match="last two axes"):
        data.plane((0, 2), {1: 0})


def test_a_reduction_is_one_forward_pass_in_bounded_memory(zstd_file):
    tf, arrays = zstd_file
    data = StreamedData(tf, tf.tensor("m"))
    plane = data.plane((0, 1), {})
    tracemalloc.start()
    image = block_reduce(plane, None, (100, 100), "max", strip_bytes=256 << 10)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.testing.assert_array_equal(image.data, block_reduce(arrays["m"], None, (100, 100), "max").data)
    assert data.source.restarts == 1
    assert peak < arrays["m"].nbytes / 2, peak          # never the whole decoded tensor
