"""zTensor v2 conformance corpus (upstream ztensor 2.1.2): every valid vector opens with the objects the
reference reader lists; every reject vector is refused with the rule its name names."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests._corpus import SHARED
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.errors import CodecError
from ztviewer.codec.formats.zt_v2 import read, rules
from ztviewer.codec.source import LocalFile

ztensor = pytest.importorskip("ztensor")
VECTORS = SHARED / "ref" / "ztensor-v2-conformance"
pytestmark = pytest.mark.skipif(not VECTORS.is_dir(), reason=f"no conformance vectors at {VECTORS}")

#: reject vectors refused on open, by the rule they break
REJECT_ON_OPEN: dict[str, tuple[str, ...]] = {
    rules.FILE_TOO_SMALL: ("file-too-small",),
    rules.HEADER_MAGIC: ("header-magic",),
    rules.FOOTER_MAGIC: ("footer-magic",),
    rules.VERSION: ("version-unsupported",),
    rules.MANIFEST_TOO_LARGE: ("manifest-too-large",),
    rules.MANIFEST_BOUNDS: ("manifest-out-of-bounds", "data-shard-nonzero-offset"),
    rules.BLOB_ALIGNMENT: ("manifest-misaligned", "blob-misaligned", "blob-offset-zero"),
    rules.MANIFEST_HASH: ("manifest-hash-mismatch",),
    rules.CBOR_SYNTAX: ("cbor-trailing-bytes", "cbor-tag", "cbor-indefinite"),
    rules.CBOR_DETERMINISM: ("cbor-non-shortest", "cbor-unsorted-keys"),
    rules.CBOR_DUPLICATE_KEY: ("cbor-duplicate-key",),
    rules.CBOR_DEPTH: ("cbor-depth",),
    rules.SCHEMA: (
        "schema-missing-objects", "schema-unknown-dtype", "schema-blob-arity", "schema-encoding-without-decoded-length",
        "schema-ltype-dtype-mismatch", "schema-digest-uppercase-hex", "shard-table-key-not-text",
        "blob-array-with-three-elements", "attributes-not-a-map", "attribute-key-not-text",
        "object-attributes-not-a-map",
    ),
    rules.SHARD_NAME: ("shard-name-traversal", "shard-name-separator", "shard-name-empty", "shard-name-leading-dot"),
    rules.SHARD_REF: ("shard-ref-not-in-table",),
    rules.NAME: ("attribute-key-empty", "attribute-key-nul", "name-empty", "name-nul", "name-too-long"),
    rules.BLOB_OVERLAP: ("shard-blob-partial-overlap", "blob-partial-overlap"),
    rules.SHAPE: ("shape-rank-65", "shape-product-overflow"),
    rules.BLOB_BOUNDS: ("blob-out-of-bounds",),
    rules.LAYOUT_RULE: (
        "csr-missing-part", "csr-signed-indices", "csr-indptr-count", "csr-values-size", "dense-extra-part",
    ),
    rules.DENSE_SIZE: ("dense-size-mismatch", "dense-f4-size-mismatch"),
}
#: reject vectors that open and that Check File refuses, by the rule they break
REJECT_ON_CHECK: dict[str, tuple[str, ...]] = {
    rules.LAYOUT_DATA: (
        "bool-invalid-byte", "f4-nonzero-odd-nibble", "csr-index-out-of-cols", "csr-indptr-not-zero-based",
        "csr-row-not-increasing",
    ),
    rules.DIGEST: ("verify-digest-mismatch",),
}
#: reject vector → (the rule it breaks, the operation that finds it: "open" or "check")
REJECT = {name: (rule, operation) for operation, table in (("open", REJECT_ON_OPEN), ("check", REJECT_ON_CHECK))
          for rule, names in table.items() for name in names}
#: valid vectors whose parts live in a shard the corpus does not ship: the image is valid, resolution is not
NEEDS_SHARD = {"shards-table", "shard-reference-is-a-valid-image", "local-and-foreign-parts-together"}
#: valid only as images (Op::Open upstream): their data breaks a data rule that check reports
DATA_BAD = {"f4-packed-odd-count"}


def _names(directory: str) -> list[str]:
    folder = VECTORS / directory
    return sorted(p.stem for p in folder.glob("*.zt")) if folder.is_dir() else []


def test_the_corpus_is_complete_and_every_reject_vector_is_mapped():
    assert len(_names("valid")) == 19
    assert sorted(REJECT) == _names("reject")


def _errors(tf) -> list:
    return [p for p in tf.all_problems() if p.is_error]


@pytest.mark.parametrize("name", _names("reject"))
def test_reject_vector_names_its_rule(name):
    rule, operation = REJECT[name]
    path = VECTORS / "reject" / f"{name}.zt"
    if name == "file-too-small":  # ten zero bytes: no format claims them, the v2 reader refuses them itself
        with pytest.raises(CodecError) as caught:
            read(LocalFile(path))
        assert caught.value.rule == rule
        assert not open_file(path).readable
        return
    tf = open_file(path)
    assert tf.format == "zt-v2"
    opened = _errors(tf)
    if operation == "open":
        assert rule in {p.rule for p in opened}, [str(p) for p in opened]
        return
    assert tf.readable and not opened, [str(p) for p in opened]
    found = [p for p in check_file(tf).problems if p.is_error]
    assert len(found) == 1 and found[0].rule.startswith(rule), [str(p) for p in found]


@pytest.mark.parametrize("name", _names("valid"))
def test_valid_vector_opens_with_the_reference_objects(name):
    path = VECTORS / "valid" / f"{name}.zt"
    tf = open_file(path)
    assert tf.readable and tf.format == "zt-v2"
    errors = _errors(tf)
    if name in NEEDS_SHARD:
        assert errors and {p.rule for p in errors} == {rules.SHARD_MISSING}
    else:
        assert not errors, [str(p) for p in errors]
    if name == "data-shard":
        assert tf.tensors == [] and tf.extra["data_shard"]
        return
    try:
        reference = sorted(ztensor.open(str(path)).keys())
    except Exception:
        reference = None
    if reference is not None:
        assert sorted(t.name for t in tf.tensors) == reference
    report = check_file(tf)
    if name not in NEEDS_SHARD | DATA_BAD:
        assert report.ok, [str(p) for p in report.problems]


def test_weight_tying_shows_every_owner():
    tf = open_file(VECTORS / "valid" / "aliased-identical-blobs.zt")
    a, b = (tf.tensor(n).components["data"] for n in ("a", "b"))
    assert (a.offset, a.length) == (b.offset, b.length)
    assert a.shared_with == ("b/data",) and b.shared_with == ("a/data",)


def test_structural_objects_refuse_to_decode_with_the_reason():
    from ztviewer.codec.decode import component_bytes
    from ztviewer.codec.dense import to_dense
    from ztviewer.codec.errors import UnsupportedLayout

    for name, rule in (("unknown-ltype-structural", rules.UNKNOWN_TYPE),
                       ("view-unknown-encoding-refused", rules.UNKNOWN_ENCODING)):
        tf = open_file(VECTORS / "valid" / f"{name}.zt")
        tensor = tf.tensors[0]
        with pytest.raises(UnsupportedLayout) as caught:
            component_bytes(tf, tensor, tensor.components["data"])
        assert caught.value.rule == rule
        with pytest.raises(UnsupportedLayout):
            to_dense(tf, tensor)
    tf = open_file(VECTORS / "valid" / "unknown-layout-structural.zt")
    tensor = tf.tensors[0]
    assert tensor.layout == "x.custom/1" and set(tensor.components) == {"data", "scales"}
    with pytest.raises(UnsupportedLayout):
        to_dense(tf, tensor)


def test_valid_csr_decodes():
    from ztviewer.codec.dense import to_dense

    tf = open_file(VECTORS / "valid" / "csr-data-valid.zt")
    dense = to_dense(tf, tf.tensor("m"), raw_bits=True)
    assert dense.shape == (2, 3)
    assert (dense != 0).tolist() == [[True, False, True], [False, True, False]]


def test_header_damage_is_reported_as_v2_not_as_an_unknown_file():
    tf = open_file(VECTORS / "reject" / "header-magic.zt")
    assert tf.format == "zt-v2" and not tf.readable
    assert os.path.basename(tf.path) == "header-magic.zt"


def _every_v2_file() -> list[Path]:
    corpus = SHARED / "corpus" / "zt_v2" / "ztensor-2.1.2"
    return sorted((VECTORS / "valid").glob("*.zt")) + sorted(corpus.glob("*.zt"))


@pytest.mark.parametrize("path", _every_v2_file() + sorted((VECTORS / "reject").glob("*.zt")), ids=lambda p: p.name)
def test_the_bytes_path_the_table_and_the_fast_loop_build_what_the_full_reader_builds(path, monkeypatch):
    from ztviewer.codec.formats.zt_v2 import columns, fast, reader

    ways = [open_file(path)]
    monkeypatch.setattr(reader, "read_plain", lambda data: None)  # the manifest through cbor2 and the schema
    ways.append(open_file(path))
    monkeypatch.setattr(columns, "objects_table", lambda objects: None)  # every map takes the loop
    ways.append(open_file(path))
    monkeypatch.setattr(fast, "PART_KEYS", {})  # every object takes the full reader
    full_tf = open_file(path)
    for tf in ways:
        assert tf.readable == full_tf.readable
        assert [p.message for p in tf.problems] == [p.message for p in full_tf.problems]
        assert len(tf.tensors) == len(full_tf.tensors)
        assert tf.tensor_names() == full_tf.tensor_names()
        for ours, theirs in zip(tf.tensors, full_tf.tensors):
            assert ours == theirs
        assert list(tf.all_problems()) == list(full_tf.all_problems())
        assert tf.attributes == full_tf.attributes
