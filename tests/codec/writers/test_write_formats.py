"""Byte layouts of every writer, checked on the raw bytes (parsed here with cbor2 / json, not with our readers)."""
from __future__ import annotations

import hashlib
import itertools
import json
import struct

import cbor2
import crc32c
import numpy as np
import pytest
import zstandard

import ztviewer
from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays, tensor_file_from_arrays
from ztviewer.codec.errors import WriterStateError
from ztviewer.codec.writers import Phase, build_plan, writer_for
from ztviewer.codec.writers.document import EditableDocument
from ztviewer.codec.writers.output import Output


def zt_parts(data: bytes, trailing_magic: bool = False) -> tuple[object, int, bytes]:
    """(decoded manifest, manifest offset, raw manifest bytes) of a zTensor file."""
    end = len(data) - (16 if trailing_magic else 8)
    size = struct.unpack("<Q", data[end:end + 8])[0]
    if trailing_magic:
        assert data[-8:] == b"ZTEN1000"
    raw = data[end - size:end]
    return cbor2.loads(raw), end - size, raw


ARRAYS = {
    "zeta": np.arange(12, dtype=np.float32).reshape(3, 4),
    "alpha": np.array([1, -2, 3], dtype=np.int16),
    "flags": np.array([True, False, True]),
}


def test_zt_v10_container_and_key_orders(tmp_path):
    path = tmp_path / "out.zt"
    save_arrays(path, ARRAYS, attributes={"z": "1", "a": "2"}, digest="crc32c")
    data = path.read_bytes()
    root, at, raw = zt_parts(data)
    assert data[:8] == b"ZTEN1000" and data[8:64] == bytes(56)
    assert raw[0] == 0xA4, "definite-length root map of 4 keys"
    assert list(root) == ["version", "generator", "attributes", "tensors"]
    assert root["version"] == "1.0" and root["generator"] == f"ztviewer {ztviewer.__version__}"
    assert list(root["attributes"]) == ["a", "z"]
    assert list(root["tensors"]) == ["alpha", "flags", "zeta"], "tensors sorted by name"
    for name, entry in root["tensors"].items():
        assert list(entry) == ["dtype", "shape", "format", "components"]
        comp = entry["components"]["data"]
        assert list(comp) == ["offset", "length", "digest"], "encoding 'raw' is never written"
        assert comp["offset"] % 64 == 0
        stored = data[comp["offset"]:comp["offset"] + comp["length"]]
        assert comp["digest"] == f"crc32c:0x{crc32c.crc32c(stored):08X}"
        expected = ARRAYS[name].astype(ARRAYS[name].dtype.newbyteorder("<")).tobytes()
        assert stored == expected
    # blobs in insertion order, zero padding between them, manifest straight after the last blob
    comps = sorted((e["components"]["data"] for e in root["tensors"].values()), key=lambda c: c["offset"])
    assert [c["offset"] for c in comps] == [64, 128, 192]
    for a, b in itertools.pairwise(comps):
        assert data[a["offset"] + a["length"]:b["offset"]] == bytes(b["offset"] - a["offset"] - a["length"])
    assert at == comps[-1]["offset"] + comps[-1]["length"]
    assert root["tensors"]["zeta"]["dtype"] == "float32" and root["tensors"]["flags"]["dtype"] == "bool"


def test_zt_v10_zstd_sha256_and_sparse(tmp_path):
    path = tmp_path / "sparse.zt"
    csr = SparseArray("sparse_csr", (3, 4), np.array([1.5, 2.5], np.float32), indices=np.array([1, 3]),
                      indptr=np.array([0, 1, 1, 2]))
    coo = SparseArray("sparse_coo", (2, 3, 4), np.array([7, 8], np.int32), coords=np.array([[0, 1], [2, 0], [3, 1]]))
    save_arrays(path, {"csr": csr, "coo": coo, "dense": np.zeros(1000, np.float64)}, compress=("zstd", 3),
                digest="sha256")
    data = path.read_bytes()
    root, _, _ = zt_parts(data)
    assert list(root["tensors"]["csr"]["components"]) == ["indices", "indptr", "values"]
    assert list(root["tensors"]["coo"]["components"]) == ["coords", "values"]
    assert root["tensors"]["csr"]["format"] == "sparse_csr" and root["tensors"]["coo"]["format"] == "sparse_coo"
    for entry in root["tensors"].values():
        for comp in entry["components"].values():
            assert list(comp) == ["offset", "length", "encoding", "digest"]
            stored = data[comp["offset"]:comp["offset"] + comp["length"]]
            assert comp["digest"] == "sha256:" + hashlib.sha256(stored).hexdigest()
            assert stored[:4] == b"\x28\xb5\x2f\xfd"
    comps = root["tensors"]["coo"]["components"]
    raw = zstandard.ZstdDecompressor().decompressobj().decompress(
        data[comps["coords"]["offset"]:comps["coords"]["offset"] + comps["coords"]["length"]])
    assert np.frombuffer(raw, "<u8").tolist() == [0, 1, 2, 0, 3, 1], "coords are ndim × nnz, row-major"
    dense = root["tensors"]["dense"]["components"]["data"]
    assert dense["length"] < 100


