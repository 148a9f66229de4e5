"""Comparing real files: corpus pairs across formats, and pairs made with safetensors 0.8.0 and ztviewer's
own convert / edit (perturb, rename, delete, quantize, compress, densify, shard), numbers against numpy."""
from __future__ import annotations

import itertools
import json
import os
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests._corpus import CORPUS, corpus_manifest
from tests.codec.formats.zt_builders import V1, zt_bytes
from tests.codec.multifile.test_multifile_builders import hf_checkpoint
from ztviewer.analysis.diff import DiffOptions, Tolerance, Verdict, compare_files
from ztviewer.codec.convert import convert
from ztviewer.codec.errors import Cancelled
from ztviewer.codec.multifile import open_path

READABLE = corpus_manifest()  # every generation, zTensor v2 included


def ulp_key(x: np.ndarray) -> np.ndarray:
    """float32 bits as integers in value order (sign-magnitude → signed), written independently of ulp.py."""
    i = x.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def save_bits(path: Path, tensors: dict[str, tuple[str, np.ndarray]], metadata: dict[str, str]) -> None:
    """safetensors 0.8.0 writing arrays numpy has no dtype for (bfloat16 given as uint16 bits)."""
    from safetensors import serialize_file
    from safetensors._safetensors_rust import TensorSpec

    arrays = {name: np.ascontiguousarray(array) for name, (_, array) in tensors.items()}
    specs = {name: TensorSpec(dtype=dtype, shape=list(arrays[name].shape), data_ptr=arrays[name].ctypes.data,
                              data_len=arrays[name].nbytes) for name, (dtype, _) in tensors.items()}
    serialize_file(specs, str(path), metadata=metadata)


def diff(a, b, **options):
    with open_path(a) as tf_a, open_path(b) as tf_b:
        return compare_files(tf_a, tf_b, DiffOptions(**options))


def by_name(result):
    return {p.name: p for p in result.pairs}


def _same_stem_pairs() -> list[tuple[dict, dict]]:
    groups = defaultdict(list)
    for entry in READABLE:
        groups[Path(entry["path"]).stem].append(entry)
    return [pair for group in groups.values() for pair in itertools.combinations(group, 2)]


@pytest.mark.skipif(not READABLE, reason="shared corpus not available")
@pytest.mark.parametrize("entry_a,entry_b", _same_stem_pairs(),
                         ids=lambda e: e["path"].split("/", 1)[1] if isinstance(e, dict) else str(e))
def test_corpus_pairs_follow_the_manifest_hashes(entry_a, entry_b):
    """Files of the same name written by different writers: a tensor pair counts as equal exactly when the
    manifest's content hashes agree; names on one side only are reported as such."""
    result = diff(CORPUS / entry_a["path"], CORPUS / entry_b["path"], find_renames=False)
    tensors_a = {t["name"]: t for t in entry_a["tensors"]}
    tensors_b = {t["name"]: t for t in entry_b["tensors"]}
    pairs = by_name(result)
    assert set(pairs) == set(tensors_a) | set(tensors_b)
    for name, pair in pairs.items():
        if name not in tensors_b:
            assert pair.verdict is Verdict.ONLY_A
        elif name not in tensors_a:
            assert pair.verdict is Verdict.ONLY_B
        else:
            ta, tb = tensors_a[name], tensors_b[name]
            same = (ta["sha256"], ta["dtype"], ta["shape"]) == (tb["sha256"], tb["dtype"], tb["shape"])
            assert pair.verdict.content_equal is same, (name, pair)
    assert result.unchanged is (set(tensors_a) == set(tensors_b) and all(p.unchanged for p in pairs.values()))


@pytest.mark.skipif(not READABLE, reason="shared corpus not available")
def test_every_corpus_file_is_identical_to_itself():
    for entry in READABLE:
        result = diff(CORPUS / entry["path"], CORPUS / entry["path"])
        assert result.unchanged, entry["path"]
        assert all(p.verdict is Verdict.IDENTICAL for p in result.pairs), entry["path"]


@pytest.fixture
def checkpoint(tmp_path):
    rng = np.random.default_rng(7)
    tensors = {"w": rng.standard_normal((33, 17)).astype(np.float32),
               "b": rng.standard_normal(17).astype(np.float32),
               "steps": np.arange(6, dtype=np.int64)}
    path = tmp_path / "a.safetensors"
    save_file(tensors, str(path), metadata={"step": "100"})
    return path, tensors


