"""Tensor-train facts and slices against the dense reconstruction."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests import _tt
from ztviewer.analysis import tt_view
from ztviewer.analysis.reduce import block_reduce, strided_preview
from ztviewer.analysis.stats import compute_stats
from ztviewer.analysis.tt_view import (
    TTPlane,
    core_slice,
    left_unfolding,
    right_unfolding,
    singular_values,
    tt_chunks,
    tt_slice2d,
    tt_summary,
)
from ztviewer.codec import tt
from ztviewer.codec.tt import element


def random_cores(dims, ranks, seed=0, complex_=False):
    """Cores of inner ranks ``ranks``."""
    return _tt.random_cores(dims, [1, *ranks, 1], complex_, seed)


def dense(cores) -> np.ndarray:
    """The obvious reconstruction: contract every bond with einsum."""
    out = cores[0][0]  # (d0, r1)
    for core in cores[1:]:
        out = np.einsum("...a,aib->...ib", out, core)
    return out[..., 0]


def rel_close(got, expected) -> None:
    err = np.linalg.norm(got - expected) / max(np.linalg.norm(expected), 1e-300)
    assert err <= 1e-10, err


@pytest.mark.parametrize("complex_", [False, True])
def test_slices_equal_dense_reconstruction(complex_) -> None:
    dims, ranks = (4, 5, 3, 6), (3, 4, 2)
    cores = random_cores(dims, ranks, complex_=complex_)
    full = dense(cores)
    cases = [((0, 1), {2: 1, 3: 5}), ((1, 3), {0: 2, 2: 0}), ((3, 0), {1: 4, 2: 2}), ((2, 1), {0: -1, 3: 0})]
    for axes, fixed in cases:
        index = [fixed.get(k, slice(None)) for k in range(4)]
        expected = full[tuple(index)]
        if axes[0] > axes[1]:
            expected = expected.T
        rel_close(tt_slice2d(cores, axes, fixed), expected)
        plane = TTPlane(cores, axes, fixed)
        assert plane.shape == expected.shape and plane.dtype == full.dtype
        rel_close(plane[:, :], expected)
        rel_close(plane[1:4:2, ::3], expected[1:4:2, ::3])
        rel_close(tt_slice2d(cores, axes, fixed, rows=np.array([0, 2]), cols=slice(1, None)),
                  expected[[0, 2], 1:])
        rel_close(np.asarray(plane), expected)


def test_lazy_plane_matches_the_codec_slice() -> None:
    cores = random_cores((3, 4, 5), (2, 3), seed=1)
    full = dense(cores)
    rel_close(tt_slice2d(cores, (2, 0), {1: 3}), full[:, 3, :].T)
    rel_close(TTPlane(cores, (2, 0), {1: 3})[:, :], tt.slice2d(cores, axes=(2, 0), fixed={1: 3}))


def test_plane_feeds_block_reduce_and_preview() -> None:
    cores = random_cores((50, 3, 70), (4, 5), seed=2)
    full = dense(cores)[:, 1, :]
    plane = TTPlane(cores, (0, 2), {1: 1})
    got = block_reduce(plane, None, (7, 9), "maxabs", strip_bytes=2000)
    expected = block_reduce(full, None, (7, 9), "maxabs")
    np.testing.assert_allclose(got.data, expected.data, rtol=1e-10)
    np.testing.assert_allclose(strided_preview(plane, 10, 10).data, full[::5, ::7], rtol=1e-10)


def test_summary_unfoldings_and_singular_values(monkeypatch) -> None:
    dims, ranks = (4, 5, 3, 6), (3, 4, 2)
    cores = random_cores(dims, ranks)
    s = tt_summary(cores)
    assert s.ranks == (1, 3, 4, 2, 1) and s.dims == dims and s.max_rank == 4
    assert s.max_ranks == (1, 4, 18, 6, 1)
    assert s.parameters == 1 * 4 * 3 + 3 * 5 * 4 + 4 * 3 * 2 + 2 * 6 * 1
    assert s.dense_elements == math.prod(dims)
    assert s.compression_ratio == pytest.approx(math.prod(dims) / s.parameters)
    core = cores[1]
    np.testing.assert_array_equal(core_slice(core, 2), core[:, 2, :])
    with pytest.raises(IndexError):
        core_slice(core, 5)
    left, right = left_unfolding(core), right_unfolding(core)
    assert left.shape == (15, 4) and right.shape == (3, 20)
    assert left[2 * 5 + 3, 1] == core[2, 3, 1] and right[2, 3 * 4 + 1] == core[2, 3, 1]
    sv = singular_values(left)
    np.testing.assert_allclose(sv, np.linalg.svd(left, compute_uv=False), rtol=1e-12)
    monkeypatch.setattr(tt_view, "SVD_LIMIT", 4)  # force the Gram-matrix path
    np.testing.assert_allclose(singular_values(left), sv, rtol=1e-8)
    np.testing.assert_allclose(singular_values(right), np.linalg.svd(right, compute_uv=False), rtol=1e-8)


def test_element_and_chunks() -> None:
    cores = random_cores((3, 4, 5, 2), (2, 3, 2), seed=3, complex_=True)
    full = dense(cores)
    assert element(cores, (2, 1, 4, 0)) == pytest.approx(full[2, 1, 4, 0], rel=1e-12)
    for chunk in (1, 7, 10, 40, 10**6):
        pieces = list(tt_chunks(cores, chunk))
        rel_close(np.concatenate(pieces), full.reshape(-1))
        assert max(p.size for p in pieces) <= max(chunk, full.shape[-1])
    stats = compute_stats(lambda: tt_chunks(cores, 16), bins=4, total=full.size)
    assert stats.max == pytest.approx(np.abs(full).max(), rel=1e-12)
    assert stats.mean == pytest.approx(np.abs(full).mean(), rel=1e-12)


def test_huge_tt_slice_is_never_materialised() -> None:
    cores = random_cores((10**6, 50, 10**6), (3, 3), seed=4)  # 5e13 elements
    plane = TTPlane(cores, (0, 2), {1: 7})
    assert plane.shape == (10**6, 10**6)
    preview = strided_preview(plane, 100, 100)
    expected = np.array([[element(cores, (i, 7, j)) for j in range(0, 10**6, 10**4)]
                         for i in range(0, 10**6, 10**4)])
    rel_close(preview.data, expected)


def test_validation() -> None:
    cores = random_cores((3, 4), (2,))
    with pytest.raises(ValueError):
        tt_summary([cores[0], cores[0]])  # rank mismatch
    with pytest.raises(ValueError):
        tt_summary([np.zeros((2, 3, 1))])  # r_0 != 1
    with pytest.raises(ValueError):
        TTPlane(cores, (0, 0))
    with pytest.raises(ValueError):
        TTPlane(random_cores((3, 4, 5), (2, 2)), (0, 1), {1: 0})
    with pytest.raises(IndexError):
        TTPlane(random_cores((3, 4, 5), (2, 2)), (0, 1), {2: 5})
    with pytest.raises(TypeError):
        TTPlane(cores)[0, 1]
