"""Conversion: every readable corpus file to zTensor v1.0 and safetensors with the same content hashes,
compression / digest options, densify, BLZ1 ↔ tensor_train, and bounded memory."""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_manifest
from ztviewer.codec import open_file
from ztviewer.codec.arrays import SparseArray, save_arrays
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.convert import convert
from ztviewer.codec.decode import dense_array
from ztviewer.codec.digest import verify_component
from ztviewer.codec.errors import EditRefused, UnsupportedConversion

READABLE = [e for e in corpus_manifest() if not e["format"].startswith("ztensor-v2")]
DECODABLE = ("dense", "sparse_csr", "sparse_coo", "tensor_train")


def HAS_COMPLEX(e: dict) -> bool:
    return any(t["dtype"].startswith("complex") for t in e["tensors"])


def NO_SAFETENSORS(e: dict) -> bool:
    return any(t["dtype"] == "complex128" for t in e["tensors"])


def hashes(path) -> dict[str, str]:
    with open_file(path) as tf:
        return {t.name: content_sha256(tf, t) for t in tf.tensors if t.layout in DECODABLE}


def check_output(path: Path, source_hashes: dict[str, str], names_from_source: bool = True) -> None:
    with open_file(path) as tf:
        assert tf.readable and not [str(p) for p in tf.all_problems() if p.is_error]
        got = {t.name: content_sha256(tf, t) for t in tf.tensors if t.layout in DECODABLE}
    if names_from_source:
        assert got == source_hashes
    else:
        assert sorted(got.values()) == sorted(source_hashes.values())


@pytest.mark.parametrize("entry", [e for e in READABLE if not HAS_COMPLEX(e)], ids=lambda e: e["path"])
@pytest.mark.parametrize("options", [{}, {"compress": ("zstd", 3), "digest": "sha256"}, {"compress": "raw"}],
                         ids=["keep", "zstd+sha256", "raw"])
def test_corpus_to_zt_v10(entry, options, tmp_path, corpus_dir):
    source = CORPUS / entry["path"]
    out = tmp_path / "out.zt"
    convert(source, out, to="zt", **options)
    check_output(out, hashes(source), names_from_source=entry["format"] != "blz")
    with open_file(out) as tf:
        assert tf.variant == "v1.0"
        for t in tf.tensors:
            for c in t.components.values():
                if options.get("compress") == "raw" or t.layout == "tensor_train":
                    assert c.encoding == "raw"
                elif options.get("compress"):
                    assert c.encoding == "zstd"
                if options.get("digest"):
                    assert c.digest.startswith("sha256:") and verify_component(tf.source, t, c)
    again = tmp_path / "again.zt"
    convert(out, again, to="zt", **options)
    assert again.read_bytes() == out.read_bytes(), "converting our own output again changes nothing"


@pytest.mark.parametrize("entry", [e for e in READABLE if not NO_SAFETENSORS(e)], ids=lambda e: e["path"])
def test_corpus_to_safetensors(entry, tmp_path, corpus_dir):
    source = CORPUS / entry["path"]
    out = tmp_path / "out.safetensors"
    with open_file(source) as tf:
        if any(t.layout not in DECODABLE for t in tf.tensors):
            pytest.skip("holds a structural-only layout")
        attributes = tf.attributes if tf.format in ("safetensors",) or tf.variant == "v1.0" else None
    convert(source, out, to="safetensors", densify=True)
    check_output(out, hashes(source), names_from_source=entry["format"] != "blz")
    if attributes is not None:
        with open_file(out) as tf:
            assert tf.attributes == attributes


def test_sparse_to_safetensors_needs_densify(tmp_path, corpus_dir):
    source = CORPUS / "zt_v1.0/ztensor-1.0.1/sparse.zt"
    with pytest.raises(UnsupportedConversion, match="densify it \\(densify=True\\)"):
        convert(source, tmp_path / "o.safetensors", to="safetensors")
    assert not (tmp_path / "o.safetensors").exists()


def test_zstd_blobs_are_copied_verbatim_when_kept(tmp_path, corpus_dir):
    source = CORPUS / "zt_v0.1/ztensor-0.1.4-rust/zstd_crc32c.zt"
    convert(source, tmp_path / "o.zt")
    with open_file(source) as a, open_file(tmp_path / "o.zt") as b:
        for t in a.tensors:
            ca, cb = t.components["data"], b.tensor(t.name).components["data"]
            assert cb.encoding == "zstd" and cb.digest == ca.digest
            assert bytes(a.source.view(ca.offset, ca.length)) == bytes(b.source.view(cb.offset, cb.length))


def test_big_endian_v01_is_swapped_and_its_checksum_recomputed(tmp_path, corpus_dir):
    source = CORPUS / "zt_v0.1/ztensor-0.1.4-rust/big_endian.zt"
    convert(source, tmp_path / "o.zt")
    check_output(tmp_path / "o.zt", hashes(source))
    with open_file(tmp_path / "o.zt") as tf:
        c = tf.tensor("be_float32").components["data"]
        assert c.byte_order == "little" and c.digest.startswith("crc32c:")
        assert verify_component(tf.source, tf.tensor("be_float32"), c)


