"""Manifest keys ztviewer does not understand survive every edit and same-format rewrite, at every level (root,
object / tensor, part / component), and a save into another format names the ones it drops."""
from __future__ import annotations

import copy
import shutil
import struct
from pathlib import Path
from typing import Any

import cbor2
import numpy as np
import pytest
import xxhash

from tests.codec.formats.v2_builders import assemble, part
from tests.codec.formats.zt_builders import zt_bytes
from ztviewer.cli import main

DATA = np.arange(4, dtype="<f4").tobytes()
V2 = {"x-root": [1, {"deep": 2.5}],
      "objects": {"w": {"shape": [4], "layout": "dense", "x-object": {"a": 1},
                        "parts": {"data": part("f32", 65536, 16, digest=f"xxh3:{xxhash.xxh3_64_intdigest(DATA):016x}",
                                               **{"x-part": "p"})}}}}
V10 = {"version": "1.0", "generator": "a writer of its own 9.1", "attributes": {}, "x-root": 7,
       "tensors": {"w": {"dtype": "float32", "shape": [4], "format": "dense", "x-tensor": "t",
                         "components": {"data": {"offset": 64, "length": 16, "x-component": [1, 2]}}}}}
OBJECTS = {"version": "1.2.0", "x-root": {"n": None},
           "objects": {"w": {"shape": [4], "format": "dense", "x-object": True,
                             "components": {"data": {"dtype": "f32", "offset": 64, "length": 16,
                                                     "x-component": b"\x01"}}}}}
#: format → (the file's bytes, its manifest)
FILES = {
    "zt-v2": (lambda: assemble(V2, {65536: DATA}), V2),
    "zt-v1.0": (lambda: zt_bytes(b"ZTEN1000", V10, {64: DATA}), V10),
    "zt-objects": (lambda: zt_bytes(b"ZTEN1000", OBJECTS, {64: DATA}, objects=True), OBJECTS),
}
MODES = {"edit -o": ["-o", "{out}"], "edit --in-place": ["--in-place"],
         "edit --in-place --compact": ["--in-place", "--compact"]}


def manifest_of(path: Path, fmt: str) -> dict[Any, Any]:
    data = path.read_bytes()
    if fmt == "zt-v2":
        offset, length = struct.unpack("<QQ", data[-40:-24])
        return cbor2.loads(data[offset:offset + length])
    end = len(data) - (8 if fmt == "zt-objects" else 0)
    size = int.from_bytes(data[end - 8:end], "little")
    return cbor2.loads(data[end - 8 - size:end - 8])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("fmt", list(FILES))
def test_an_edit_keeps_unknown_keys_at_every_level(tmp_path, capsys, fmt, mode):
    build, manifest = FILES[fmt]
    source = tmp_path / "in.zt"
    source.write_bytes(build())
    out = tmp_path / "out.zt"
    edited = out if "-o" in MODES[mode] else source
    args = [a.format(out=out) for a in MODES[mode]]
    assert main(["edit", str(source), "--set-attr", "note=edited", *args]) == 0
    expected = copy.deepcopy(manifest)
    expected["attributes"] = {"note": "edited"}
    assert manifest_of(edited, fmt) == expected
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("fmt", list(FILES))
def test_a_same_format_convert_keeps_unknown_keys_and_the_generator(tmp_path, capsys, fmt):
    build, manifest = FILES[fmt]
    source = tmp_path / "in.zt"
    source.write_bytes(build())
    out = tmp_path / "out.zt"
    assert main(["convert", str(source), str(out), "--to", fmt]) == 0
    assert manifest_of(out, fmt) == manifest
    assert "warning" not in capsys.readouterr().err


def test_a_renamed_tensor_keeps_its_unknown_keys(tmp_path):
    source = tmp_path / "in.zt"
    source.write_bytes(FILES["zt-objects"][0]())
    assert main(["edit", str(source), "--rename", "w=renamed", "--in-place"]) == 0
    objects = manifest_of(source, "zt-objects")["objects"]
    assert objects == {"renamed": OBJECTS["objects"]["w"]}


