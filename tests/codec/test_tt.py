"""Tensor-train math: the corpus cores reconstruct their dense originals, and element / slice2d agree with
the full reconstruction on random trains (real and complex) without building it."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._corpus import CORPUS, corpus_available, corpus_manifest
from tests._tt import random_cores
from ztviewer.codec import registry, tt
from ztviewer.codec.errors import CodecError, DecodeLimitExceeded, UnsupportedLayout
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.codec.source import InMemorySource

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
ENTRIES = [e for e in corpus_manifest() if e["format"] == "blz"]
RTOL = 1e-10


def dense_by_einsum(cores) -> np.ndarray:
    """An independent reconstruction: one einsum over all cores."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    terms, outputs = [], []
    for k, _ in enumerate(cores):
        terms.append(letters[k] + letters[13 + k] + letters[k + 1])
        outputs.append(letters[13 + k])
    spec = ",".join(terms) + "->" + letters[0] + "".join(outputs) + letters[len(cores)]
    return np.einsum(spec, *cores)[0, ..., 0]


def close(got, want) -> bool:
    scale = max(float(np.linalg.norm(np.ravel(want))), 1e-300)
    return float(np.linalg.norm(np.ravel(got - want))) <= RTOL * scale


@st.composite
def trains(draw):
    ndim = draw(st.integers(2, 5))
    shape = draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim))
    inner = draw(st.lists(st.integers(1, 4), min_size=ndim - 1, max_size=ndim - 1))
    complex_ = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    return random_cores(shape, [1, *inner, 1], complex_, seed)


# ------------------------------------------------------------------------------------------------ corpus

@needs_corpus
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: Path(e["path"]).name)
def test_corpus_reconstruction_is_within_the_expected_error(entry):
    reference = np.load(CORPUS / entry["dense_reference"])
    with registry.open_file(CORPUS / entry["path"]) as tf:
        (tensor,) = tf.tensors
        cores = tt.tt_cores(tf, tensor)
        assert all(not c.flags.writeable and not c.flags.owndata for c in cores)  # views on the map
        assert tt.ranks(cores) == tuple(entry["ranks"]) == tensor.extra["ranks"]
        dense = tt.reconstruct(cores)
        assert dense.dtype == reference.dtype and dense.shape == reference.shape
        error = tt.relative_error(cores, reference)
        assert error <= entry["expected_rel_error_max"]
        assert close(dense, dense_by_einsum(cores))
        del cores, dense  # release the views before the map closes


# ------------------------------------------------------------------------------------------ random trains

@settings(max_examples=150, deadline=None)
@given(trains(), st.data())
def test_element_and_slice2d_match_the_full_reconstruction(cores, data):
    full = tt.reconstruct(cores)
    assert close(full, dense_by_einsum(cores))
    shape = full.shape
    index = tuple(data.draw(st.integers(0, d - 1)) for d in shape)
    assert close(tt.element(cores, index), full[index])
    rows, cols = data.draw(st.permutations(range(len(shape))))[:2]
    fixed = {axis: data.draw(st.integers(0, shape[axis] - 1)) for axis in range(len(shape)) if axis not in (rows, cols)}
    got = tt.slice2d(cores, (rows, cols), fixed)
    selector = tuple(slice(None) if axis in (rows, cols) else fixed[axis] for axis in range(len(shape)))
    want = full[selector] if rows < cols else full[selector].T
    assert got.shape == (shape[rows], shape[cols]) and got.dtype == full.dtype
    assert close(got, want)


@pytest.mark.parametrize("complex_", [False, True])
def test_every_slice_of_a_5d_train(complex_):
    cores = random_cores((3, 2, 4, 2, 3), (1, 2, 3, 3, 2, 1), complex_, seed=7)
    full = tt.reconstruct(cores)
    for rows, cols in itertools.permutations(range(5), 2):
        others = [a for a in range(5) if a not in (rows, cols)]
        for values in itertools.product(*(range(full.shape[a]) for a in others)):
            fixed = dict(zip(others, values))
            selector = tuple(slice(None) if a in (rows, cols) else fixed[a] for a in range(5))
            want = full[selector] if rows < cols else full[selector].T
            assert close(tt.slice2d(cores, (rows, cols), fixed), want)


def test_slice2d_never_builds_the_dense_tensor():
    cores = random_cores((400, 300, 200, 100), (1, 3, 3, 3, 1), seed=1)  # 2.4e9 elements dense
    got = tt.slice2d(cores, (3, 1), {0: 5, 2: 7})
    want = np.array([[tt.element(cores, (5, j, 7, i)) for j in range(300)] for i in range(100)])
    assert got.shape == (100, 300) and close(got, want)