def test_v01_packed_sparse_is_unpacked(tmp_path, corpus_dir):
    source = CORPUS / "zt_v0.1/ztensor-0.1.4-rust/sparse_crate_convention.zt"
    convert(source, tmp_path / "o.zt")
    check_output(tmp_path / "o.zt", hashes(source))
    with open_file(tmp_path / "o.zt") as tf:
        assert set(tf.tensor("csr_f64_3x4").components) == {"values", "indices", "indptr"}
        assert set(tf.tensor("coo_f64_3x4").components) == {"values", "coords"}


@pytest.mark.parametrize("name", ["mat_6x8_exact", "rank1_2x3x4x5", "seed_example_2x3", "t3_4x5x6_truncated",
                                  "t5_3x4x2x5x3_lowrank"])
def test_blz_to_tensor_train_and_back(name, tmp_path, corpus_dir):
    source = CORPUS / "blz" / f"{name}.blz"
    convert(source, tmp_path / "tt.zt", to="zt")
    with open_file(source) as a, open_file(tmp_path / "tt.zt") as b:
        ta, tb = a.tensors[0], b.tensors[0]
        assert tb.layout == "tensor_train" and tb.shape == ta.shape and tb.extra["ranks"] == ta.extra["ranks"]
        assert content_sha256(a, ta) == content_sha256(b, tb)
    convert(tmp_path / "tt.zt", tmp_path / f"{name}.blz", to="blz")
    assert (tmp_path / f"{name}.blz").read_bytes() == source.read_bytes()


def test_complex_blz_cannot_become_zt_v10(tmp_path, corpus_dir):
    refusal = r"no complex128 dtype .*formats that hold it: zt-objects, blz, zt-v2"
    with pytest.raises(UnsupportedConversion, match=refusal):
        convert(CORPUS / "blz/c2_5x6_complex128_truncated.blz", tmp_path / "c.zt")
    convert(CORPUS / "blz/c2_5x6_complex128_truncated.blz", tmp_path / "c.zt", to="zt-objects")
    convert(tmp_path / "c.zt", tmp_path / "c.blz", to="blz")
    assert (tmp_path / "c.blz").read_bytes() == (CORPUS / "blz/c2_5x6_complex128_truncated.blz").read_bytes()


def test_convert_refusals(tmp_path):
    path = tmp_path / "a.zt"
    save_arrays(path, {"s": SparseArray("sparse_coo", (3,), np.array([1.0]), coords=np.array([[2]]))})
    with pytest.raises(EditRefused, match="would overwrite the input"):
        convert(path, path, to="zt")
    with pytest.raises(EditRefused, match="unknown compression 'lz4'"):
        convert(path, tmp_path / "b.zt", compress=("lz4", 1))
    with pytest.raises(EditRefused, match="unknown output format 'npz'"):
        convert(path, tmp_path / "b.npz", to="npz")
    (tmp_path / "junk.zt").write_bytes(b"ZTEN1000garbage")
    with pytest.raises(UnsupportedConversion, match="cannot be read"):
        convert(tmp_path / "junk.zt", tmp_path / "c.zt")


def test_zstd_conversion_memory_is_bounded(tmp_path):
    """Compression streams chunk by chunk: peak Python memory stays far below the tensor size."""
    path = tmp_path / "big.safetensors"
    data = np.random.default_rng(0).integers(0, 100, 16 << 20, dtype=np.int32)  # 64 MiB
    save_arrays(path, {"x": data}, to="safetensors")
    del data
    tracemalloc.start()
    try:
        convert(path, tmp_path / "big.zt", compress=("zstd", 1))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"peak {peak / 2**20:.1f} MiB for a 64 MiB tensor"
    check_output(tmp_path / "big.zt", hashes(path))


def test_sharded_checkpoint_to_one_file(tmp_path):
    from tests.codec.multifile.test_multifile_builders import hf_arrays, hf_checkpoint, spark_dataset

    index = hf_checkpoint(tmp_path / "hf")
    convert(index, tmp_path / "one.zt", to="zt", digest="crc32c")
    convert(tmp_path / "hf", tmp_path / "one.safetensors", to="safetensors")
    expected = {name: a for shard in hf_arrays().values() for name, a in shard.items()}
    for out in (tmp_path / "one.zt", tmp_path / "one.safetensors"):
        with open_file(out) as tf:
            assert tf.attributes == {}, "the index's total_size describes the shards, not the tensors"
            assert sorted(t.name for t in tf.tensors) == sorted(expected)
            for t in tf.tensors:
                np.testing.assert_array_equal(dense_array(tf, t), expected[t.name])
    spark_dataset(tmp_path / "sp")
    with pytest.raises(UnsupportedConversion, match="'label' is used by more than one tensor"):
        convert(tmp_path / "sp", tmp_path / "sp.zt")
