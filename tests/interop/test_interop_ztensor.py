"""The real ztensor readers read what we write: 1.0.1 our v1.0, 1.2.3 our objects layout, 0.1.4 our v0.1.

Each group of files goes through one subprocess in that version's venv (tests/interop/conftest.py), which
prints names, dtypes, shapes, formats and the SHA-256 of every decoded component; we compare them with what
our own reader decodes from the same file.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_manifest
from ztviewer.codec import open_file
from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays
from ztviewer.codec.convert import convert
from ztviewer.codec.decode import component_bytes, storage_dtype
from ztviewer.codec.edit import (
    EditableDocument,
    RenameTensor,
    SetDigest,
    SetEncoding,
    SetFileAttribute,
    SetTensorAttribute,
)
from ztviewer.codec.save import save
from ztviewer.codec.writers.document import stored_attributes

pytestmark = pytest.mark.interop
CORPUS_FILES = [e for e in corpus_manifest() if not e["format"].startswith("ztensor-v2")]
COMPLEX = {e["path"] for e in CORPUS_FILES if any(t["dtype"].startswith("complex") for t in e["tensors"])}


def le_sha(tf, tensor, component) -> str:
    data = bytes(component_bytes(tf, tensor, component))
    if component.byte_order == "big" and component.dtype:
        dtype = storage_dtype(tensor, component)
        if dtype.itemsize > 1:
            data = np.frombuffer(data, dtype).astype(dtype.newbyteorder("<")).tobytes()
    return hashlib.sha256(data).hexdigest()


def ours(path: Path) -> dict[str, dict]:
    with open_file(path) as tf:
        assert tf.readable and not tf.has_errors, [str(p) for p in tf.all_problems()]
        return {t.name: {"dtype": t.dtype, "shape": list(t.shape), "layout": t.layout,
                         "spelling": t.layout_spelling, "attributes": stored_attributes(t),
                         "components": {r: le_sha(tf, t, c) for r, c in t.components.items()},
                         "digests": {r: c.digest for r, c in t.components.items()}}
                for t in tf.tensors}


def _norm(value):
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    return value


def compare(path: Path, result: dict, version: str) -> None:
    assert "error" not in result, f"ztensor {version} failed on {path.name}: {result['error']}"
    mine = ours(path)
    theirs = {t["name"]: t for t in result["tensors"]}
    assert sorted(theirs) == sorted(mine), path.name
    for name, m in mine.items():
        t = theirs[name]
        assert t["shape"] == m["shape"], name
        if version == "1.2.3":
            assert t["format"] == m["layout"]
            assert _norm(t["attributes"] or {}) == _norm(m["attributes"]), name
        else:
            assert t["format"] == (m["spelling"] or m["layout"]), name
            assert t["dtype"] == m["dtype"], name
        if version == "0.1.4":
            assert t["checksum"] == m["digests"].get("data"), name
        readable = {r: s for r, s in m["components"].items() if r in t["components"]}
        if version != "0.1.4" or m["layout"] == "dense":
            assert set(t["components"]) == set(m["components"]), name
        assert t["components"] == readable, f"{path.name}: {name} decodes differently"
        if "public_read" in t:
            assert t["public_read"] == m["components"]["data"], name


def _synthetic(tmp: Path, to: str) -> list[Path]:
    csr = SparseArray("sparse_csr", (3, 4), np.array([1.5, -2.0, 3.25], np.float32), indices=np.array([0, 3, 1]),
                      indptr=np.array([0, 2, 2, 3]))
    coo = SparseArray("sparse_coo", (2, 3, 4), np.array([5, 6], np.int64), coords=np.array([[0, 1], [2, 0], [3, 1]]))
    dense = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "flags": np.array([True, False, True]),
             "bf": (np.array([0x3F80, 0xC000], np.uint16), "bfloat16"), "scalar": np.float64(2.5),
             "empty": np.zeros((0, 3), np.int32), "u": np.arange(5, dtype=np.uint16)}
    if to != "zt-v0.1":
        dense.update({"csr": csr, "coo": coo})
    if to == "zt":
        dense["tt"] = TensorTrainArray([np.ones((1, 2, 2)), np.full((2, 3, 1), 0.5)])
    attributes = {"license": "MIT", "ünï": "値"} if to != "zt-v0.1" else None
    tensor_attributes = {"w": {"unit": "volt", "scale": 0.5, "tags": ["a", "b"]}} if to != "zt" else (
        None)
    paths = []
    for i, options in enumerate([{}, {"compress": ("zstd", 3), "digest": "crc32c"},
                                 {"compress": ("zstd", 19), "digest": "sha256"}]):
        if to == "zt-v0.1" and options.get("digest") == "sha256":
            continue
        path = tmp / f"synthetic-{to}-{i}.zt"
        save_arrays(path, dense, to=to, attributes=attributes, tensor_attributes=tensor_attributes, **options)
        paths.append(path)
    return paths


def _edited_corpus(tmp: Path, variant: str, extra) -> list[Path]:
    """Every corpus file of ``variant`` re-saved after edits in its own format."""
    paths = []
    for entry in CORPUS_FILES:
        source = CORPUS / entry["path"]
        with open_file(source) as tf:
            if tf.format != "zt" or tf.variant != variant or not tf.tensors:
                continue
            doc = EditableDocument(tf)
            first = tf.tensors[0].name
            RenameTensor(first, first + ".renamed").apply(doc)
            extra(doc, first + ".renamed")
            out = tmp / ("edited-" + entry["path"].replace("/", "_"))
            save(doc, out)
            paths.append(out)
    return paths


def _check_group(reference, version: str, paths: list[Path]) -> None:
    results = reference(version, paths)
    for path in paths:
        compare(path, results[str(path)], version)
    tensors = sum(len(results[str(p)]["tensors"]) for p in paths)
    assert len(paths) >= 10 and tensors >= 100, (len(paths), tensors)


def test_ztensor_101_reads_our_v10(reference, tmp_path, corpus_dir):
    paths = _synthetic(tmp_path, "zt")
    for entry in CORPUS_FILES:
        if entry["path"] in COMPLEX:  # zTensor v1.0 has no complex dtypes (refused, see test_convert)
            continue
        for i, options in enumerate([{}, {"compress": ("zstd", 3), "digest": "crc32c"}]):
            out = tmp_path / f"conv{i}-{entry['path'].replace('/', '_')}.zt"
            convert(CORPUS / entry["path"], out, to="zt", **options)
            paths.append(out)

    def v10_edits(doc, name):
        SetFileAttribute("edited_by", "ztviewer").apply(doc)
        SetEncoding("zstd", 5, tensor=name).apply(doc)
        SetDigest("crc32c").apply(doc)

    paths += _edited_corpus(tmp_path, "v1.0", v10_edits)
    _check_group(reference, "1.0.1", paths)


def test_ztensor_123_reads_our_objects_layout(reference, tmp_path, corpus_dir):
    paths = _synthetic(tmp_path, "zt-objects")

    def objects_edits(doc, name):
        SetTensorAttribute(name, "note", {"k": [1, 2.5, True]}).apply(doc)
        SetEncoding("zstd", 3, tensor=name).apply(doc)
        SetDigest("sha256", tensor=name).apply(doc)

    paths += [p for p in _edited_corpus(tmp_path, "v1.x-objects", objects_edits) if "1.2.3" in p.name]
    for entry in CORPUS_FILES:
        if entry["format"] != "blz" and not entry["path"].startswith("zt_v1.x"):
            out = tmp_path / f"conv-{entry['path'].replace('/', '_')}.zt"
            convert(CORPUS / entry["path"], out, to="zt-objects")
            paths.append(out)
    _check_group(reference, "1.2.3", paths)


def test_ztensor_014_reads_our_v01(reference, tmp_path, corpus_dir):
    paths = _synthetic(tmp_path, "zt-v0.1")

    def v01_edits(doc, name):
        SetTensorAttribute(name, "origin", "ztviewer").apply(doc)
        SetEncoding("zstd", 3, tensor=name).apply(doc)
        SetDigest("crc32c", tensor=name).apply(doc)

    paths += _edited_corpus(tmp_path, "v0.1", v01_edits)
    for entry in CORPUS_FILES:
        if entry["format"] in ("ztensor-v1.0",) and "sparse" not in entry["path"]:
            out = tmp_path / f"conv-{entry['path'].replace('/', '_')}.zt"
            convert(CORPUS / entry["path"], out, to="zt-v0.1", compress=("zstd", 3), digest="crc32c")
            paths.append(out)
    _check_group(reference, "0.1.4", paths)


def test_ztensor_102_reads_our_edits_of_its_files(reference, tmp_path, corpus_dir):
    """Files ztensor 1.0.2 wrote (objects layout, version "1.1.0"), edited and saved, still open in 1.0.2."""

    def edits(doc, name):
        SetTensorAttribute(name, "note", "x").apply(doc)
        SetEncoding("zstd", 3).apply(doc)
        SetDigest("crc32c").apply(doc)

    paths = [p for p in _edited_corpus(tmp_path, "v1.x-objects", edits) if "1.0.2" in p.name]
    assert len(paths) >= 3
    results = reference("1.0.2", paths)
    for path in paths:
        compare(path, results[str(path)], "1.0.2")


def test_only_ztensor_12_reads_typed_file_attributes_of_the_objects_layout(reference, tmp_path):
    """Why an objects-layout file with non-string file attributes is refused in version 1.1.0 and warned about in
    1.2.0 (tests/codec/test_edit_refusals.py): 1.0.2 rejects the whole file, 1.2.3 reads it."""
    typed, text = tmp_path / "typed.zt", tmp_path / "text.zt"
    arrays = {"w": np.arange(4, dtype=np.float32)}
    save_arrays(typed, arrays, to="zt-objects", attributes={"n": 1})
    save_arrays(text, arrays, to="zt-objects", attributes={"n": "1"})
    old, new = reference("1.0.2", [typed, text]), reference("1.2.3", [typed, text])
    assert "expected a string" in old[str(typed)]["error"]
    assert "error" not in old[str(text)] and "error" not in new[str(typed)] and "error" not in new[str(text)]


def test_the_reference_readers_read_past_the_unknown_keys_an_edit_keeps(reference, tmp_path):
    """The keys tests/codec/writers/test_unknown_keys.py carries over at every level are read past by the readers of
    each format: ztensor 1.0.1 (v1.0), 1.0.2 and 1.2.3 (objects layout), 2.1.2 (v2, deep verification)."""
    from tests.codec.writers.test_unknown_keys import FILES
    from ztviewer.codec.save import edit_file

    written = {}
    for fmt, (build, _manifest) in FILES.items():
        source, out = tmp_path / f"{fmt}.zt", tmp_path / f"{fmt}-edited.zt"
        source.write_bytes(build())
        edit_file(source, [SetFileAttribute("note", "edited")], out)
        written[fmt] = out
    for version, fmt in (("1.0.1", "zt-v1.0"), ("1.0.2", "zt-objects"), ("1.2.3", "zt-objects")):
        result = reference(version, [written[fmt]])[str(written[fmt])]
        assert "error" not in result and [t["name"] for t in result["tensors"]] == ["w"], (version, result)
        compare(written[fmt], result, version)
    v2 = pytest.importorskip("ztensor")
    with v2.open(str(written["zt-v2"])) as source:
        report = source.verify(deep=True)
        assert report.checked == 1 and report.undigested == 0 and source.attributes == {"note": "edited"}
