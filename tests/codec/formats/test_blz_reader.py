"""The BLZ1 reader over the shared corpus, the hostile files, and malformed files built with struct.pack."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._corpus import CORPUS, corpus_available, corpus_manifest, hostile_entries
from tests._tt import random_cores
from ztviewer.codec import registry, tt
from ztviewer.codec.errors import CodecError, OutOfBounds
from ztviewer.codec.formats import blz
from ztviewer.codec.formats.magic import sniff_blz
from ztviewer.codec.model import Severity
from ztviewer.codec.source import InMemorySource, LocalFile

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
ENTRIES = [e for e in corpus_manifest() if e["format"] == "blz"]
HOSTILE = {e["file"]: e for e in hostile_entries() if e["file"].startswith("blz_")}


def open_path(path: Path):
    return registry.read_source(LocalFile(path))


def open_bytes(data: bytes, name: str = "built.blz"):
    return registry.read_source(InMemorySource(data, path=name))


def errors(tf) -> list:
    return [p for p in tf.all_problems() if p.severity is Severity.ERROR]


def warnings(tf) -> list:
    return [p for p in tf.all_problems() if p.severity is Severity.WARNING]


def build(cores: list[np.ndarray], *, magic: bytes = b"BLZ1", version: int = 1, dtype_tag: int | None = None,
          ndim: int | None = None, reserved: bytes = bytes(8), shape=None, ranks=None, tail: bytes = b"") -> bytes:
    """A BLZ1 file from cores; every header field can be overridden to build a malformed one."""
    if dtype_tag is None:
        dtype_tag = 1 if np.iscomplexobj(cores[0]) else 0
    shape = [c.shape[1] for c in cores] if shape is None else shape
    ranks = [cores[0].shape[0]] + [c.shape[2] for c in cores] if ranks is None else ranks
    ndim = len(shape) if ndim is None else ndim
    dtype = "<c16" if dtype_tag == 1 else "<f8"
    head = magic + bytes([version, dtype_tag, ndim]) + reserved
    head += struct.pack(f"<{len(shape)}Q", *shape) + struct.pack(f"<{len(ranks)}Q", *ranks)
    return head + b"".join(np.ascontiguousarray(c, dtype=dtype).tobytes() for c in cores) + tail


# ------------------------------------------------------------------------------------------------ corpus

@needs_corpus
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: Path(e["path"]).name)
def test_corpus_file_reads_as_manifest_says(entry):
    path = CORPUS / entry["path"]
    (want,) = entry["tensors"]
    with open_path(path) as tf:
        assert tf.readable and not list(tf.all_problems())
        assert (tf.format, tf.variant, tf.extra["dtype_tag"]) == ("blz", "BLZ1", entry["blz_dtype_tag"])
        (tensor,) = tf.tensors
        assert (tensor.name, tensor.dtype, tensor.shape, tensor.layout) == (
            want["name"], want["dtype"], tuple(want["shape"]), "tensor_train")
        ranks = tuple(entry["ranks"])
        assert tensor.extra["ranks"] == ranks
        ndim = len(tensor.shape)
        offset = 15 + 8 * ndim + 8 * (ndim + 1)
        assert [(r.kind, r.offset, r.length) for r in tf.regions] == [
            ("magic", 0, 4), ("header", 4, 11), ("shape", 15, 8 * ndim), ("ranks", 15 + 8 * ndim, 8 * (ndim + 1))]
        itemsize = 16 if want["dtype"] == "complex128" else 8
        assert list(tensor.components) == [f"core_{k}" for k in range(ndim)]
        for k, comp in enumerate(tensor.components.values()):
            core_shape = (ranks[k], tensor.shape[k], ranks[k + 1])
            assert (comp.offset, comp.length, comp.dtype, comp.encoding) == (
                offset, int(np.prod(core_shape)) * itemsize, want["dtype"], "raw")
            assert comp.shape == tuple(core_shape)
            offset += comp.length
        assert offset == tf.size == entry["size"]


# ----------------------------------------------------------------------------------------------- hostile

#: file → (readable, [(component or None, substring of the message, expected offset or None)])
HOSTILE_EXPECT = {
    "blz_cores_exceed_file.blz": (True, [("core_2", "19008 bytes missing", 647)]),
    "blz_dtype_tag_1_on_real_data.blz": (True, [("core_1", "the file ends at byte 839", 263)]),
    "blz_magic_BLZ2.blz": (False, [(None, "BLZ2 is not supported; ztviewer reads BLZ1", 0)]),
    "blz_ndim_0.blz": (False, [(None, "ndim is 0", 6)]),
    "blz_ndim_mismatch.blz": (True, [(None, "ranks[0] is 3, must be 1", 47)]),
    "blz_rank0_not_1.blz": (True, [(None, "ranks[0] is 2, must be 1", 39), ("core_2", "96 bytes missing", 743)]),
    "blz_rank_overflow.blz": (True, [("core_0", "bytes missing", 71)]),
    "blz_reserved_nonzero.blz": (True, [(None, "reserved bytes are 01 00", 7)]),
    "blz_truncated_core.blz": (True, [("core_2", "9 bytes missing", 647)]),
    "blz_truncated_header.blz": (False, [(None, "inside the 15-byte fixed header", 10)]),
    "blz_version_2.blz": (False, [(None, "version 2 is not supported", 4)]),
    "blz_zero_dim.blz": (True, [(None, "zero dimension", 15)]),
}


@needs_corpus
def test_every_hostile_blz_file_has_an_expectation():
    assert set(HOSTILE) == set(HOSTILE_EXPECT)


@needs_corpus
@pytest.mark.parametrize("name", sorted(HOSTILE_EXPECT))
def test_hostile_file_verdict(name):
    readable, expected = HOSTILE_EXPECT[name]
    with open_path(CORPUS / "hostile" / name) as tf:
        assert tf.format == "blz" and tf.readable is readable
        reject = HOSTILE[name]["expect"] == "reject"
        assert bool(errors(tf)) is reject
        if not reject:
            assert warnings(tf)
        found = errors(tf) if reject else warnings(tf)
        for component, text, offset in expected:
            match = [p for p in found if text in p.message and p.component == component]
            assert match, (text, [str(p) for p in tf.all_problems()])
            assert match[0].offset == offset and match[0].rule
            if readable and match[0].tensor is not None:
                assert match[0].tensor == Path(name).stem
        if readable:
            assert len(tf.tensors) == 1


@needs_corpus
def test_zero_dim_file_reconstructs_to_an_empty_tensor():
    with open_path(CORPUS / "hostile" / "blz_zero_dim.blz") as tf:
        (tensor,) = tf.tensors
        assert tt.reconstruct(tt.tt_cores(tf, tensor)).shape == (4, 0, 6)


@needs_corpus
def test_truncated_core_cannot_be_mapped():
    with open_path(CORPUS / "hostile" / "blz_truncated_core.blz") as tf, pytest.raises(OutOfBounds):
        tt.tt_cores(tf, tf.tensors[0])


# --------------------------------------------------------------------------------------- built files

def test_built_file_round_trips_real_and_complex():
    for complex_ in (False, True):
        cores = random_cores((3, 4, 2), (1, 2, 3, 1), complex_=complex_, seed=3)
        tf = open_bytes(build(cores), "tiny.blz")
        assert tf.readable and not list(tf.all_problems())
        (tensor,) = tf.tensors
        assert tensor.name == "tiny" and tensor.dtype == ("complex128" if complex_ else "float64")
        for got, want in zip(tt.tt_cores(tf, tensor), cores):
            assert got.tobytes() == want.tobytes()


def test_sniff_takes_any_blz_magic():
    assert sniff_blz(b"BLZ1\x01", 100) and sniff_blz(b"BLZ9", 4)
    assert not sniff_blz(b"BLX1", 100) and not sniff_blz(b"", 0)


@pytest.mark.parametrize("overrides, text, offset", [
    ({"ndim": 1, "shape": [3], "ranks": [1, 1]}, "ndim is 1", 6),
    ({"dtype_tag": 2}, "dtype_tag 2 is not defined", 5),
    ({"version": 0}, "version 0 is not supported", 4),
    ({"magic": b"BLZ0"}, "BLZ0 is not supported", 0),
])
def test_fatal_header_rules(overrides, text, offset):
    tf = open_bytes(build(random_cores((2, 3), (1, 2, 1)), **overrides))
    assert not tf.readable and tf.format == "blz"
    (problem,) = errors(tf)
    assert text in problem.message and problem.offset == offset and problem.rule


@pytest.mark.parametrize("cut, field", [(15 + 8, "shape"), (15 + 16 + 8, "ranks")])
def test_truncated_shape_or_ranks_is_fatal(cut, field):
    tf = open_bytes(build(random_cores((2, 3), (1, 2, 1)))[:cut])
    (problem,) = errors(tf)
    assert not tf.readable and f"inside the {field} field" in problem.message


def test_trailing_bytes_and_last_rank_not_one():
    cores = random_cores((2, 3), (1, 2, 1))
    tf = open_bytes(build(cores, tail=b"\0" * 5))  # readable: trailing bytes are a warning (issue 16 §13)
    (problem,) = warnings(tf)
    assert not errors(tf) and tf.tensors[0].components["core_1"].end == tf.size - 5
    assert problem.tensor is None and "5 trailing bytes" in problem.message and problem.offset == tf.size - 5
    assert np.allclose(tt.reconstruct(tt.tt_cores(tf, tf.tensors[0])), np.einsum("aib,bjc->ij", *cores))
    tf = open_bytes(build(cores, ranks=[1, 2, 2]))
    assert any("ranks[2] is 2, must be 1" in p.message for p in errors(tf))


def test_zero_internal_rank_is_a_warning_and_reads_as_zeros():
    cores = [np.zeros((1, 2, 0)), np.zeros((0, 3, 1))]
    tf = open_bytes(build(cores))
    assert not errors(tf) and "every element of the tensor is zero" in warnings(tf)[0].message
    assert np.array_equal(tt.reconstruct(tt.tt_cores(tf, tf.tensors[0])), np.zeros((2, 3)))


def test_255_dimensions_are_accepted():
    cores = [np.ones((1, 1, 1))] * 255
    tf = open_bytes(build(cores))
    assert tf.readable and not list(tf.all_problems()) and len(tf.tensors[0].components) == 255


# ------------------------------------------------------------------------------------------ robustness

VALID = build(random_cores((2, 3, 2), (1, 2, 2, 1)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 80), st.integers(0, 255)), min_size=1, max_size=4),
       st.integers(0, len(VALID)))
def test_mutated_files_never_crash(mutations, cut):
    data = bytearray(VALID[:cut] if cut > 8 else VALID)
    for index, value in mutations:
        if index < len(data):
            data[index] = value
    try:
        tf = blz.read(InMemorySource(bytes(data)))
    except CodecError:
        return
    try:
        cores = tt.tt_cores(tf, tf.tensors[0])
    except CodecError:
        assert errors(tf) or not tf.tensors[0].components  # only a file with errors may fail to map
        return
    if not errors(tf) and tf.tensors[0].numel <= 10_000:
        assert tt.reconstruct(cores).shape == tf.tensors[0].shape


def test_importing_one_format_module_first_keeps_the_registry_complete():
    import subprocess
    import sys

    code = ("import ztviewer.codec.formats.blz; from ztviewer.codec.registry import formats; "
            "print(sorted(h.name for h in formats()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert {"blz", "safetensors", "zt"} <= set(eval(out))
