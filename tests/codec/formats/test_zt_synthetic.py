"""Rules the corpus does not cover, on zTensor files built byte by byte."""
from __future__ import annotations

import struct

import cbor2
import pytest

from tests.codec.formats.zt_builders import (
    V01,
    V1,
    dense_v10,
    errors,
    has_error,
    has_warning,
    open_bytes,
    v01_entry,
    warnings,
    zt_bytes,
)

F32x6 = bytes(24)


def v10(tensors: dict, blobs: dict | None = None, **root) -> bytes:
    manifest = {"version": "1.0", "generator": "test", "attributes": {}, "tensors": tensors, **root}
    blobs = blobs or {64: F32x6}
    return zt_bytes(V1, manifest, blobs, manifest_at=max(o + len(b) for o, b in blobs.items()))


def objects(objs: dict, blobs: dict | None = None, version: str = "1.2.0") -> bytes:
    blobs = blobs or {64: F32x6}
    return zt_bytes(V1, {"version": version, "objects": objs}, blobs, objects=True,
                    manifest_at=max(o + len(b) for o, b in blobs.items()))


def obj(shape, components: dict, fmt: str = "dense", **more) -> dict:
    return {"shape": shape, "format": fmt, **more, "components": components}


# --- container ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, variant", [
    (V01 + b"\x80" + struct.pack("<Q", 1), "v0.1"),
    (V1 + cbor2.dumps({"version": "1.0", "generator": "g", "attributes": {}, "tensors": {}}).ljust(64, b"\0")
     + struct.pack("<Q", 64), "v1.0"),
    (zt_bytes(V1, {"version": "1.1.0", "objects": {}}, objects=True), "v1.x-objects"),
])
def test_smallest_valid_files_open(data, variant):
    tf = open_bytes(data)
    assert (tf.readable, tf.variant, tf.tensors) == (True, variant, [])
    assert not errors(tf)


def test_manifest_may_start_right_after_the_magic():
    data = V01 + cbor2.dumps([]) + struct.pack("<Q", 1)
    assert len(data) == 17 and open_bytes(data).readable


@pytest.mark.parametrize("data, words", [
    (b"ZTEN", ("4 bytes", "magic")),
    (V01 + b"\x80\0\0\0\0\0\0", ("15 bytes", "footer")),
    (V1 + V1, ("16 bytes", "trailing magic")),
    (b"ZTEN0002" + bytes(16), ("ZTEN0002",)),
    (V01 + b"\x80" + struct.pack("<Q", 2), ("manifest size", "is 2")),
])
def test_broken_containers_are_fatal_and_say_why(data, words):
    tf = open_bytes(data)
    assert not tf.readable and has_error(tf, *words), list(tf.all_problems())


def test_v2_is_recognised_and_its_broken_footer_named():
    tf = open_bytes(b"\x89ZT2\r\n\x1a\n" + bytes(40))
    assert (tf.format, tf.readable) == ("zt-v2", False)
    assert tf.problems[0].rule.startswith("footer-magic")


def test_cbor_nesting_guard_and_trailing_bytes():
    deep = {"a": 1}
    for _ in range(70):
        deep = {"a": deep}
    tf = open_bytes(v10({"t": dense_v10("float32", [6], 64, 24)}, attributes={"deep": deep}))
    assert not tf.readable and has_error(tf, "nested deeper than 64")
    body = cbor2.dumps({"version": "1.0", "tensors": {}}) + b"\0\0\0"
    tf = open_bytes(zt_bytes(V1, body, {}))
    assert tf.readable and has_warning(tf, "3 trailing bytes")


def test_duplicate_map_keys_are_tolerated_with_a_warning():
    entry = cbor2.dumps(dense_v10("float32", [6], 64, 24))
    body = (b"\xa2" + cbor2.dumps("version") + cbor2.dumps("1.0") + cbor2.dumps("tensors")
            + b"\xa2" + cbor2.dumps("t") + entry + cbor2.dumps("t") + entry)
    tf = open_bytes(zt_bytes(V1, body, {64: F32x6}, manifest_at=128))
    assert tf.readable and [t.name for t in tf.tensors] == ["t"]
    assert has_warning(tf, "duplicate keys")


# --- v0.1 ---------------------------------------------------------------------------------------------

