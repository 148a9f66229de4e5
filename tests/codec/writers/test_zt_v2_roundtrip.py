"""zTensor v2 written by ztviewer and read back by ztviewer's own reader: v1 → v2 → v1 round trips with the
same content, in-place metadata edits as appended generations, compaction, and re-canonicalising the files
ztensor 2.1.2 wrote (byte-identical to ``ztensor.convert`` of the same file)."""
from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

from tests._corpus import CORPUS
from ztviewer.codec import open_file
from ztviewer.codec.arrays import SparseArray, save_arrays
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.convert import convert
from ztviewer.codec.edit import (
    DeleteFileAttribute,
    DeleteTensor,
    EditableDocument,
    RenameTensor,
    SetEncoding,
    SetFileAttribute,
    SetTensorAttribute,
)
from ztviewer.codec.errors import UnsupportedConversion
from ztviewer.codec.save import save
from ztviewer.codec.writers.zt_v2_append import journal_path

ztensor = pytest.importorskip("ztensor")

V1_FAMILIES = {"zt_v0.1": "zt-v0.1", "zt_v1.0": "zt", "zt_v1.x": "zt-objects"}


def _contents(path: Path) -> dict[str, tuple[str, tuple[int, ...], str, str]]:
    with open_file(path) as tf:
        assert tf.readable, tf.problems
        assert not [p for t in tf.tensors for p in t.problems if p.is_error]
        return {t.name: (t.dtype, tuple(t.shape), t.layout, content_sha256(tf, t)) for t in tf.tensors}


