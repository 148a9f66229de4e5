"""Every refusal: what the target format cannot hold is refused with why, and what would work instead."""
from __future__ import annotations

import numpy as np
import pytest

from ztviewer.codec import open_file
from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays, tensor_file_from_arrays
from ztviewer.codec.edit import (
    DeleteFileAttribute,
    DeleteTensor,
    DeleteTensorAttribute,
    EditableDocument,
    RenameFileAttribute,
    RenameTensor,
    RenameTensorAttribute,
    SetDigest,
    SetEncoding,
    SetFileAttribute,
    SetTensorAttribute,
)
from ztviewer.codec.errors import CodecError, EditRefused, UnsupportedConversion
from ztviewer.codec.model import TensorFile
from ztviewer.codec.save import save
from ztviewer.codec.writers.plan import build_plan
from ztviewer.codec.writers.targets import target


def doc_for(to: str, arrays=None, **kw) -> EditableDocument:
    arrays = arrays if arrays is not None else {"a": np.ones(3, np.float32), "b": np.zeros(2, np.float64)}
    return EditableDocument(tensor_file_from_arrays(arrays, **kw), to)


def tt_doc(to: str = "zt") -> EditableDocument:
    return doc_for(to, {"tt": TensorTrainArray([np.ones((1, 2, 2)), np.ones((2, 3, 1))])})


# (target, command, fragments the message must contain)
EDIT_REFUSALS = [
    ("safetensors", SetFileAttribute("n", 3), ["safetensors cannot hold", "string → string", "store it as a string"]),
    ("safetensors", SetFileAttribute(5, "x"), ["keys must be strings"]),
    ("safetensors", SetTensorAttribute("a", "k", "v"), ["no per-tensor metadata", "convert to zTensor v1.0"]),
    ("safetensors", SetEncoding("zstd", 3), ["'zstd' encoding", "raw data only", "convert to zTensor v1.0"]),
    ("safetensors", SetDigest("crc32c"), ["no per-tensor checksums", "convert to zTensor v1.0"]),
    ("safetensors", RenameTensor("a", "__metadata__"), ["reserved for the header metadata", "another name"]),
    ("zt", SetFileAttribute("n", 3), ["ztensor 1.0.1 rejects the whole file", "store it as a string, e.g. '3'"]),
    ("zt", SetFileAttribute("d", {"x": 1}), ["string → string map"]),
    ("zt", SetTensorAttribute("a", "bad", object()), ["cannot be stored in CBOR"]),
    ("zt", SetTensorAttribute("a", "huge", 2**70), ["does not fit CBOR's 64-bit integers", "store it as a string"]),
    ("zt", RenameTensor("a", "b"), ["a tensor named 'b' already exists", "delete that tensor first"]),
    ("zt", RenameTensor("missing", "x"), ["there is no tensor named 'missing'"]),
    ("zt", DeleteTensor("missing"), ["there is no tensor named 'missing'"]),
    ("zt", DeleteFileAttribute("nope"), ["the file has no attribute 'nope'"]),
    ("zt", RenameFileAttribute("nope", "x"), ["the file has no attribute 'nope'"]),
    ("zt", DeleteTensorAttribute("a", "nope"), ["tensor 'a' has no attribute 'nope'"]),
    ("zt", RenameTensorAttribute("a", "nope", "x"), ["tensor 'a' has no attribute 'nope'"]),
    ("zt", SetEncoding("zstd", 99, tensor="a"), ["zstd level 99", "integers up to 22"]),
    ("zt", SetEncoding("raw", 3, tensor="a"), ["apply to zstd only"]),
    ("zt", SetEncoding("lz4", tensor="a"), ["'lz4' encoding", "raw / zstd"]),
    ("zt", SetEncoding("zstd", tensor="a", role="values"), ["has no component 'values'", "it has data"]),
    ("zt", SetDigest("md5"), ["unknown digest algorithm 'md5'", "crc32c, sha256, xxh3 or none"]),
    ("zt-v0.1", SetFileAttribute("k", "v"), ["zTensor v0.1 cannot hold file-level attributes",
                                             "use per-tensor attributes"]),
    ("zt-v0.1", SetTensorAttribute("a", "dtype", "x"), ["reserved manifest key", "another attribute name"]),
    ("zt-v0.1", SetTensorAttribute("a", "checksum", "x"), ["reserved manifest key"]),
    ("zt-v0.1", SetDigest("sha256"), ["ztensor 0.1.4 verifies crc32c checksums only", "use crc32c"]),
    ("blz", SetFileAttribute("k", "v"), ["BLZ1 (.blz) cannot hold file-level attributes"]),
]