@pytest.mark.parametrize(("fmt", "to", "keys"), [
    ("zt-v2", "zt", ["the root: 'x-root'", "tensor 'w': 'x-object'", "tensor 'w', part 'data': 'x-part'"]),
    ("zt-v1.0", "zt-objects", ["the root: 'x-root'", "tensor 'w': 'x-tensor'",
                               "tensor 'w', part 'data': 'x-component'"]),
    ("zt-objects", "zt-v2", ["the root: 'x-root'", "tensor 'w': 'x-object'",
                             "tensor 'w', part 'data': 'x-component'"]),
])
def test_a_convert_to_another_format_names_the_keys_it_drops(tmp_path, capsys, fmt, to, keys):
    source = tmp_path / "in.zt"
    source.write_bytes(FILES[fmt][0]())
    out = tmp_path / "out.zt"
    assert main(["convert", str(source), str(out), "--to", {"zt": "zt-v1.0"}.get(to, to)]) == 0
    err = capsys.readouterr().err
    assert "warning: manifest keys ztviewer does not understand are dropped" in err
    assert all(key in err for key in keys), err
    written = repr(manifest_of(out, {"zt": "zt-v1.0"}.get(to, to)))
    assert "x-" not in written


def test_save_as_lists_the_dropped_keys_among_its_notes(tmp_path):
    from ztviewer.codec.registry import open_file
    from ztviewer.codec.writers.document import EditableDocument
    from ztviewer.session.conversion import SaveOptions, plan_save

    source = tmp_path / "in.zt"
    source.write_bytes(FILES["zt-v2"][0]())
    with open_file(source) as tf:
        doc = EditableDocument(tf)
        assert not any("x-root" in note for note in plan_save(doc, SaveOptions("zt-v2")).notes)
        notes = plan_save(doc, SaveOptions("safetensors")).notes
    assert any("dropped" in note and "'x-root'" in note and "'x-part'" in note for note in notes), notes


def test_a_v10_edit_and_its_reversal_give_back_the_manifest_generator_included(tmp_path):
    plain = copy.deepcopy(V10)
    del plain["x-root"], plain["tensors"]["w"]["x-tensor"], plain["tensors"]["w"]["components"]["data"]["x-component"]
    source = tmp_path / "in.zt"
    source.write_bytes(zt_bytes(b"ZTEN1000", plain, {64: DATA}))
    copy_path = tmp_path / "copy.zt"
    shutil.copy(source, copy_path)
    assert main(["edit", str(source), "--set-attr", "a=b", "--in-place"]) == 0
    assert main(["edit", str(source), "--del-attr", "a", "--in-place"]) == 0
    assert manifest_of(source, "zt-v1.0") == manifest_of(copy_path, "zt-v1.0")


def test_parts_written_anew_name_the_keys_they_lose(tmp_path, capsys):
    values, indices, indptr = np.array([1.5, -2.0], "<f4"), np.array([0, 2], "<u8"), np.array([0, 1, 2], "<u8")
    csr = {"dtype": "float32", "shape": [2, 3], "format": "sparse_csr", "x-tensor": 1, "components": {
        "values": {"offset": 64, "length": 8, "x-values": "v"}, "indices": {"offset": 128, "length": 16},
        "indptr": {"offset": 192, "length": 24}}}
    manifest = {"version": "1.0", "generator": "g", "attributes": {}, "tensors": {"m": csr}}
    source = tmp_path / "in.zt"
    source.write_bytes(zt_bytes(b"ZTEN1000", manifest, {64: values.tobytes(), 128: indices.tobytes(),
                                                        192: indptr.tobytes()}))
    out = tmp_path / "out.zt"
    assert main(["convert", str(source), str(out), "--to", "zt-v1.0", "--densify"]) == 0
    err = capsys.readouterr().err
    assert "dropped (the tensor's parts are written anew): tensor 'm', part 'values': 'x-values'" in err
    entry = manifest_of(out, "zt-v1.0")["tensors"]["m"]
    assert entry["format"] == "dense" and entry["x-tensor"] == 1 and "x-values" not in repr(entry)


def test_a_safetensors_save_names_the_entry_keys_it_drops(tmp_path, capsys):
    header = (b'{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"x-entry":{"a":1}},'
              b'"v":{"dtype":"U8","shape":[1],"data_offsets":[16,17]}}')
    source = tmp_path / "in.safetensors"
    source.write_bytes(struct.pack("<Q", len(header)) + header + DATA + b"\x07")
    out = tmp_path / "out.safetensors"
    assert main(["edit", str(source), "--set-attr", "a=b", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "dropped (safetensors defines no place for them" in err and "tensor 'w': 'x-entry'" in err
    assert "'v'" not in err and b"x-entry" not in out.read_bytes()
