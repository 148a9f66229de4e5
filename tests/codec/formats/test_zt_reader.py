"""The zTensor 0.1 / 1.x readers over the shared corpus: every real-writer file reads to what MANIFEST.json
says, and every hostile file gets a clear problem (or, for data-level damage, opens for the decoder to judge).

Component ranges are compared with an independent, minimal parse of each file's manifest below.
"""
from __future__ import annotations

import struct
from pathlib import Path

import cbor2
import pytest

from tests._corpus import listed_dtype
from tests.codec.formats.zt_builders import CORPUS, errors, open_bytes, warnings, zt_corpus_entries, zt_hostile_entries
from ztviewer.codec import registry
from ztviewer.codec.dtypes import ZT_SHORT_TO_CANONICAL
from ztviewer.codec.source import LocalFile

ENTRIES = zt_corpus_entries()
HOSTILE = zt_hostile_entries()
VARIANT = {"ztensor-v0.1": "v0.1", "ztensor-v1.0": "v1.0", "ztensor-v1.1-objects": "v1.x-objects",
           "ztensor-v1.2-objects": "v1.x-objects"}
CANONICAL_LAYOUT = {"sparsecoo": "sparse_coo", "sparsecsr": "sparse_csr"}
STRUCTURAL = {"quantized_group"}


@pytest.fixture(autouse=True)
def _need_corpus(zt_corpus_files):
    """Every test here needs the shared corpus (skipped with the reason when it is absent)."""


def open_path(path: Path):
    return registry.read_source(LocalFile(path))


def oracle_manifest(path: Path) -> tuple[str, list[tuple[str, dict]]]:
    """(layout, [(name, {role: component map})]) read straight from the file's footer and CBOR."""
    data = path.read_bytes()
    if data[:8] == b"ZTEN1000" and data[-8:] == b"ZTEN1000":
        (size,) = struct.unpack("<Q", data[-16:-8])
        root = cbor2.loads(data[-16 - size:-16])
        return "objects", [(name, obj["components"]) for name, obj in root["objects"].items()]
    (size,) = struct.unpack("<Q", data[-8:])
    root = cbor2.loads(data[-8 - size:-8])
    if data[:8] == b"ZTEN0001":
        return "v0.1", [(e["name"], {"data": {"offset": e["offset"], "length": e["size"],
                                              "digest": e.get("checksum")}}) for e in root]
    return "v1.0", [(name, t["components"]) for name, t in root["tensors"].items()]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["path"])
def test_corpus_file_reads_as_manifest_says(entry):
    path = CORPUS / entry["path"]
    with open_path(path) as tf:
        assert tf.readable, list(tf.all_problems())
        assert (tf.format, tf.variant) == ("zt", VARIANT[entry["format"]])
        assert not errors(tf), errors(tf)
        assert sorted(t.name for t in tf.tensors) == sorted(t["name"] for t in entry["tensors"])
        assert [t.index for t in tf.tensors] == list(range(len(tf.tensors)))
        for want in entry["tensors"]:
            got = tf.tensor(want["name"])
            assert got.dtype == listed_dtype(want), want["name"]
            assert got.shape == tuple(want["shape"]), want["name"]
            assert got.layout == CANONICAL_LAYOUT.get(want["layout"], want["layout"]), want["name"]
            assert got.layout_spelling == want["layout"]
            assert {c.encoding for c in got.components.values()} == {want["encoding"]}, want["name"]
            algo = want.get("checksum", "none")
            if algo.startswith(("crc32c", "sha256")):
                assert all(c.digest.startswith(algo + ":") for c in got.components.values())
            elif algo == "none":
                assert all(c.digest is None for c in got.components.values())
            if "nnz" in want and want["encoding"] == "raw":
                assert got.extra["nnz"] == want["nnz"], want["name"]
            if want.get("data_endianness") == "big":
                assert got.components["data"].byte_order == "big"
            if "storage_dtype" in want:
                assert got.components["data"].dtype == want["storage_dtype"]
            if want["layout"] in STRUCTURAL:
                assert any("records no dequantization rule" in p.message for p in got.problems)
            else:
                assert not got.problems, got.problems


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["path"])
def test_components_match_an_independent_parse(entry):
    path = CORPUS / entry["path"]
    layout, oracle = oracle_manifest(path)
    with open_path(path) as tf:
        assert [t.name for t in tf.tensors] == [name for name, _ in oracle]
        for tensor, (name, components) in zip(tf.tensors, oracle):
            assert set(tensor.components) == set(components)
            for role, raw in components.items():
                c = tensor.components[role]
                assert (c.offset, c.length) == (raw["offset"], raw["length"]), (name, role)
                assert c.digest == raw.get("digest"), (name, role)
                assert c.encoding == raw.get("encoding", c.encoding if layout == "v0.1" else "raw")
                assert c.end <= tf.size
                if layout == "objects":
                    assert c.dtype == ZT_SHORT_TO_CANONICAL[raw["dtype"]]
                    assert c.uncompressed_length == raw.get("uncompressed_length")
                elif tensor.layout == "dense":
                    assert c.dtype == tensor.dtype
                elif role in ("indices", "indptr", "coords"):
                    assert c.dtype == "uint64"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["path"])