def test_perturbed_tensor_numbers_match_numpy(tmp_path, checkpoint):
    path, tensors = checkpoint
    w = tensors["w"].copy()
    w[4, 9] += 0.25
    w[20] *= 1.001
    save_file({**tensors, "w": w}, str(tmp_path / "b.safetensors"), metadata={"step": "100"})
    result = diff(path, tmp_path / "b.safetensors", chunk_elements=100, worst=3)
    pairs = by_name(result)
    assert [pairs[n].verdict for n in ("b", "steps")] == [Verdict.IDENTICAL] * 2
    pair = pairs["w"]
    assert pair.verdict is Verdict.DIFFERENT and not result.unchanged
    a, b = tensors["w"].astype(np.float64), w.astype(np.float64)
    d = np.abs(a - b)
    s = pair.stats
    assert s.max_abs == pytest.approx(d.max(), rel=1e-12) and s.max_abs_index == (4, 9)
    assert s.mean_abs == pytest.approx(d.mean(), rel=1e-12)
    assert s.rel_l2 == pytest.approx(np.linalg.norm(a - b) / np.linalg.norm(a), rel=1e-12)
    assert s.cosine == pytest.approx(a.ravel() @ b.ravel() / np.linalg.norm(a) / np.linalg.norm(b), rel=1e-12)
    assert s.snr_db == pytest.approx(10 * np.log10((a ** 2).sum() / ((a - b) ** 2).sum()), rel=1e-12)
    assert s.differing == int(np.count_nonzero(tensors["w"] != w))
    assert s.max_ulp == int(np.abs(ulp_key(tensors["w"]) - ulp_key(w)).max())
    assert s.worst[0][0] == (4, 9)


def test_rename_delete_and_attributes(tmp_path, checkpoint):
    path, tensors = checkpoint
    save_file({"weight": tensors["w"], "b": tensors["b"], "extra": np.ones(2, np.float16)},
              str(tmp_path / "b.safetensors"), metadata={"step": "200", "note": "x"})
    result = diff(path, tmp_path / "b.safetensors")
    pairs = {(p.a.name if p.a else None, p.b.name if p.b else None): p for p in result.pairs}
    assert pairs[("w", "weight")].renamed and pairs[("w", "weight")].verdict is Verdict.IDENTICAL
    assert pairs[("steps", None)].verdict is Verdict.ONLY_A
    assert pairs[(None, "extra")].verdict is Verdict.ONLY_B
    assert [(c.key, c.kind.value, c.a, c.b) for c in result.attributes] == [
        ("step", "changed", "100", "200"), ("note", "added", None, "x")]
    without = diff(path, tmp_path / "b.safetensors", find_renames=False)
    assert {p.verdict for p in without.pairs if p.name in ("w", "weight")} == {Verdict.ONLY_A, Verdict.ONLY_B}


def test_bfloat16_quantization(tmp_path, checkpoint):
    path, tensors = checkpoint
    bits = (tensors["w"].view(np.uint32) + 0x8000 >> 16).astype(np.uint16)  # round half up to bfloat16
    quantized = (bits.astype(np.uint32) << 16).view(np.float32)
    save_bits(tmp_path / "bf16.safetensors", {"w": ("bfloat16", bits), "b": ("float32", tensors["b"]),
                                               "steps": ("int64", tensors["steps"])}, {"step": "100"})
    result = diff(path, tmp_path / "bf16.safetensors")
    pair = by_name(result)["w"]
    assert pair.verdict is Verdict.DIFFERENT and pair.changes == ["dtype float32 → bfloat16"]
    d = np.abs(tensors["w"].astype(np.float64) - quantized)
    assert pair.stats.max_abs == pytest.approx(d.max(), rel=1e-12)
    assert pair.stats.max_ulp == int(np.abs(ulp_key(tensors["w"]) - ulp_key(quantized)).max())
    assert pair.stats.rel_l2 < 2**-8
    close = diff(path, tmp_path / "bf16.safetensors", tolerance=Tolerance(2**-8, 0.0))
    assert by_name(close)["w"].verdict is Verdict.CLOSE and close.unchanged


def test_conversions_keep_content(tmp_path, checkpoint):
    path, _ = checkpoint
    convert(path, tmp_path / "plain.zt", "zt")
    convert(path, tmp_path / "zstd.zt", "zt", compress=("zstd", 3), digest="crc32c")
    convert(path, tmp_path / "objects.zt", "zt-objects")
    plain = diff(path, tmp_path / "plain.zt")
    assert plain.unchanged and all(p.verdict is Verdict.IDENTICAL for p in plain.pairs)
    packed = diff(tmp_path / "plain.zt", tmp_path / "zstd.zt")
    assert packed.unchanged and all(p.verdict is Verdict.SAME_CONTENT for p in packed.pairs)
    assert all("encoding raw → zstd" in p.changes and "checksum none → crc32c" in p.changes for p in packed.pairs)
    objects = diff(tmp_path / "zstd.zt", tmp_path / "objects.zt")
    assert objects.unchanged and objects.kind_b == "zt v1.x-objects"