def test_zt_v10_tensor_train_ranks_in_attributes(tmp_path):
    path = tmp_path / "tt.zt"
    cores = [np.ones((1, 2, 3)), np.full((3, 4, 1), 2.0)]
    save_arrays(path, {"tt": TensorTrainArray(cores)})
    root, _, _ = zt_parts(path.read_bytes())
    entry = root["tensors"]["tt"]
    assert list(entry) == ["dtype", "shape", "format", "attributes", "components"]
    assert entry == {"dtype": "float64", "shape": [2, 4], "format": "tensor_train", "attributes": {"ranks": [1, 3, 1]},
                     "components": {"core_0": {"offset": 64, "length": 48}, "core_1": {"offset": 128, "length": 96}}}


@pytest.mark.parametrize("to, expected", [
    ("zt-v0.1", b"ZTEN0001\x80" + struct.pack("<Q", 1)),
    ("safetensors", struct.pack("<Q", 8) + b"{}      "),
])
def test_zero_tensor_files_match_the_reference_writers(tmp_path, to, expected):
    path = tmp_path / "empty"
    save_arrays(path, {}, to=to)
    assert path.read_bytes() == expected


def test_zero_tensor_zt_v10_and_objects(tmp_path):
    save_arrays(tmp_path / "a.zt", {})
    data = (tmp_path / "a.zt").read_bytes()
    root, at, _ = zt_parts(data)
    assert at == 8 and root["tensors"] == {} and root["attributes"] == {}
    save_arrays(tmp_path / "b.zt", {}, to="zt-objects")
    data = (tmp_path / "b.zt").read_bytes()
    assert len(data) == 48 and data[0x20:0x28] == struct.pack("<Q", 0x18) and data[0x28:] == b"ZTEN1000"


def test_zero_length_blob_at_the_end_points_at_the_manifest(tmp_path):
    path = tmp_path / "e.zt"
    save_arrays(path, {"a": np.ones(3, np.uint8), "b": np.zeros((0, 3), np.int32)}, to="zt-v0.1")
    data = path.read_bytes()
    entries, at, _ = zt_parts(data)
    assert entries[1]["offset"] == 128 == at and entries[1]["size"] == 0


def test_zt_v01_entries(tmp_path):
    path = tmp_path / "v01.zt"
    save_arrays(path, {"f": np.ones(2, np.float32), "u": np.ones(2, np.uint8),
                       "z": np.arange(100, dtype=np.int64)},
                to="zt-v0.1", tensor_attributes={"f": {"zz": 1, "note": "x", "nested": {"k": [1.5]}}})
    data = path.read_bytes()
    entries, _, raw = zt_parts(data)
    assert raw[0] == 0x83 and raw[1] == 0xBF, "definite array of indefinite-length maps"
    f, u, _ = entries
    assert list(f) == ["name", "offset", "size", "dtype", "layout", "shape", "encoding", "data_endianness",
                       "nested", "note", "zz"]
    assert f["data_endianness"] == "little" and "data_endianness" not in u, "only for multi-byte raw data"
    assert u["layout"] == "dense" and u["encoding"] == "raw"
    assert [e["name"] for e in entries] == ["f", "u", "z"], "manifest keeps the file order"


def test_zt_v01_zstd_checksum(tmp_path):
    path = tmp_path / "v01z.zt"
    save_arrays(path, {"z": np.arange(100, dtype=np.int64)}, to="zt-v0.1", compress=("zstd", 3), digest="crc32c")
    data = path.read_bytes()
    (z,), _, _ = zt_parts(data)
    stored = data[z["offset"]:z["offset"] + z["size"]]
    assert z["encoding"] == "zstd" and "data_endianness" not in z
    assert z["checksum"] == f"crc32c:0x{crc32c.crc32c(stored):08X}", "upper-case hex over the compressed bytes"
    assert stored[4] & 0xC0 == 0, "no Frame_Content_Size, like the real writers"