def test_regions_frame_the_manifest(entry):
    path = CORPUS / entry["path"]
    size = path.stat().st_size
    with open_path(path) as tf:
        kinds = [(r.kind, r.offset, r.length) for r in tf.regions]
        manifest = next(r for r in tf.regions if r.kind == "manifest")
        footer = next(r for r in tf.regions if r.kind == "footer")
        assert kinds[0] == ("magic", 0, 8)
        assert footer.end == manifest.end + 8
        if tf.variant == "v1.x-objects":
            assert kinds[-1] == ("magic", size - 8, 8) and footer.offset == size - 16
        else:
            assert footer.end == size
        if tf.variant == "v1.0":
            assert tf.extra == {"version": "1.0", "generator": "zTensor-Rust v0.1.0"}
            assert tf.attributes == {}
        elif tf.variant == "v1.x-objects":
            assert tf.extra["version"] in ("1.1.0", "1.2.0")


def test_zero_tensor_files_of_every_layout_open_cleanly():
    for rel, variant in [("zt_v0.1/ztensor-0.1.4/empty.zt", "v0.1"), ("zt_v1.0/ztensor-1.0.1/empty.zt", "v1.0"),
                         ("zt_v1.x/ztensor-1.0.2/empty.zt", "v1.x-objects"),
                         ("zt_v1.x/ztensor-1.2.3/empty.zt", "v1.x-objects")]:
        with open_path(CORPUS / rel) as tf:
            assert (tf.readable, tf.variant, tf.tensors) == (True, variant, [])
            assert not list(tf.all_problems())


def test_attributes_and_logical_types_of_the_objects_layout():
    with open_path(CORPUS / "zt_v1.x/ztensor-1.2.3/types_attrs.zt") as tf:
        assert tf.tensor("complex64_vec").attributes == {"n": 3, "scale": 0.5, "tags": ["a", "b"], "unit": "volt"}
        assert tf.tensor("dense_with_attrs").attributes == {"description": "hello", "flag": True,
                                                            "nested": {"k": [1, 2, 3]}}
        c128 = tf.tensor("complex128_mat")
        assert (c128.dtype, c128.components["data"].dtype, c128.components["data"].length) == (
            "complex128", "float64", 2 * 2 * 16)
        q = tf.tensor("qgroup")
        assert set(q.components) == {"packed_weight", "scales", "zeros"}
        assert q.components["scales"].dtype == "float16" and q.attributes["bits"] == 4


def test_v01_crate_sparse_is_one_packed_blob():
    with open_path(CORPUS / "zt_v0.1/ztensor-0.1.4-rust/sparse_crate_convention.zt") as tf:
        for name in ("coo_f64_3x4", "csr_f64_3x4"):
            t = tf.tensor(name)
            assert list(t.components) == ["data"] and t.extra["packed"] == "crate"


# --- hostile files -------------------------------------------------------------------------------------