def _csr_file(path: Path, dense: np.ndarray) -> None:
    rows, cols = np.nonzero(dense)
    values = dense[rows, cols].astype(np.float32)
    indptr = np.searchsorted(rows, np.arange(dense.shape[0] + 1)).astype(np.uint64)
    blobs = {64: values.tobytes(), 64 + 64 * 1024: cols.astype(np.uint64).tobytes(),
             64 + 128 * 1024: indptr.tobytes()}
    offsets = sorted(blobs)
    tensor = {"dtype": "float32", "shape": list(dense.shape), "format": "sparse_csr", "components": {
        "values": {"offset": offsets[0], "length": len(blobs[offsets[0]])},
        "indices": {"offset": offsets[1], "length": len(blobs[offsets[1]])},
        "indptr": {"offset": offsets[2], "length": len(blobs[offsets[2]])}}}
    manifest = {"version": "1.0", "generator": "test", "attributes": {}, "tensors": {"s": tensor}}
    end = max(o + len(b) for o, b in blobs.items())
    path.write_bytes(zt_bytes(V1, manifest, blobs, manifest_at=end + (-end) % 64))


def test_sparse_against_sparse_and_dense(tmp_path):
    rng = np.random.default_rng(4)
    a = np.where(rng.random((40, 50)) < 0.1, rng.standard_normal((40, 50)), 0).astype(np.float32)
    b = a.copy()
    b[3, 4] = 2.5  # a new entry
    nz = np.argwhere(a)
    b[tuple(nz[0])] = 0  # a dropped entry
    b[tuple(nz[1])] += 1
    _csr_file(tmp_path / "a.zt", a)
    _csr_file(tmp_path / "b.zt", b)
    save_file({"s": b}, str(tmp_path / "b.safetensors"))
    for other in ("b.zt", "b.safetensors"):
        result = diff(tmp_path / "a.zt", tmp_path / other, chunk_elements=64)
        s = by_name(result)["s"].stats
        d = np.abs(a.astype(np.float64) - b)
        assert s.differing == 3 and s.count == a.size and s.compared == a.size
        assert s.max_abs == pytest.approx(d.max()) and s.max_abs_index == tuple(np.unravel_index(d.argmax(), a.shape))
        assert s.mean_abs == pytest.approx(d.mean(), rel=1e-12)
        a64 = a.astype(np.float64)
        assert s.rel_l2 == pytest.approx(np.linalg.norm(a64 - b) / np.linalg.norm(a64), rel=1e-12)
    dense = diff(tmp_path / "b.zt", tmp_path / "b.safetensors")
    pair = by_name(dense)["s"]
    assert pair.verdict is Verdict.SAME_CONTENT and "layout sparse_csr → dense" in pair.changes


def test_sharded_checkpoint_against_its_merged_file(tmp_path):
    index = hf_checkpoint(tmp_path / "sharded")
    convert(index, tmp_path / "merged.zt", "zt")
    result = diff(tmp_path / "sharded", tmp_path / "merged.zt")
    assert len(result.pairs) == 6 and all(p.verdict is Verdict.IDENTICAL for p in result.pairs)
    # the index's total_size is the set's own attribute; the merged file does not carry it
    assert [(c.key, c.kind.value) for c in result.attributes] == [("total_size", "removed")]


def test_shape_change_and_damage_are_incomparable(tmp_path, checkpoint):
    path, tensors = checkpoint
    save_file({**tensors, "w": tensors["w"].reshape(17, 33)}, str(tmp_path / "b.safetensors"),
              metadata={"step": "100"})
    pair = by_name(diff(path, tmp_path / "b.safetensors"))["w"]
    assert pair.verdict is Verdict.INCOMPARABLE and "shapes differ" in pair.reason
    assert pair.changes == ["shape [33, 17] → [17, 33]"]
    corrupt = tmp_path / "corrupt.zt"
    convert(path, tmp_path / "z.zt", "zt", compress=("zstd", 3))
    data = bytearray((tmp_path / "z.zt").read_bytes())
    with open_path(tmp_path / "z.zt") as tf:
        c = tf.tensor("w").components["data"]
        data[c.offset:c.offset + 4] = b"\xff" * 4  # no zstd magic
    corrupt.write_bytes(bytes(data))
    pair = by_name(diff(tmp_path / "z.zt", corrupt))["w"]
    assert pair.verdict is Verdict.INCOMPARABLE and "zstd" in pair.reason