# -------------------------------------------------------------------------------------- small functions

def test_ranks_ratio_and_error():
    cores = random_cores((4, 5, 6), (1, 3, 4, 1))
    assert tt.ranks(cores) == (1, 3, 4, 1)
    assert tt.compression_ratio((4, 5, 6), (1, 3, 4, 1), 8) == pytest.approx(120 / (12 + 60 + 24))
    assert tt.compression_ratio((0, 5), (1, 0, 1), 8) == 1.0
    assert tt.compression_ratio((4, 5), (1, 0, 1), 8) == float("inf")
    dense = tt.reconstruct(cores)
    assert tt.relative_error(cores, dense) == pytest.approx(0, abs=1e-15)
    assert tt.relative_error(cores, 2 * dense) == pytest.approx(0.5)
    with pytest.raises(tt.TensorTrainError):
        tt.relative_error(cores, dense[:1])
    with pytest.raises(tt.TensorTrainError):
        tt.compression_ratio((4, 5), (1, 1), 8)


def test_zero_sized_trains():
    cores = random_cores((3, 0, 2), (1, 2, 2, 1))
    assert tt.reconstruct(cores).shape == (3, 0, 2)
    assert tt.slice2d(cores, (0, 1), {2: 1}).shape == (3, 0)
    zero_rank = [np.ones((1, 2, 0)), np.ones((0, 3, 1))]
    assert np.array_equal(tt.reconstruct(zero_rank), np.zeros((2, 3)))
    assert tt.element(zero_rank, (1, 2)) == 0


def test_reconstruct_limit():
    cores = random_cores((10, 10, 10), (1, 2, 2, 1))
    with pytest.raises(DecodeLimitExceeded):
        tt.reconstruct(cores, limit=999)
    assert tt.reconstruct(cores, limit=1000).shape == (10, 10, 10)


CORES = random_cores((2, 3, 4), (1, 2, 2, 1))


@pytest.mark.parametrize("call, text", [
    (lambda: tt.slice2d(CORES, (1, 1), {0: 0, 2: 0}), "must differ"),
    (lambda: tt.slice2d(CORES, (0, 3), {1: 0}), "axis 3 is out of range"),
    (lambda: tt.slice2d(CORES, (0, 1), {}), "exactly the axes [2]"),
    (lambda: tt.slice2d(CORES, (0, 1), {2: 0, 1: 0}), "exactly the axes [2]"),
    (lambda: tt.slice2d(CORES, (0, 1), {2: 4}), "index 4 on axis 2 is out of range 0..3"),
    (lambda: tt.slice2d(CORES, (0, 1), {2: -1}), "out of range"),
    (lambda: tt.slice2d(CORES, (0, True), {2: 0}), "axis True"),
    (lambda: tt.element(CORES, (0, 0)), "has 2 entries"),
    (lambda: tt.element(CORES, (0, 3, 0)), "index 3 on axis 1"),
    (lambda: tt.element(CORES, (0, 1.0, 0)), "index 1.0"),
    (lambda: tt.reconstruct([]), "at least one core"),
    (lambda: tt.reconstruct([np.ones((1, 2))]), "has 2 dimensions"),
    (lambda: tt.reconstruct([np.ones((2, 2, 1))]), "boundary ranks are 2 and 1"),
    (lambda: tt.reconstruct([np.ones((1, 2, 2)), np.ones((3, 2, 1))]), "core 0 ends with rank 2"),
])
def test_bad_arguments_raise_codec_errors(call, text):
    with pytest.raises(tt.TensorTrainError) as info:
        call()
    assert isinstance(info.value, CodecError) and text in str(info.value)


def test_tt_cores_checks_the_tensor():
    tf = TensorFile(path="x", format="safetensors", source=InMemorySource(b"\0" * 16))
    with pytest.raises(UnsupportedLayout):
        tt.tt_cores(tf, Tensor("dense", "float64", (2,)))
    with pytest.raises(tt.TensorTrainError, match="no component 'core_0'"):
        tt.tt_cores(tf, Tensor("t", "float64", (2,), layout="tensor_train"))
    no_source = TensorFile(path="x", format="blz")
    with pytest.raises(CodecError, match="no open source"):
        tt.tt_cores(no_source, Tensor("t", "float64", (2,), layout="tensor_train"))