@pytest.mark.parametrize("to, command, fragments", EDIT_REFUSALS, ids=lambda v: getattr(v, "text", str(v)))
def test_edit_refusals(to, command, fragments):
    doc = doc_for(to)
    with pytest.raises(EditRefused) as info:
        command.apply(doc)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert not doc.modified


def test_attribute_rename_collisions():
    doc = doc_for("zt", attributes={"a": "1", "b": "2"}, tensor_attributes={"a": {"x": 1, "y": 2}})
    with pytest.raises(EditRefused, match="already has an attribute 'b'; delete it first"):
        RenameFileAttribute("a", "b").apply(doc)
    with pytest.raises(EditRefused, match="tensor 'a' already has an attribute 'y'"):
        RenameTensorAttribute("a", "x", "y").apply(doc)


def test_tensor_train_ranks_read_from_a_file_are_structural(tmp_path):
    save_arrays(tmp_path / "tt.zt", {"tt": TensorTrainArray([np.ones((1, 2, 2)), np.ones((2, 3, 1))])})
    with open_file(tmp_path / "tt.zt") as tf:
        doc = EditableDocument(tf)
        assert doc.find("tt").attributes == {"ranks": [1, 2, 1]}
        with pytest.raises(EditRefused, match="'ranks' of tensor train 'tt' are part of its structure"):
            DeleteTensorAttribute("tt", "ranks").apply(doc)
        with pytest.raises(EditRefused, match="'ranks' of tensor train 'tt' cannot be renamed"):
            RenameTensorAttribute("tt", "ranks", "r").apply(doc)
        SetTensorAttribute("tt", "note", "ok").apply(doc)
        save(doc, tmp_path / "tt2.zt")
    with open_file(tmp_path / "tt2.zt") as out:
        assert out.tensors[0].attributes == {"note": "ok", "ranks": [1, 2, 1]}


def test_tensor_train_refusals():
    doc = tt_doc()
    for command, fragment in [(SetEncoding("zstd", tensor="tt"), "stay raw: they already are the compressed form"),
                              (SetTensorAttribute("tt", "ranks", [1, 1, 1]), "reserved manifest key"),
                              (RenameTensorAttribute("tt", "ranks", "r"), "has no attribute 'ranks'")]:
        with pytest.raises(EditRefused, match=fragment):
            command.apply(doc)
    SetEncoding("zstd", 3).apply(doc)  # "every tensor" skips tensor trains instead of refusing
    assert doc.find("tt").components["core_0"].encoding == "raw"


def test_blz_structure_refusals():
    doc = tt_doc("blz")
    with pytest.raises(EditRefused, match="holds exactly one tensor train; delete the file instead"):
        DeleteTensor("tt").apply(doc)
    with pytest.raises(EditRefused, match="stores one unnamed tensor train"):
        RenameTensor("tt", "x").apply(doc)
    with pytest.raises(EditRefused, match="no per-tensor metadata"):
        SetTensorAttribute("tt", "k", "v").apply(doc)


def test_unknown_target_and_unwritable_source():
    with pytest.raises(EditRefused, match=r"unknown output format 'hdf5'; choose one of zt-v1\.0"):
        target("hdf5")
    future = TensorFile("x.zt", "zt", "v3")
    with pytest.raises(EditRefused, match=r"cannot be written back .read-only format.; convert them"):
        EditableDocument(future)
    broken = TensorFile("y.zt", "zt", "v1.0", readable=False)
    with pytest.raises(EditRefused, match="could not be read, so it cannot be edited"):
        EditableDocument(broken)


def test_save_needs_a_path():
    with pytest.raises(EditRefused, match="no file name; give a path"):
        save(doc_for("zt"))