def test_v01_entries_with_problems_are_still_listed():
    entries = [v01_entry("ok", "float32", [6], 64, 24), "not a map",
               {k: v for k, v in v01_entry("x", "int8", [2], 128, 2).items() if k != "name"},
               {**v01_entry("bad_types", "float32", [True, 3], 192, 12), "offset": "192"}]
    tf = open_bytes(zt_bytes(V01, entries, {64: F32x6, 128: b"\1\2", 192: bytes(12)}, manifest_at=256))
    assert [t.name for t in tf.tensors] == ["ok", "#1", "#2", "bad_types"]
    assert not tf.tensors[0].problems
    assert has_error(tf, "#1", "is a text string, not a map")
    assert has_error(tf, "#2", "has no 'name'")
    assert has_error(tf, "bad_types", "shape", "boolean")
    assert has_error(tf, "bad_types", "'offset' must be an unsigned integer")
    assert tf.tensors[2].components["data"].length == 2


def test_v01_zero_size_tensors_share_the_next_offset_without_overlap():
    entries = [v01_entry("a", "float32", [6], 64, 24), v01_entry("empty", "float32", [0], 128, 0),
               v01_entry("b", "float32", [6], 128, 24), v01_entry("tail", "int8", [0], 152, 0)]
    tf = open_bytes(zt_bytes(V01, entries, {64: F32x6, 128: F32x6}))
    assert not list(tf.all_problems())


def test_v01_alignment_is_a_warning_and_overlap_an_error():
    entries = [v01_entry("a", "float32", [6], 64, 24), v01_entry("b", "float32", [6], 72, 24)]
    tf = open_bytes(zt_bytes(V01, entries, {64: bytes(32)}, manifest_at=128))
    assert has_warning(tf, "b", "not a multiple of 64")
    assert has_error(tf, "'b'", "overlaps", "'a'") and has_error(tf, "'a'", "overlaps", "'b'")


def test_v01_fields_custom_keys_and_byte_order():
    entries = [v01_entry("be", "float32", [6], 64, 24, data_endianness="big", checksum="crc32c:0x0000ABCD",
                         author="me", zlevel=3),
               v01_entry("z", "float32", [6], 128, 9, encoding="zstd"),
               v01_entry("s", "float32", [], 192, 4), v01_entry("sp", "float32", [6], 256, 24, layout="sparse")]
    tf = open_bytes(zt_bytes(V01, entries, {64: F32x6, 128: bytes(9), 192: bytes(4), 256: F32x6}))
    be = tf.tensor("be")
    assert be.components["data"].byte_order == "big" and be.components["data"].digest == "crc32c:0x0000ABCD"
    assert be.attributes == {"author": "me", "zlevel": 3}
    assert tf.tensor("z").components["data"].encoding == "zstd" and not tf.tensor("z").problems
    assert tf.tensor("s").shape == () and not tf.tensor("s").problems
    assert not errors(tf) and has_warning(tf, "sp", "shown structurally")


def test_v01_packed_sparse_sizes_must_fit_a_whole_nnz():
    coo_ok = 3 * (2 * 8 + 4)   # nnz 3 of (2 u64 indices + f32)
    csr_ok = 4 * 8 + 2 * (8 + 4)
    entries = [v01_entry("coo", "float32", [3, 4], 64, coo_ok, layout="sparsecoo"),
               v01_entry("csr", "float32", [3, 4], 128, csr_ok, layout="sparsecsr"),
               v01_entry("coo_bad", "float32", [3, 4], 192, coo_ok + 1, layout="sparsecoo"),
               v01_entry("csr_3d", "float32", [3, 4, 1], 256, csr_ok, layout="sparsecsr")]
    tf = open_bytes(zt_bytes(V01, entries, {64: bytes(coo_ok), 128: bytes(csr_ok), 192: bytes(61),
                                            256: bytes(csr_ok)}))
    assert tf.tensor("coo").extra == {"packed": "crate", "nnz": 3} and not tf.tensor("coo").problems
    assert tf.tensor("csr").extra["nnz"] == 2 and tf.tensor("csr").layout == "sparse_csr"
    assert has_error(tf, "coo_bad", "not nnz")
    assert has_error(tf, "csr_3d", "2-D")


# --- v1.0 -----------------------------------------------------------------------------------------------

def test_v10_file_attributes_and_unknown_formats_are_kept():
    q4 = {"dtype": "uint8", "shape": [4, 4], "format": "quantized_4bit",
          "components": {"data": {"offset": 64, "length": 8}, "scale": {"offset": 128, "length": 4}}}
    tf = open_bytes(v10({"q": q4}, {64: bytes(8), 128: bytes(4)}, attributes={"license": "MIT"}))
    assert tf.attributes == {"license": "MIT"}
    q = tf.tensor("q")
    assert (q.layout, set(q.components)) == ("quantized_4bit", {"data", "scale"})
    assert not errors(tf) and has_warning(tf, "'q'", "quantized_4bit", "shown structurally")


