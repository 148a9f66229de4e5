"""Edit commands: apply / inverse / redo, the original model never touched, and what gets saved."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from ztviewer.codec import open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.decode import dense_array
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
from ztviewer.codec.errors import EditRefused
from ztviewer.codec.save import save


@pytest.fixture
def v10(tmp_path):
    path = tmp_path / "in.zt"
    save_arrays(path, {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.arange(4, dtype=np.int64)},
                attributes={"license": "MIT", "note": "x"})
    tf = open_file(path)
    yield tf
    tf.close()


def undo_redo(doc, command):
    """Apply, undo, redo as a QUndoStack would; returns the states seen."""
    before = (copy.deepcopy(doc.attributes), [(t.name, copy.deepcopy(t.attributes)) for t in doc.tensors])
    modified = doc.modified
    command.apply(doc)
    after = (copy.deepcopy(doc.attributes), [(t.name, copy.deepcopy(t.attributes)) for t in doc.tensors])
    undo = command.inverse()
    undo.apply(doc)
    assert (doc.attributes, [(t.name, t.attributes) for t in doc.tensors]) == before
    assert doc.modified == modified
    undo.inverse().apply(doc)
    assert (doc.attributes, [(t.name, t.attributes) for t in doc.tensors]) == after
    return before, after


@pytest.mark.parametrize("command, check", [
    (SetFileAttribute("license", "Apache-2.0"), lambda d: d.attributes["license"] == "Apache-2.0"),
    (SetFileAttribute("new", "v"), lambda d: d.attributes["new"] == "v"),
    (DeleteFileAttribute("note"), lambda d: "note" not in d.attributes),
    (RenameFileAttribute("note", "comment"), lambda d: d.attributes["comment"] == "x" and "note" not in d.attributes),
    (RenameTensor("a", "weights"), lambda d: [t.name for t in d.tensors] == ["weights", "b"]),
    (DeleteTensor("a"), lambda d: [t.name for t in d.tensors] == ["b"]),
    (SetTensorAttribute("a", "unit", "volt"), lambda d: d.find("a").attributes == {"unit": "volt"}),
])
def test_commands_apply_undo_redo(v10, command, check):
    doc = EditableDocument(v10)
    undo_redo(doc, command)
    assert check(doc) and doc.modified


def test_tensor_attribute_commands(v10):
    doc = EditableDocument(v10)
    SetTensorAttribute("a", "unit", "volt").apply(doc)
    undo_redo(doc, RenameTensorAttribute("a", "unit", "units"))
    assert doc.find("a").attributes == {"units": "volt"}
    undo_redo(doc, DeleteTensorAttribute("a", "units"))
    assert doc.find("a").attributes == {}


def test_encoding_and_digest_commands_round_trip(v10, tmp_path):
    doc = EditableDocument(v10)
    cmd = SetEncoding("zstd", 5, tensor="a")
    cmd.apply(doc)
    assert doc.find("a").components["data"].encoding == "zstd" and doc.modified
    cmd.inverse().apply(doc)
    assert doc.find("a").components["data"].encoding == "raw" and not doc.modified
    cmd.inverse().inverse().apply(doc)
    SetDigest("sha256").apply(doc)
    save(doc, tmp_path / "out.zt")
    with open_file(tmp_path / "out.zt") as out:
        a, b = out.tensor("a"), out.tensor("b")
        assert a.components["data"].encoding == "zstd" and b.components["data"].encoding == "raw"
        assert all(t.components["data"].digest.startswith("sha256:") for t in (a, b))
        np.testing.assert_array_equal(dense_array(out, a), np.arange(6, dtype=np.float32).reshape(2, 3))
    SetDigest(None).apply(doc)
    SetEncoding("raw").apply(doc)
    save(doc, tmp_path / "back.zt")
    assert (tmp_path / "back.zt").read_bytes() == (tmp_path / "in.zt").read_bytes()


def test_the_original_model_is_never_modified(v10, tmp_path):
    snapshot = (copy.deepcopy(v10.attributes), [(t.name, copy.deepcopy(t.attributes), dict(t.components))
                                                for t in v10.tensors])
    doc = EditableDocument(v10)
    for command in (SetFileAttribute("license", "GPL"), RenameTensor("a", "z"), SetTensorAttribute("z", "k", 1),
                    SetEncoding("zstd", 3), SetDigest("crc32c"), DeleteTensor("b")):
        command.apply(doc)
    save(doc, tmp_path / "edited.zt")
    assert (v10.attributes, [(t.name, t.attributes, dict(t.components)) for t in v10.tensors]) == snapshot
    with open_file(tmp_path / "edited.zt") as out:
        assert [t.name for t in out.tensors] == ["z"] and out.attributes["license"] == "GPL"
        assert out.tensors[0].attributes == {"k": 1}


def test_with_target_keeps_pending_edits(v10, tmp_path):
    doc = EditableDocument(v10)
    RenameTensor("a", "w").apply(doc)
    st = doc.with_target("safetensors")
    save(st, tmp_path / "o.safetensors")
    with open_file(tmp_path / "o.safetensors") as out:
        assert sorted(t.name for t in out.tensors) == ["b", "w"] and out.attributes == v10.attributes
    assert [t.name for t in doc.tensors] == ["w", "b"]


def test_inverse_before_apply_is_refused():
    with pytest.raises(EditRefused, match="never applied"):
        SetFileAttribute("k", "v").inverse()


def test_refused_command_changes_nothing(v10):
    doc = EditableDocument(v10)
    with pytest.raises(EditRefused):
        SetEncoding("zstd", 99).apply(doc)
    with pytest.raises(EditRefused):
        SetDigest("md5").apply(doc)
    assert not doc.modified and doc.revision == 0


def test_v01_custom_fields_and_duplicate_names(tmp_path):
    path = tmp_path / "v01.zt"
    save_arrays(path, {"a": np.ones(2, np.float32)}, to="zt-v0.1", tensor_attributes={"a": {"origin": "x"}})
    with open_file(path) as tf:
        doc = EditableDocument(tf)
        assert doc.target.key == "zt-v0.1" and doc.find("a").attributes == {"origin": "x"}
        SetTensorAttribute("a", "count", 3).apply(doc)
        SetEncoding("zstd").apply(doc)
        SetDigest("crc32c").apply(doc)
        save(doc, tmp_path / "out.zt")
    with open_file(tmp_path / "out.zt") as out:
        t = out.tensors[0]
        assert out.variant == "v0.1" and t.attributes == {"count": 3, "origin": "x"}
        assert t.components["data"].encoding == "zstd" and t.components["data"].digest.startswith("crc32c:0x")