def test_each_tensor_is_checked_once(tmp_path, checkpoint, monkeypatch):
    """Whether a pair is described alike, whether a side is damaged and what a pair weighs are asked at most once
    per pair or tensor, whatever the verdict (identical, different, incomparable)."""
    import ztviewer.analysis.diff.engine as engine
    import ztviewer.analysis.diff.storage as storage
    from ztviewer.codec.model import Tensor

    path, tensors = checkpoint
    save_file({**tensors, "w": tensors["w"] + 1, "b": tensors["b"].reshape(1, 17)}, str(tmp_path / "b.safetensors"),
              metadata={"step": "100"})
    calls: defaultdict[str, list[str]] = defaultdict(list)

    def counted(name, function):
        def call(a, *args, **kwargs):
            calls[name].append(getattr(a, "name", None) or a.a.name)   # a tensor, or a pair of them
            return function(a, *args, **kwargs)
        return call

    for name in ("same_description", "_weight"):
        monkeypatch.setattr(engine, name, counted(name, getattr(engine, name)))
    monkeypatch.setattr(storage, "same_description", engine.same_description)
    has_errors = Tensor.has_errors
    monkeypatch.setattr(Tensor, "has_errors", property(counted("has_errors", has_errors.fget)))
    result = diff(path, tmp_path / "b.safetensors")
    assert {p.name: p.verdict for p in result.pairs} == {
        "w": Verdict.DIFFERENT, "b": Verdict.INCOMPARABLE, "steps": Verdict.IDENTICAL}
    # "steps", a small plain pair with the same stored bytes, is settled by them (plain_bytes) without asking
    assert sorted(calls["same_description"]) == ["b", "w"]
    assert sorted(calls["has_errors"]) == ["b", "b", "w", "w"]   # A's and B's
    assert len(calls["_weight"]) == 3


def test_progress_reaches_the_total_and_cancel_stops(tmp_path, checkpoint):
    path, tensors = checkpoint
    save_file({k: v + 1 for k, v in tensors.items()}, str(tmp_path / "b.safetensors"))
    seen = []
    with open_path(path) as a, open_path(tmp_path / "b.safetensors") as b:
        compare_files(a, b, DiffOptions(chunk_elements=50), progress=lambda done, total: seen.append((done, total)))
        assert seen and seen[-1][0] == seen[-1][1] == 2 * sum(t.nbytes for t in tensors.values())
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)
        with pytest.raises(Cancelled):
            compare_files(a, b, DiffOptions(chunk_elements=50), cancelled=lambda: True)


def test_json_document_of_a_directory_listing_is_stable(tmp_path, checkpoint):
    """The CLI's JSON is plain JSON (no NaN/Infinity literals) for identical files with infinite SNR."""
    from ztviewer.cli_diff import diff_document

    path, _ = checkpoint
    doc = diff_document(diff(path, path))
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text)["identical"] is True
    assert os.fspath(path) in text


def test_v1_file_against_its_v2_migration(tmp_path, checkpoint):
    path, tensors = checkpoint
    convert(path, tmp_path / "v1.zt", "zt")
    convert(tmp_path / "v1.zt", tmp_path / "v2.zt", "zt-v2")
    convert(tmp_path / "v1.zt", tmp_path / "v2z.zt", "zt-v2", compress=("zstd", 3))
    plain = diff(tmp_path / "v1.zt", tmp_path / "v2.zt")
    assert plain.unchanged and plain.kind_b.startswith("zt-v2")
    assert {p.verdict for p in plain.pairs} == {Verdict.IDENTICAL}
    packed = diff(tmp_path / "v1.zt", tmp_path / "v2z.zt")
    assert packed.unchanged and {p.verdict for p in packed.pairs} <= {Verdict.SAME_CONTENT, Verdict.IDENTICAL}
    w = tensors["w"].copy()
    w[0, 0] = np.nan
    save_file({**tensors, "w": w}, str(tmp_path / "nan.safetensors"), metadata={"step": "100"})
    changed = by_name(diff(tmp_path / "v2z.zt", tmp_path / "nan.safetensors"))["w"]
    assert changed.verdict is Verdict.DIFFERENT and changed.stats.nan_mismatch == 1 == changed.stats.differing