def test_objects_layout(tmp_path):
    path = tmp_path / "obj.zt"
    save_arrays(path, {"c": np.array([1 + 2j, 3 - 4j], np.complex64),
                       "f8": (np.arange(4, dtype=np.uint8), "float8_e4m3fn"),
                       "w": np.arange(6, dtype=np.float32)}, to="zt-objects", compress=("zstd", 1),
                tensor_attributes={"w": {"unit": "volt", "scale": 0.5}})
    data = path.read_bytes()
    root, _, _ = zt_parts(data, trailing_magic=True)
    assert list(root) == ["version", "objects"] and root["version"] == "1.2.0"
    c = root["objects"]["c"]
    assert list(c) == ["shape", "format", "components"] and c["shape"] == [2]
    comp = c["components"]["data"]
    assert list(comp) == ["dtype", "type", "offset", "length", "uncompressed_length", "encoding"]
    assert comp["dtype"] == "f32" and comp["type"] == "complex64" and comp["uncompressed_length"] == 16
    assert root["objects"]["f8"]["components"]["data"]["dtype"] == "u8"
    assert root["objects"]["f8"]["components"]["data"]["type"] == "f8_e4m3fn"
    w = root["objects"]["w"]
    assert list(w) == ["shape", "format", "attributes", "components"]
    assert list(w["attributes"]) == ["scale", "unit"]


def test_safetensors_header(tmp_path):
    path = tmp_path / "out.safetensors"
    arrays = {"b_f64": np.ones(2), "a_u8": np.ones(3, np.uint8), "d_f32": np.ones(1, np.float32),
              "c_i16": np.ones(2, np.int16), "é_bool": np.ones(1, bool), "x_u64": np.ones(1, np.uint64)}
    save_arrays(path, arrays, to="safetensors", attributes={"b": "2", "a": "1", "ü": "ß"})
    data = path.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = data[8:8 + n]
    assert n % 8 == 0 and header.rstrip(b" ").endswith(b"}") and header[0:1] == b"{"
    assert "é_bool".encode() in header and b"\\u" not in header, "UTF-8 is written raw"
    parsed = json.loads(header)
    assert list(parsed) == ["__metadata__", "x_u64", "b_f64", "d_f32", "c_i16", "a_u8", "é_bool"]
    assert list(parsed["__metadata__"]) == ["a", "b", "ü"]
    position = 0
    for name in list(parsed)[1:]:
        begin, end = parsed[name]["data_offsets"]
        assert begin == position
        assert data[8 + n + begin:8 + n + end] == np.asarray(arrays[name]).tobytes()
        position = end
    assert len(data) == 8 + n + position
    assert b'"dtype":"U64","shape":[1],"data_offsets":[0,8]' in header, "compact JSON, reference key order"


def test_blz_header(tmp_path):
    path = tmp_path / "t.blz"
    cores = [np.arange(4.0).reshape(1, 2, 2), np.arange(6.0).reshape(2, 3, 1)]
    save_arrays(path, {"t": TensorTrainArray(cores)}, to="blz")
    data = path.read_bytes()
    assert data[:15] == b"BLZ1\x01\x00\x02" + bytes(8)
    assert struct.unpack("<5Q", data[15:55]) == (2, 3, 1, 2, 1)
    assert data[55:] == cores[0].tobytes() + cores[1].tobytes()


def test_writer_phases_are_enforced():
    tf = tensor_file_from_arrays({"a": np.ones(2, np.float32)})
    plan = build_plan(EditableDocument(tf, "zt"))
    import os
    import tempfile

    with tempfile.TemporaryFile() as f:
        writer = writer_for(plan, Output(f.fileno()))
        with pytest.raises(WriterStateError, match="cannot write the manifest in phase EMPTY, expected BLOBS"):
            writer.finish()
        writer.begin()
        with pytest.raises(WriterStateError, match=r"1 planned component\(s\) unwritten \(a.data\)"):
            writer.finish()
        writer.add_component(plan.tensors[0], plan.tensors[0].components["data"])
        writer.finish()
        assert writer.phase is Phase.CLOSED
        with pytest.raises(WriterStateError, match=r"cannot add component a\.data in phase CLOSED, expected BLOBS"):
            writer.add_component(plan.tensors[0], plan.tensors[0].components["data"])
        assert os.fstat(f.fileno()).st_size > 64
    plan = build_plan(EditableDocument(tf, "safetensors"))
    with tempfile.TemporaryFile() as f:
        writer = writer_for(plan, Output(f.fileno()))
        with pytest.raises(WriterStateError, match="cannot write tensor data in phase EMPTY, expected HEADER"):
            writer.write_data()
