"""A tensor train against a reference: streamed relative / max-abs error and the lazy error plane, against the
dense reconstruction in numpy (and the corpus' BLZ files with their .npy originals)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tests import _tt
from ztviewer.analysis.tt_compare import TTErrorData, load_npy_reference, tt_error
from ztviewer.codec import tt
from ztviewer.session.inspect_data import TTData


def random_cores(shape=(4, 5, 6), ranks=(1, 3, 4, 1), seed=0):
    return _tt.random_cores(shape, ranks, seed=seed)


def test_error_matches_numpy_across_chunks():
    cores = random_cores()
    dense = tt.reconstruct(cores)
    reference = dense + np.random.default_rng(1).standard_normal(dense.shape) * 1e-3
    reference[2, 3, 4] += 0.5
    result = tt_error(cores, reference, "float64", chunk_elements=7)     # many chunks, uneven last one
    diff = dense - reference
    assert result.relative == pytest.approx(np.linalg.norm(diff) / np.linalg.norm(reference), rel=1e-12)
    assert result.max_abs == pytest.approx(np.abs(diff).max(), rel=1e-12)
    assert result.max_abs_index == (2, 3, 4)
    assert result.elements == dense.size


def test_fortran_order_and_float32_reference(tmp_path):
    cores = random_cores(seed=3)
    dense = tt.reconstruct(cores)
    path = tmp_path / "ref.npy"
    np.save(path, np.asfortranarray(dense.astype(np.float32)))
    reference = load_npy_reference(str(path))
    assert isinstance(reference, np.memmap) and not reference.flags.c_contiguous
    result = tt_error(cores, reference, "float32", chunk_elements=16)
    expected = dense - dense.astype(np.float32).astype(np.float64)
    assert result.max_abs == pytest.approx(np.abs(expected).max(), rel=1e-9)


def test_shape_mismatch_and_objects_are_refused(tmp_path):
    cores = random_cores()
    with pytest.raises(ValueError, match="shape"):
        tt_error(cores, np.zeros((4, 5, 7)), "float64")
    path = tmp_path / "objects.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        load_npy_reference(str(path))


def test_error_plane_is_the_difference_of_the_shown_slice():
    cores = random_cores()
    dense = tt.reconstruct(cores)
    reference = np.ones_like(dense)
    data = TTErrorData(TTData(cores, "float64"), reference, "float64")
    assert data.shape == dense.shape and data.kind == "float"
    plane = data.plane((0, 2), {1: 3})
    assert plane.shape == (4, 6)
    np.testing.assert_allclose(plane[:, :], dense[:, 3, :] - 1.0, rtol=1e-12)
    assert data.value((1, 2, 3)) == pytest.approx(dense[1, 2, 3] - 1.0)


CORPUS = Path(os.environ.get("ZTVIEWER_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "corpus" / "blz"


@pytest.mark.parametrize("name", ["t3_4x5x6_truncated", "mat_6x8_exact", "c2_5x6_complex128_truncated"])
def test_corpus_trains_against_their_originals(name):
    blz = CORPUS / f"{name}.blz"
    if not blz.is_file():
        pytest.skip("shared corpus not available")
    from ztviewer.workers.tasks import open_path

    tf = open_path(str(blz))
    try:
        cores = tt.tt_cores(tf, tf.tensors[0])
        reference = load_npy_reference(str(CORPUS / f"{name}.npy"))
        dtype = reference.dtype.name
        result = tt_error(cores, reference, dtype, chunk_elements=5)
        assert result.relative == pytest.approx(tt.relative_error(cores, np.asarray(reference)), rel=1e-9, abs=1e-15)
        if "exact" in name:
            assert result.relative < 1e-12
    finally:
        tf.close()
