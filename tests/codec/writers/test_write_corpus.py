"""Every corpus file written back in its own format: same tensors, same bytes, stable on re-save."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests._corpus import CORPUS, corpus_manifest
from ztviewer.codec import open_file
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.decode import component_bytes
from ztviewer.codec.edit import EditableDocument
from ztviewer.codec.save import save
from ztviewer.codec.writers.document import stored_attributes

WRITABLE = [e for e in corpus_manifest() if not e["format"].startswith("ztensor-v2")]
#: the reference writer's __metadata__ order comes from a Rust HashMap; we write the keys sorted
REORDERED = {"safetensors/safetensors-0.8.0/metadata.safetensors"}


def _ids(entry: dict) -> str:
    return entry["path"]


def assert_same_tensors(a, b, *, same_stored: bool = True) -> None:
    """Names, dtypes, shapes, layouts, attributes and every component's bytes agree."""
    assert [t.name for t in a.tensors] == [t.name for t in b.tensors]
    for ta, tb in zip(a.tensors, b.tensors):
        assert (ta.dtype, ta.shape, ta.layout) == (tb.dtype, tb.shape, tb.layout), ta.name
        assert stored_attributes(ta) == stored_attributes(tb), ta.name
        assert set(ta.components) == set(tb.components), ta.name
        for role, ca in ta.components.items():
            cb = tb.components[role]
            if same_stored:
                assert (ca.encoding, ca.digest, ca.byte_order) == (cb.encoding, cb.digest, cb.byte_order)
            assert bytes(component_bytes(a, ta, ca)) == bytes(component_bytes(b, tb, cb)), (ta.name, role)
        if ta.layout in ("dense", "sparse_csr", "sparse_coo", "tensor_train"):
            assert content_sha256(a, ta) == content_sha256(b, tb), ta.name


def _manifest_hashes(entry: dict) -> dict[str, str]:
    if entry["format"] == "blz":
        return {}
    return {t["name"]: t["sha256"] for t in entry["tensors"] if t.get("sha256")}


@pytest.mark.parametrize("entry", WRITABLE, ids=_ids)
def test_resave_in_own_format(entry, tmp_path, corpus_dir):
    path = CORPUS / entry["path"]
    out = tmp_path / Path(entry["path"]).name
    with open_file(path) as original:
        assert original.readable
        doc = EditableDocument(original)
        assert not doc.modified
        save(doc, out)
        with open_file(out) as written:
            assert not [str(p) for p in written.all_problems() if p.is_error]
            assert written.format == original.format and written.variant == original.variant
            assert written.attributes == original.attributes
            assert_same_tensors(original, written)
            for t in written.tensors:
                expected = _manifest_hashes(entry).get(t.name)
                if expected and t.layout in ("dense", "sparse_csr", "sparse_coo"):
                    assert content_sha256(written, t) == expected, t.name
            again = tmp_path / ("again-" + out.name)
            save(EditableDocument(written), again)
    assert again.read_bytes() == out.read_bytes(), "re-saving our own file without edits is byte-identical"
    original_bytes, ours = path.read_bytes(), out.read_bytes()
    if entry["path"] in REORDERED:
        assert len(ours) == len(original_bytes) and ours[-8:] == original_bytes[-8:]
    else:
        assert ours == original_bytes, "the same bytes the reference writer produced"


@pytest.mark.parametrize("entry", [e for e in WRITABLE if e["tensors"] and e["format"] != "blz"], ids=_ids)
def test_edited_file_keeps_untouched_blobs(entry, tmp_path, corpus_dir):
    """Renaming one tensor changes only the manifest: every blob and digest comes through unchanged."""
    from ztviewer.codec.edit import RenameTensor

    path = CORPUS / entry["path"]
    out = tmp_path / Path(entry["path"]).name
    with open_file(path) as original:
        doc = EditableDocument(original)
        first = original.tensors[0].name
        RenameTensor(first, first + "_renamed").apply(doc)
        assert doc.modified
        save(doc, out)
        with open_file(out) as written:
            renamed = written.tensor(first + "_renamed")
            source = original.tensors[0]
            assert bytes(component_bytes(written, renamed, next(iter(renamed.components.values())))) == \
                bytes(component_bytes(original, source, next(iter(source.components.values()))))
            for t in original.tensors[1:]:
                if t.name == first:
                    continue
                w = written.tensor(t.name)
                for role, c in t.components.items():
                    assert w.components[role].digest == c.digest
                    assert bytes(component_bytes(written, w, w.components[role])) == \
                        bytes(component_bytes(original, t, c))