def test_v10_sparse_component_sizes():
    def csr(values, indices, indptr):
        return {"dtype": "float32", "shape": [3, 4], "format": "sparse_csr",
                "components": {"values": {"offset": 64, "length": values},
                               "indices": {"offset": 128, "length": indices},
                               "indptr": {"offset": 192, "length": indptr}}}
    blobs = {64: bytes(64), 128: bytes(64), 192: bytes(40)}
    assert not errors(open_bytes(v10({"ok": csr(8, 16, 32)}, blobs)))
    assert has_error(open_bytes(v10({"m": csr(9, 16, 32)}, blobs)), "'m'", "values", "multiple")
    assert has_error(open_bytes(v10({"m": csr(8, 24, 32)}, blobs)), "'indices'", "nnz (2)")
    assert has_error(open_bytes(v10({"m": csr(8, 16, 40)}, blobs)), "'indptr'", "(rows + 1)")
    coo = {"dtype": "int64", "shape": [2, 3, 4], "format": "sparse_coo",
           "components": {"values": {"offset": 64, "length": 16}, "coords": {"offset": 128, "length": 40}}}
    tf = open_bytes(v10({"c": coo}, {64: bytes(16), 128: bytes(48)}))
    assert has_error(tf, "'c'", "'coords'", "ndim × nnz (2)")
    coo["components"]["coords"]["length"] = 48
    assert not errors(open_bytes(v10({"c": coo}, {64: bytes(16), 128: bytes(48)})))


def test_v10_per_tensor_schema_errors():
    tensors = {
        "no_data": {"dtype": "float32", "shape": [6], "format": "dense", "components": {}},
        "lz4": dense_v10("float32", [6], 64, 24, encoding="lz4"),
        "short": dense_v10("float32", [7], 128, 24),
        "nofmt": {"dtype": "float32", "shape": [6], "components": {"data": {"offset": 192, "length": 24}}},
        "notmap": [1, 2],
        "scalar": dense_v10("float64", [], 256, 8, digest="sha256:" + "ab" * 32),
        "sha_upper": dense_v10("int8", [1], 320, 1, digest="sha256:" + "AB" * 31),
    }
    tf = open_bytes(v10(tensors, {64: F32x6, 128: F32x6, 192: F32x6, 256: bytes(8), 320: b"\0"}))
    assert [t.name for t in tf.tensors] == list(tensors)
    assert has_error(tf, "no_data", "no 'data' component")
    assert has_error(tf, "lz4", "unknown encoding 'lz4'")
    assert has_error(tf, "short", "24 bytes", "28")
    assert has_error(tf, "nofmt", "missing required key 'format'")
    assert has_error(tf, "notmap", "must be a map")
    assert not tf.tensor("scalar").problems
    assert has_error(tf, "sha_upper", "64 hex digits")


@pytest.mark.parametrize("version, fatal, warned", [
    ("1.0", False, False), ("1.0.7", False, False), ("1.3", False, True), (None, False, True),
    ("2.0", True, False), ("one", True, False), (1.0, True, False),
])
def test_v10_version_negotiation(version, fatal, warned):
    root = {"tensors": {"t": dense_v10("float32", [6], 64, 24)}}
    if version is not None:
        root["version"] = version
    tf = open_bytes(zt_bytes(V1, root, {64: F32x6}, manifest_at=128))
    assert tf.readable is not fatal and bool(errors(tf)) is fatal
    assert bool(warnings(tf)) is warned


def test_components_must_not_reach_into_the_container():
    body = cbor2.dumps({"version": "1.0", "tensors": {
        "magic": dense_v10("uint8", [8], 0, 8),
        "past": dense_v10("uint8", [8], 64, 8),
        "manifest": dense_v10("uint8", [8], 128, 8)}})
    tf = open_bytes(zt_bytes(V1, body, {64: bytes(8)}, manifest_at=128))
    assert has_error(tf, "'magic'", "overlaps the magic")
    assert has_error(tf, "'manifest'", "overlaps the CBOR manifest")
    assert not tf.tensor("past").problems
    tail = open_bytes(v10({"t": dense_v10("uint8", [8], 2 ** 20, 8)}))
    assert has_error(tail, "'t'", "past the end of the file")


# --- v1.x objects ------------------------------------------------------------------------------------------

