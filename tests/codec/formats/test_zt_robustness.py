"""The zTensor reader never raises on damaged input, and lists a 10,000-tensor manifest quickly."""
from __future__ import annotations

import struct

import cbor2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._work import assert_linear, lines_run
from tests.codec.formats.zt_builders import CORPUS, V01, V1, dense_v10, open_bytes, zt_bytes
from ztviewer.codec import registry

SEEDS = ["zt_v0.1/ztensor-0.1.4-rust/sparse_crate_convention.zt", "zt_v1.0/ztensor-1.0.1/sparse.zt",
         "zt_v1.x/ztensor-1.2.3/types_attrs.zt"]


def _seed(rel: str) -> bytes:
    path = CORPUS / rel
    if not path.is_file():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return path.read_bytes()


def _check(tf) -> None:
    for p in tf.all_problems():
        assert isinstance(p.describe(), str)
    for t in tf.tensors:
        assert isinstance(t.name, str) and isinstance(t.dtype, str) and isinstance(t.shape, tuple)


@pytest.mark.parametrize("rel", SEEDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_corpus_files_never_raise(rel, data):
    raw = bytearray(_seed(rel))
    for _ in range(data.draw(st.integers(1, 6))):
        # bias towards the manifest and footer at the end of the file
        at = data.draw(st.one_of(st.integers(0, len(raw) - 1), st.integers(max(0, len(raw) - 400), len(raw) - 1)))
        raw[at] = data.draw(st.integers(0, 255))
    _check(open_bytes(bytes(raw)))


_cbor = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats() | st.text(max_size=8)
    | st.sampled_from(["dense", "sparse_csr", "sparse_coo", "data", "values", "f32", "float32", "zstd", "raw"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["name", "offset", "size", "length", "dtype", "shape", "format", "layout", "encoding",
                         "components", "data", "values", "indices", "indptr", "coords", "digest", "checksum",
                         "attributes", "type", "uncompressed_length", "data_endianness", "x"]), inner, max_size=6),
    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(manifest=_cbor, layout=st.sampled_from(["v0.1", "v1.0", "objects"]))
def test_arbitrary_manifests_never_raise(manifest, layout):
    if layout == "v0.1":
        data = zt_bytes(V01, [manifest], {64: bytes(64)})
    elif layout == "v1.0":
        data = zt_bytes(V1, {"version": "1.0", "tensors": {"t": manifest}}, {64: bytes(64)})
    else:
        data = zt_bytes(V1, {"version": "1.2.0", "objects": {"t": manifest}}, {64: bytes(64)}, objects=True)
    _check(open_bytes(data))


def test_listing_tensors_takes_linear_work(tmp_path):
    """Open + list n tensors lists them all, with work linear in n (the time against a bare ``cbor2.loads`` of
    the manifest is the ``open + list N-tensor .zt v1.0`` row of ``benchmarks/bench_open.py``)."""
    def listed(count: int) -> int:
        tensors, offset = {}, 64
        for i in range(count):
            length = 16 * (1 + i % 7)
            tensors[f"model.layers.{i // 10}.block{i % 10}.weight"] = dense_v10("float32", [4, 1 + i % 7], offset,
                                                                                length)
            offset += -(-length // 64) * 64
        manifest = cbor2.dumps({"version": "1.0", "generator": "bench", "attributes": {}, "tensors": tensors})
        path = tmp_path / f"big{count}.zt"
        with open(path, "wb") as f:
            f.write(V1)
            f.seek(offset)
            f.write(manifest + struct.pack("<Q", len(manifest)))

        def open_and_list() -> list[str]:
            with registry.open_file(path) as tf:
                return [t.name for t in tf.tensors]

        names, lines = lines_run(open_and_list)
        assert sorted(names) == sorted(tensors)
        return sum(lines.values())

    assert_linear(listed, 2500)


_ITEMSIZE = {"float32": 4, "uint8": 1, "bfloat16": 2, "f32": 4, "u8": 1, "bf16": 2}


@st.composite
def _dense_entries(draw, objects: bool):
    """Mostly valid plain dense entries; each field is odd one time in eight."""
    def pick(valid, odd):
        return draw(odd if draw(st.integers(0, 7)) == 3 else valid)

    dtype = pick(st.sampled_from(["f32", "u8", "bf16"] if objects else ["float32", "uint8", "bfloat16"]),
                 st.sampled_from(["f128", 3, None, "float8_e4m3", "float32" if objects else "f32"]))
    shape = [pick(st.integers(0, 5), st.sampled_from([-1, True, 2.0, 2 ** 64])) for _ in range(draw(st.integers(0, 3)))]
    numel = 1
    for dim in shape:
        numel *= dim if type(dim) is int else 1
    nbytes = numel * _ITEMSIZE.get(dtype, 4)
    odd_int = st.sampled_from([-1, 2 ** 64 - 1, 2 ** 64, "64", None, nbytes + 1])
    data = {"offset": pick(st.integers(0, 300), odd_int), "length": pick(st.just(nbytes), odd_int)}
    optional = [("encoding", st.sampled_from(["raw", "zstd"]), st.sampled_from(["lz4", 1])),
                ("digest", st.sampled_from(["crc32c:0x0000ABCD", "sha256:" + "a" * 64]),
                 st.sampled_from(["crc32c:1", "md5:00", 5]))]
    if objects:
        optional.append(("uncompressed_length", st.just(nbytes), odd_int))
    for key, valid, odd in optional:
        if draw(st.booleans()):
            data[key] = pick(valid, odd)
    if pick(st.just(False), st.just(True)):
        data[draw(st.sampled_from(["x", "type"] if objects else ["x", "uncompressed_length"]))] = "complex64"
    entry = {"shape": shape, "format": pick(st.just("dense"), st.sampled_from(["sparse_coo", "q4", 1])),
             "components": {pick(st.just("data"), st.sampled_from(["values", "x"])): data}}
    if objects:
        data["dtype"] = dtype
    else:
        entry["dtype"] = dtype
    if pick(st.just(False), st.just(True)):
        entry["attributes" if objects else "extra"] = {}
    return entry


@settings(max_examples=600, deadline=None)
@given(entry=_dense_entries(objects=False))
def test_v10_fast_path_agrees_with_the_full_path(entry):
    from ztviewer.codec.formats import zt_fast, zt_v10

    fast = zt_fast.probe_v10(3, "t", entry)
    if fast is not None:
        assert fast == zt_v10._tensor(3, "t", entry) and not fast.problems


@settings(max_examples=600, deadline=None)
@given(entry=_dense_entries(objects=True))
def test_objects_fast_path_agrees_with_the_full_path(entry):
    from ztviewer.codec.formats import zt_fast, zt_objects

    fast = zt_fast.probe_objects(3, "t", entry)
    if fast is not None:
        assert fast == zt_objects._object(3, "t", entry) and not fast.problems


def test_fast_paths_are_taken_for_plain_entries():
    from ztviewer.codec.formats import zt_fast, zt_objects, zt_v10

    v10 = dense_v10("float32", [2, 3], 64, 24, digest="crc32c:0x0000ABCD")
    assert zt_fast.probe_v10(0, "t", v10) == zt_v10._tensor(0, "t", v10)
    obj = {"shape": [2, 3], "format": "dense",
           "components": {"data": {"dtype": "f32", "offset": 64, "length": 9, "uncompressed_length": 24,
                                   "encoding": "zstd"}}}
    assert zt_fast.probe_objects(0, "t", obj) == zt_objects._object(0, "t", obj)
    assert zt_fast.probe_objects(0, "t", obj).components["data"].uncompressed_length == 24