def _v1_corpus() -> list[Path]:
    return sorted(p for family in V1_FAMILIES for p in (CORPUS / family).rglob("*.zt")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", _v1_corpus(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_v1_to_v2_to_v1_keeps_every_tensor(path: Path, tmp_path: Path) -> None:
    family = V1_FAMILIES[path.relative_to(CORPUS).parts[0]]
    v2, back = tmp_path / "v2.zt", tmp_path / "back.zt"
    try:
        convert(path, v2, to="zt-v2")
    except UnsupportedConversion as exc:
        pytest.skip(f"not representable in v2: {exc}")
    ztensor.verify(str(v2), deep=True)
    original = _contents(path)
    assert _contents(v2) == original
    try:
        convert(v2, back, to=family)
    except UnsupportedConversion:  # the v0.1 crate's packed sparse blob: ztviewer writes it as v1.0
        convert(v2, back, to="zt")
    assert _contents(back) == original


def _v2_corpus() -> list[Path]:
    folder = CORPUS / "zt_v2"
    return sorted(folder.rglob("*.zt")) if folder.is_dir() else []


@pytest.mark.parametrize("path", _v2_corpus(), ids=lambda p: p.name)
def test_recanonicalising_ztensor_files_matches_ztensor_convert(path: Path, tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours.zt", tmp_path / "theirs.zt"
    ztensor.convert(str(path), str(theirs))
    convert(path, ours, to="zt-v2")
    assert ours.read_bytes() == theirs.read_bytes()
    assert _contents(ours) == _contents(path)


def _model(path: Path) -> Path:
    csr = SparseArray("sparse_csr", (3, 4), np.array([1.0, 2.0, 3.0], np.float32),
                      indices=np.array([0, 2, 1], np.uint64), indptr=np.array([0, 2, 2, 3], np.uint64))
    big = np.arange(200_000, dtype=np.float32)
    save_arrays(path, {"embed": big, "head": big.copy(), "csr": csr, "flag": np.array([True, False]),
                       "bias": np.ones(3)}, to="zt-v2", attributes={"license": "MIT", "drop": "me"},
                tensor_attributes={"bias": {"role": "bias"}})
    return path


def test_metadata_edits_in_place_append_one_generation(tmp_path: Path) -> None:
    path = _model(tmp_path / "m.zt")
    before = path.read_bytes()
    with open_file(path) as tf:
        doc = EditableDocument(tf)
        for command in (SetFileAttribute("note", {"nested": [1, 2.5, None]}), DeleteFileAttribute("drop"),
                        RenameTensor("embed", "tok_embeddings"), DeleteTensor("bias"),
                        SetTensorAttribute("csr", "kind", "adjacency")):
            command.apply(doc)
        result = save(doc)
    after = path.read_bytes()
    manifest_length = struct.unpack("<Q", after[-32:-24])[0]
    assert after[:len(before)] == before  # nothing old moved or overwritten
    assert result.size == len(after) <= len(before) + 65536 + manifest_length + 40
    assert not os.path.exists(journal_path(path))
    ztensor.verify(str(path), deep=True)
    with open_file(path) as tf:
        assert tf.attributes == {"license": "MIT", "note": {"nested": [1, 2.5, None]}}
        assert sorted(t.name for t in tf.tensors) == ["csr", "flag", "head", "tok_embeddings"]
        assert tf.tensor("csr").attributes == {"kind": "adjacency"}
        assert len(tf.extra["generations"]) == 1
        assert content_sha256(tf, tf.tensor("tok_embeddings")) == content_sha256(tf, tf.tensor("head"))
    with open_file(path) as tf:  # a second edit adds a second generation
        doc = EditableDocument(tf)
        SetFileAttribute("round", "2").apply(doc)
        save(doc)
    with open_file(path) as tf:
        assert len(tf.extra["generations"]) == 2 and tf.attributes["round"] == "2"


def test_compact_save_writes_what_ztensor_convert_writes(tmp_path: Path) -> None:
    path = _model(tmp_path / "m.zt")
    with open_file(path) as tf:
        doc = EditableDocument(tf)
        RenameTensor("head", "lm_head").apply(doc)
        save(doc)
    theirs = tmp_path / "theirs.zt"
    ztensor.convert(str(path), str(theirs))
    with open_file(path) as tf:
        save(EditableDocument(tf), compact=True)
    assert path.read_bytes() == theirs.read_bytes()
    with open_file(path) as tf:
        assert "generations" not in tf.extra


def test_data_changes_rewrite_the_file(tmp_path: Path) -> None:
    path = _model(tmp_path / "m.zt")
    with open_file(path) as tf:
        doc = EditableDocument(tf)
        SetEncoding("zstd", 3).apply(doc)
        save(doc)
    ztensor.verify(str(path), deep=True)
    with open_file(path) as tf:
        assert "generations" not in tf.extra
        assert {c.encoding for t in tf.tensors for c in t.components.values()} == {"zt.zstd-seekable/1"}
    raw = tmp_path / "raw.zt"
    convert(path, raw, to="zt-v2", compress="raw")  # back to canonical
    theirs = tmp_path / "theirs.zt"
    ztensor.convert(str(path), str(theirs))
    assert raw.read_bytes() == theirs.read_bytes()


def test_a_crash_during_an_in_place_save_keeps_the_previous_generation(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = _model(tmp_path / "m.zt")
    before = path.read_bytes()
    real_write = os.write

    inode = path.stat().st_ino

    def crash(fd: int, data: object) -> int:
        if os.fstat(fd).st_ino == inode:
            real_write(fd, bytes(memoryview(data)[:100]))  # type: ignore[arg-type]
            raise KeyboardInterrupt
        return real_write(fd, data)  # type: ignore[arg-type]

    with open_file(path) as tf:
        doc = EditableDocument(tf)
        SetFileAttribute("x", "y").apply(doc)
        monkeypatch.setattr(os, "write", crash)
        with pytest.raises(KeyboardInterrupt):
            save(doc)
        monkeypatch.undo()
    assert path.read_bytes() == before and not os.path.exists(journal_path(path))


def test_safetensors_to_v2_and_back_is_byte_identical(tmp_path: Path) -> None:
    src = CORPUS / "safetensors" / "safetensors-0.8.0" / "metadata.safetensors"
    if not src.is_file():
        pytest.skip("shared corpus not found")
    v2, back, direct = tmp_path / "m.zt", tmp_path / "back.safetensors", tmp_path / "direct.safetensors"
    convert(src, v2, to="zt-v2")
    convert(v2, back, to="safetensors")
    convert(src, direct, to="safetensors")  # the reference writer's layout (metadata keys sorted)
    assert back.read_bytes() == direct.read_bytes()
    assert _contents(back) == _contents(src)
    with open_file(back) as a, open_file(src) as b:
        assert a.attributes == b.attributes


def test_types_v1_cannot_hold_are_refused_on_the_way_back(tmp_path: Path) -> None:
    path = tmp_path / "f8.zt"
    save_arrays(path, {"scales": (np.array([127, 128], np.uint8), "float8_e8m0fnu")}, to="zt-v2")
    assert ztensor.open(str(path))["scales"].logical == "f8_e8m0"
    with pytest.raises(UnsupportedConversion, match="no float8_e8m0fnu dtype"):
        convert(path, tmp_path / "v1.zt", to="zt")
