"""HF safetensors 0.8.0 loads every safetensors file we write, with identical arrays and metadata."""
from __future__ import annotations

import ctypes
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_manifest
from ztviewer.codec import open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.convert import convert
from ztviewer.codec.decode import component_bytes, dense_array
from ztviewer.codec.dtypes import CANONICAL_TO_SAFETENSORS
from ztviewer.codec.edit import DeleteFileAttribute, DeleteTensor, EditableDocument, RenameTensor, SetFileAttribute
from ztviewer.codec.save import save

safetensors = pytest.importorskip("safetensors")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

pytestmark = pytest.mark.interop
NUMPY_DTYPES = {"F64", "F32", "F16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL", "C64"}


def check_with_hf(path: Path) -> int:
    """Load ``path`` with HF safetensors and compare with our reader; returns the tensor count."""
    data = path.read_bytes()
    parsed = dict(safetensors.deserialize(data))  # HF's own header validation and byte slicing
    with safetensors.safe_open(str(path), framework="np") as f:
        metadata = f.metadata() or {}
        keys = list(f.keys())
    with open_file(path) as tf:
        assert tf.readable and not tf.has_errors
        assert metadata == tf.attributes
        assert sorted(keys) == sorted(t.name for t in tf.tensors) == sorted(parsed)
        for t in tf.tensors:
            hf = parsed[t.name]
            assert hf["dtype"] == CANONICAL_TO_SAFETENSORS[t.dtype] and list(hf["shape"]) == list(t.shape)
            assert bytes(hf["data"]) == bytes(component_bytes(tf, t, t.components["data"])), t.name
        if all(parsed[t.name]["dtype"] in NUMPY_DTYPES for t in tf.tensors):
            arrays = safetensors_numpy.load_file(str(path))
            for t in tf.tensors:
                np.testing.assert_array_equal(arrays[t.name], dense_array(tf, t), err_msg=t.name)
                assert arrays[t.name].dtype == dense_array(tf, t).dtype
        return len(tf.tensors)


def test_hf_loads_our_conversions_of_the_corpus(tmp_path, corpus_dir):
    count = 0
    for entry in corpus_manifest():
        if entry["format"].startswith("ztensor-v2") or any(t["dtype"] == "complex128" for t in entry["tensors"]):
            continue
        if entry["path"].endswith("types_attrs.zt"):
            continue  # holds a structural-only quantized_group tensor (refused, tested in test_convert)
        out = tmp_path / (entry["path"].replace("/", "_") + ".safetensors")
        convert(CORPUS / entry["path"], out, to="safetensors", densify=True)
        count += check_with_hf(out)
    assert count > 700


def test_hf_loads_edited_safetensors(tmp_path, corpus_dir):
    count = 0
    for entry in corpus_manifest():
        if entry["format"] != "safetensors":
            continue
        with open_file(CORPUS / entry["path"]) as tf:
            doc = EditableDocument(tf)
            SetFileAttribute("edited_by", "ztviewer ✓").apply(doc)
            if "format" in doc.attributes:
                DeleteFileAttribute("format").apply(doc)
            if tf.tensors:
                RenameTensor(tf.tensors[0].name, "renamed/ü").apply(doc)
            if len(tf.tensors) > 2:
                DeleteTensor(tf.tensors[1].name).apply(doc)
            out = tmp_path / Path(entry["path"]).name
            save(doc, out)
        count += check_with_hf(out)
    assert count > 300


def test_hf_loads_synthetic_files(tmp_path):
    rng = np.random.default_rng(1)
    arrays = {"f32": rng.standard_normal((7, 3), dtype=np.float32), "f16": rng.standard_normal(5).astype(np.float16),
              "i8": np.arange(-4, 4, dtype=np.int8), "u64": np.arange(3, dtype=np.uint64), "b": np.array([True]),
              "c64": np.array([1 + 2j], np.complex64), "scalar": np.float64(1.5), "empty": np.zeros((0, 2)),
              "bf16": (np.array([0x3F80], np.uint16), "bfloat16"),
              "f8": (np.array([0x38, 0x40], np.uint8), "float8_e4m3fn")}
    out = tmp_path / "s.safetensors"
    save_arrays(out, arrays, to="safetensors", attributes={"b": "2", "a": "", "json": '{"x": [1]}'})
    assert check_with_hf(out) == len(arrays)
    ours, theirs = out.read_bytes(), _hf_serialized(out)
    assert len(ours) == len(theirs) and _split(ours)[1] == _split(theirs)[1], "same tensor order and bytes"
    assert json.loads(_split(ours)[0]) == json.loads(_split(theirs)[0]), "same header up to metadata order"


def _split(data: bytes) -> tuple[bytes, bytes]:
    n = struct.unpack("<Q", data[:8])[0]
    return data[8:8 + n], data[8 + n:]


def _hf_serialized(path: Path) -> bytes:
    """What HF's own serializer writes for the tensors and metadata of ``path``."""
    with safetensors.safe_open(str(path), framework="np") as f:
        metadata = f.metadata()
    keep, specs = [], {}
    for name, t in safetensors.deserialize(path.read_bytes()):
        buf = ctypes.create_string_buffer(bytes(t["data"]), len(t["data"]) or 1)
        keep.append(buf)
        specs[name] = safetensors.TensorSpec(dtype=_HF_DTYPE[t["dtype"]], shape=t["shape"],
                                             data_ptr=ctypes.addressof(buf), data_len=len(t["data"]))
    return bytes(safetensors.serialize(specs, metadata))


_HF_DTYPE = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
             "I32": "int32", "I16": "int16", "I8": "int8", "U64": "uint64", "U32": "uint32", "U16": "uint16",
             "U8": "uint8", "BOOL": "bool", "C64": "complex64", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}


def test_byte_identical_to_hf_serialize(tmp_path):
    """With at most one metadata key (no HashMap ordering involved) our output equals HF's bytes exactly."""
    arrays = {"z": np.ones(3, np.float32), "a": np.arange(4, dtype=np.int64), "m": np.array([True, False]),
              "h": (np.array([1, 2], np.uint16), "bfloat16"), "q": np.zeros((2, 0), np.uint8)}
    for metadata in (None, {"format": "pt"}):
        out = tmp_path / "x.safetensors"
        save_arrays(out, arrays, to="safetensors", attributes=metadata)
        assert out.read_bytes() == _hf_serialized(out)