# --- whole-document refusals when a save / conversion is planned ---------------------------------------
CSR = SparseArray("sparse_csr", (2, 2), np.array([1.0]), indices=np.array([1]), indptr=np.array([0, 1, 1]))
PLAN_REFUSALS = [
    ("safetensors", {"s": CSR}, {}, ["safetensors cannot hold the sparse (CSR) tensor 's'",
                                     "densify it (densify=True) or convert to zTensor v1.0"]),
    ("safetensors", {"t": TensorTrainArray([np.ones((1, 2, 1)), np.ones((1, 2, 1))])}, {},
     ["tensor-train tensor 't'", "densify it"]),
    ("safetensors", {"c": np.ones(2, np.complex128)}, {}, ["safetensors has no complex128 dtype",
                                                          "formats that hold it: zt-objects, blz, zt-v2"]),
    ("safetensors", {"a": np.ones(1)}, {"tensor_attributes": {"a": {"k": "v"}}},
     ["attributes on tensor 'a'", "delete the tensor attributes, or convert to zTensor v1.0"]),
    ("zt", {"c": np.ones(2, np.complex64)}, {}, ["zTensor v1.0 has no complex64 dtype",
                                                "ztensor 1.0.1 rejects the whole file", "zt-objects, safetensors"]),
    ("zt", {"f": (np.ones(2, np.uint8), "float8_e5m2")}, {}, ["no float8_e5m2 dtype"]),
    ("zt", {"a": np.ones(1)}, {"attributes": {"n": 1}}, ["the int value of attribute 'n'"]),
    ("zt-v0.1", {"s": CSR}, {}, ["zTensor v0.1 cannot hold the sparse (CSR) tensor 's'", "crate's packed"]),
    ("blz", {"a": np.ones((2, 2))}, {}, ["BLZ1 (.blz) cannot hold the 'dense'-layout tensor 'a'",
                                        "does not decompose tensors"]),
    ("blz", {}, {}, ["exactly one tensor train, this document has 0 tensors"]),
    ("blz", {"t": TensorTrainArray([np.ones((1, 2, 1), np.float32), np.ones((1, 2, 1), np.float32)])}, {},
     ["BLZ1 (.blz) cannot hold"]),
]


@pytest.mark.parametrize("to, arrays, kw, fragments", PLAN_REFUSALS)
def test_plan_refusals(to, arrays, kw, fragments):
    with pytest.raises(UnsupportedConversion) as info:
        build_plan(doc_for(to, arrays, **kw))
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


def test_duplicate_names_need_unique_output():
    tf = tensor_file_from_arrays({"a": np.ones(1), "b": np.ones(1)})
    tf.tensors[1].name = "a"
    with pytest.raises(UnsupportedConversion, match=r"'a' is used by more than one tensor .* rename or delete one"):
        build_plan(EditableDocument(tf, "zt"))
    assert len(build_plan(EditableDocument(tf, "zt-v0.1")).tensors) == 2, "v0.1 allows repeated names"


def test_tensor_with_errors_is_refused():
    tf = tensor_file_from_arrays({"a": np.ones(1)})
    from ztviewer.codec.model import error

    tf.tensors[0].problems.append(error("length is 9 bytes but numel × itemsize is 8", tensor="a"))
    with pytest.raises(UnsupportedConversion, match=r"tensor 'a': cannot be written: length is 9.*delete the tensor"):
        build_plan(EditableDocument(tf, "zt"))


def test_bad_tensor_train_ranks():
    tf = tensor_file_from_arrays({"t": TensorTrainArray([np.ones((1, 2, 1)), np.ones((1, 2, 1))])})
    tf.tensors[0].extra["ranks"] = (1, 1)
    with pytest.raises(CodecError, match=r"no valid ranks .* expected 3 positive integers"):
        build_plan(EditableDocument(tf, "zt"))


def _objects_file(tmp_path, version: str):
    from tests.codec.formats.zt_builders import zt_bytes

    manifest = {"version": version, "objects": {"w": {"shape": [1], "format": "dense", "components": {
        "data": {"dtype": "u8", "offset": 64, "length": 1}}}}}
    path = tmp_path / f"objects-{version}.zt"
    path.write_bytes(zt_bytes(b"ZTEN1000", manifest, {64: b"\x07"}, objects=True))
    return path


def test_objects_file_attributes_ztensor_102_cannot_read(tmp_path):
    """ztensor 1.0.2 reads an objects file's root attributes as strings only (tests/interop checks it): refused in
    the version it writes, named in a warning in a 1.2.0 file, which ztensor 1.2 reads."""
    with open_file(_objects_file(tmp_path, "1.1.0")) as tf:
        doc = EditableDocument(tf)
        SetFileAttribute("n", 3).apply(doc)
        with pytest.raises(UnsupportedConversion, match=r"version 1\.1\.0: ztensor 1\.0\.2, .* store it as a string"):
            save(doc, tmp_path / "out.zt")
        SetFileAttribute("n", "3").apply(doc)
        assert save(doc, tmp_path / "out.zt").warnings == ()
    with open_file(_objects_file(tmp_path, "1.2.0")) as tf:
        doc = EditableDocument(tf)
        SetFileAttribute("n", 3).apply(doc)
        SetFileAttribute("m", {"k": [1]}).apply(doc)
        SetFileAttribute("s", "text").apply(doc)
        (warning,) = save(doc, tmp_path / "out.zt").warnings
    assert "'n', 'm' are not strings" in warning and "ztensor 1.0.2" in warning and "'s'" not in warning
    with open_file(tmp_path / "out.zt") as written:
        assert written.attributes == {"n": 3, "m": {"k": [1]}, "s": "text"}