#: file → groups of words; each group must appear together in one error (message, tensor, component, offset).
REJECT_WORDS: dict[str, list[tuple[str, ...]]] = {
    "empty.zt": [("empty", "0 bytes")],
    "seven_bytes.zt": [("7 bytes", "magic")],
    "zt01_cbor_huge_array_len.zt": [("not valid CBOR", "1036")],
    "zt01_cbor_indef_unterminated.zt": [("not valid CBOR", "ends in the middle")],
    "zt01_cbor_truncated_item.zt": [("not valid CBOR", "ends in the middle")],
    "zt01_checksum_malformed.zt": [("c_float32", "crc32c:0xZZZZZZZZ"), ("c_int64", "md5")],
    "zt01_float_dims.zt": [("t_float32", "shape", "3.0")],
    "zt01_invalid_cbor.zt": [("not valid CBOR", "break")],
    "zt01_lowercase_magic.zt": [("zten0001",)],
    "zt01_manifest_is_map.zt": [("v0.1 manifest", "array", "map")],
    "zt01_manifest_size_covers_magic.zt": [("manifest size", "2308", "2300")],
    "zt01_manifest_size_u64max.zt": [("manifest size", "18446744073709551615")],
    "zt01_manifest_size_zero.zt": [("manifest size", "is 0")],
    "zt01_missing_and_mistyped_keys.zt": [("t_float32", "missing", "'offset'"), ("t_float16", "offset", "'128'")],
    "zt01_negative_dim.zt": [("t_float32", "shape", "-3")],
    "zt01_offset_plus_size_overflows.zt": [("t_float32", "overflows", "18446744073709551552")],
    "zt01_overlapping_blobs.zt": [("t_float16", "overlaps", "t_float32", "at byte 80")],
    "zt01_size_not_shape_times_width.zt": [("t_float32", "44", "48")],
    "zt01_size_past_eof.zt": [("t_float32", "past the end of the file")],
    "zt01_truncated_in_manifest.zt": [("manifest size", "1672-byte file")],
    "zt01_truncated_last_byte.zt": [("manifest size", "2315-byte file")],
    "zt01_unknown_encoding_layout_endianness.zt": [("t_float32", "lz4"), ("t_float16", "ragged"),
                                                   ("t_float64", "middle")],
    "zt01_wrong_magic.zt": [("ZTEN9999", "unknown")],
    "zt10_cbor_nested_10000.zt": [("not valid CBOR", "nested deeper than 64")],
    "zt10_csr_missing_component.zt": [("csr_f32_5x6", "indptr")],
    "zt10_digest_malformed.zt": [("crc32c:1234",), ("sha256:abc",)],
    "zt10_manifest_size_u64max.zt": [("manifest size", "18446744073709551615")],
    "zt10_no_tensors_key.zt": [("no 'tensors'",)],
    "zt10_truncated_half.zt": [("manifest size", "is 0")],
    "zt10_unknown_dtype.zt": [("dense_neighbour", "float8_e4m3")],
    "zt10_version_major_2.zt": [("'2.0'", "major")],
    "zt1x_manifest_size_gt_file.zt": [("manifest size", "3388")],
    "zt1x_trailing_magic_wrong.zt": [("trailing magic", "ZTEN1001", "3380")],
}
WARN_WORDS: dict[str, tuple[str, ...]] = {
    "zt01_duplicate_name_conflicting.zt": ("t_float32", "appears 2 times"),
    "zt10_version_minor_newer.zt": ("'1.9'", "newer"),
}
#: damage inside tensor data: the manifest is sound, so the reader opens the file and the decoder
#: (decode.py / sparse.py / digest.py) reports it. The reader must not read data or trust sizes.
DECODE_TIME = {"zt01_zstd_garbage.zt": "t_float32", "zt10_coo_coord_out_of_range.zt": "coo_f64_2x3x4",
               "zt10_csr_column_out_of_range.zt": "csr_f32_5x6", "zt10_zstd_frame_declares_10GB.zt": "bomb",
               "zt1x_sha256_mismatch.zt": "sha256_raw_int64", "zt1x_zstd_bomb_6GiB.zt": "bomb"}


@pytest.mark.timeout(10)
@pytest.mark.parametrize("entry", HOSTILE, ids=lambda e: e["file"])
def test_hostile_file_gets_a_clear_verdict(entry):
    name = entry["file"]
    assert name in REJECT_WORDS or name in WARN_WORDS or name in DECODE_TIME, f"unclassified hostile file {name}"
    tf = registry.open_file(CORPUS / "hostile" / name)   # raises nothing but OSError
    with tf:
        assert tf.format == "zt"
        described = [p.describe() for p in tf.all_problems()]
        if name in DECODE_TIME:
            assert tf.readable and DECODE_TIME[name] in [t.name for t in tf.tensors], described
        elif entry["expect"] == "reject":
            assert errors(tf), described
            for words in REJECT_WORDS[name]:
                assert any(all(w in d for w in words) for d in map(str, errors(tf))), (words, described)
        else:
            assert tf.readable and not errors(tf) and warnings(tf), described
            assert any(all(w in str(p) for w in WARN_WORDS[name]) for p in warnings(tf)), described


def test_truncating_a_file_anywhere_never_raises():
    data = (CORPUS / "zt_v1.x/ztensor-1.2.3/sparse.zt").read_bytes()
    for end in range(len(data)):
        tf = open_bytes(data[:end])
        assert tf.has_errors or (end == 0 and not tf.readable)