def test_objects_logical_types_and_their_sizes():
    objs = {
        "c64": obj([3], {"data": {"dtype": "f32", "type": "complex64", "offset": 64, "length": 24}}),
        "c64_short": obj([6], {"data": {"dtype": "f32", "type": "complex64", "offset": 128, "length": 24}}),
        "f8_over_f32": obj([6], {"data": {"dtype": "f32", "type": "f8_e4m3fn", "offset": 192, "length": 24}}),
        "f8": obj([24], {"data": {"dtype": "u8", "type": "f8_e4m3fn", "offset": 256, "length": 24}}),
        "odd": obj([6], {"data": {"dtype": "f128", "offset": 320, "length": 24}}),
    }
    tf = open_bytes(objects(objs, dict.fromkeys(range(64, 384, 64), F32x6)))
    c64 = tf.tensor("c64")
    assert (c64.dtype, c64.components["data"].dtype, c64.problems) == ("complex64", "float32", [])
    assert has_error(tf, "c64_short", "24 bytes", "48")
    assert has_error(tf, "f8_over_f32", "stored as uint8")
    f8 = tf.tensor("f8")
    assert (f8.dtype, f8.components["data"].dtype, f8.extra["logical_type"], f8.problems) == (
        "float8_e4m3fn", "uint8", "float8_e4m3fn", [])
    assert tf.tensor("odd").dtype == "f128" and has_error(tf, "odd", "unknown component dtype 'f128'")


def test_objects_uncompressed_length_and_attributes():
    objs = {
        "z": obj([6], {"data": {"dtype": "f32", "offset": 64, "length": 20, "uncompressed_length": 24,
                                "encoding": "zstd", "digest": "crc32c:0x00000000"}},
                 attributes={"x": [1, {"y": None}]}),
        "z_bad": obj([6], {"data": {"dtype": "f32", "offset": 128, "length": 20, "uncompressed_length": 28,
                                    "encoding": "zstd"}}),
        "attrs_list": obj([6], {"data": {"dtype": "f32", "offset": 192, "length": 24}}, attributes=[1]),
    }
    tf = open_bytes(objects(objs, {64: bytes(20), 128: bytes(20), 192: F32x6}))
    z = tf.tensor("z")
    assert z.attributes == {"x": [1, {"y": None}]} and z.components["data"].uncompressed_length == 24
    assert not z.problems
    assert has_error(tf, "z_bad", "uncompressed_length is 28")
    assert has_error(tf, "attrs_list", "'attributes' must be a map")


@pytest.mark.parametrize("version, fatal, warned", [("1.1.0", False, False), ("1.2.0", False, False),
                                                    ("1.3.0", False, True), ("2.0.0", True, False)])
def test_objects_version_negotiation(version, fatal, warned):
    tf = open_bytes(objects({"t": obj([6], {"data": {"dtype": "f32", "offset": 64, "length": 24}})},
                            version=version))
    assert tf.readable is not fatal and bool(errors(tf)) is fatal and bool(warnings(tf)) is warned


def test_objects_sparse_index_dtypes():
    objs = {"s": obj([4], {"values": {"dtype": "f32", "offset": 64, "length": 8},
                           "coords": {"dtype": "u32", "offset": 128, "length": 8}}, fmt="sparse_coo")}
    tf = open_bytes(objects(objs, {64: bytes(8), 128: bytes(8)}))
    s = tf.tensor("s")
    assert s.components["coords"].dtype == "uint32" and s.extra["nnz"] == 2
    assert has_warning(tf, "'coords'", "not u64") and not errors(tf)


def test_cyclic_cbor_in_attributes_is_refused_without_hanging():
    shared = b"\xd8\x1c\x81\xd8\x1d\x00"      # tag 28 [tag 29 0]: an array containing itself
    body = (b"\xa2" + cbor2.dumps("version") + cbor2.dumps("1.2.0") + cbor2.dumps("objects") + b"\xa1"
            + cbor2.dumps("t") + b"\xa4" + cbor2.dumps("shape") + cbor2.dumps([6]) + cbor2.dumps("format")
            + cbor2.dumps("dense") + cbor2.dumps("attributes") + b"\xa1" + cbor2.dumps("loop") + shared
            + cbor2.dumps("components") + cbor2.dumps({"data": {"dtype": "f32", "offset": 64, "length": 24}}))
    tf = open_bytes(zt_bytes(V1, body, {64: F32x6}, objects=True, manifest_at=128))
    (problem,) = errors(tf)  # value sharing is refused (issue 16): a value containing itself breaks every walk
    assert not tf.readable and problem.rule == "manifests do not use CBOR value sharing (tags 28 / 29)"
