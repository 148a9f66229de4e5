"""A rewrite never makes damaged input look sound: a tensor whose recorded digest does not match, whose bool bytes
are not 0 / 1 or whose seekable part does not decode refuses the convert / save (naming tensor, component, offset
and rule) for every target, whatever digest is asked for; ``skip_damaged`` writes the sound tensors and lists the
others."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import xxhash

from tests._corpus import SHARED
from tests.codec.formats.v2_builders import assemble, part, seekable
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.convert import convert
from ztviewer.codec.decode import dense_array
from ztviewer.codec.edit import SetFileAttribute
from ztviewer.codec.errors import DamagedTensor
from ztviewer.codec.save import TMP_MARKER, edit_file

REJECT = SHARED / "ref" / "ztensor-v2-conformance" / "reject"
DIGEST_RULE = r"digest \(v2 §3\.4\)"
BOOL_RULES = r"(a bool element is stored as 0 or 1|layout-data)"
#: every target that can hold a plain 1-d tensor, with the digest choices it accepts (None: keep, "none": drop)
TARGET_DIGESTS = [("zt", d) for d in (None, "none", "sha256", "crc32c")] + \
    [("zt-objects", d) for d in (None, "none", "sha256")] + [("zt-v0.1", d) for d in (None, "none", "crc32c")] + \
    [("safetensors", None), ("zt-v2", None), ("zt-v2", "sha256"), ("zt-v2", "none")]


def _vector(name: str) -> Path:
    path = REJECT / name
    if not path.is_file():
        pytest.skip(f"no conformance vector {path}")
    return path


def _xxh3(data: bytes) -> str:
    return f"xxh3:{xxhash.xxh3_64_intdigest(data):016x}"


def _nothing_left(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if TMP_MARKER in p.name]


@pytest.mark.parametrize(("to", "digest"), TARGET_DIGESTS)
@pytest.mark.parametrize(("vector", "rule"), [("verify-digest-mismatch.zt", DIGEST_RULE),
                                              ("bool-invalid-byte.zt", BOOL_RULES)])
def test_a_damaged_conformance_vector_converts_to_no_target(vector, rule, to, digest, tmp_path):
    out = tmp_path / "out.bin"
    with pytest.raises(DamagedTensor, match=rf"^tensor 't', component 'data', at byte 4096 .*cannot be written: .*"
                                            rf"\[{rule}"):
        convert(_vector(vector), out, to=to, digest=digest)
    assert not out.exists() and _nothing_left(tmp_path)


def _two_tensors(path: Path, damaged_digest: bool = True, damaged: bytes = bytes(range(8))) -> Path:
    """``a``: four float32 with their right digest; ``b``: eight bytes whose digest is wrong (or right)."""
    good = np.arange(4, dtype="<f4").tobytes()
    b_digest = "xxh3:0000000000000000" if damaged_digest else _xxh3(damaged)
    manifest = {"objects": {
        "a": {"shape": [4], "layout": "dense", "parts": {"data": part("f32", 4096, 16, digest=_xxh3(good))}},
        "b": {"shape": [8], "layout": "dense", "parts": {"data": part("u8", 8192, 8, digest=b_digest)}}}}
    path.write_bytes(assemble(manifest, {4096: good, 8192: damaged}))
    return path


@pytest.mark.parametrize("to", ["zt", "zt-objects", "zt-v0.1", "safetensors", "zt-v2"])
def test_skip_damaged_writes_the_sound_tensors_and_lists_the_others(to, tmp_path):
    src = _two_tensors(tmp_path / "two.zt")
    with pytest.raises(DamagedTensor, match=r"tensor 'b', component 'data', at byte 8192"):
        convert(src, tmp_path / "refused", to=to)
    result = convert(src, tmp_path / "out", to=to, skip_damaged=True)
    assert [name for name, _ in result.skipped] == ["b"]
    assert "the file records 0000000000000000" in result.skipped[0][1] and "digest (v2 §3.4)" in result.skipped[0][1]
    with open_file(tmp_path / "out") as out:
        assert [t.name for t in out.tensors] == ["a"] and check_file(out).ok
        np.testing.assert_array_equal(np.frombuffer(out.source.read(out.tensor("a").components["data"].offset, 16),
                                                    "<f4"), np.arange(4, dtype="<f4"))


def test_a_sound_file_converts_with_nothing_skipped(tmp_path):
    src = _two_tensors(tmp_path / "two.zt", damaged_digest=False)
    for to in ("zt", "zt-v2", "safetensors"):
        result = convert(src, tmp_path / f"out-{to}", to=to, skip_damaged=True)
        assert result.skipped == ()
        with open_file(tmp_path / f"out-{to}") as out:
            assert [t.name for t in out.tensors] == ["a", "b"] and check_file(out).ok


def _safetensors_bool(path: Path, values: bytes) -> Path:
    header = json.dumps({"flag": {"dtype": "BOOL", "shape": [len(values)], "data_offsets": [0, len(values)]},
                         "x": {"dtype": "F32", "shape": [2], "data_offsets": [len(values), len(values) + 8]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + values + np.ones(2, "<f4").tobytes())
    return path


@pytest.mark.parametrize("byte", [2, 3, 255])
@pytest.mark.parametrize("to", ["zt-v2", "zt", "zt-v0.1", "safetensors"])
def test_a_safetensors_bool_byte_other_than_0_or_1_refuses(byte, to, tmp_path):
    src = _safetensors_bool(tmp_path / "b.safetensors", bytes([1, byte, 0]))
    with pytest.raises(DamagedTensor, match=rf"tensor 'flag', component 'data'.*bool element 1 is 0x{byte:02x}, not 0 "
                                            r"or 1.*\[a bool element is stored as 0 or 1\]"):
        convert(src, tmp_path / "out", to=to)
    result = convert(src, tmp_path / "out", to=to, skip_damaged=True)
    assert [name for name, _ in result.skipped] == ["flag"]
    with open_file(tmp_path / "out") as out:
        assert [t.name for t in out.tensors] == ["x"]


def test_check_reports_what_the_rewrite_refuses(tmp_path):
    """``check`` of the input says what a convert of it would refuse: a bool byte 2 is an error there too."""
    path = _safetensors_bool(tmp_path / "b.safetensors", bytes([1, 2, 0]))
    data_start = 8 + struct.unpack("<Q", path.read_bytes()[:8])[0]
    with open_file(path) as tf:
        errors = [p.describe() for p in check_file(tf).problems if p.is_error]
    assert errors == [f"tensor 'flag', component 'data', at byte {data_start} (0x{data_start:X}): bool element 1 is "
                      "0x02, not 0 or 1 [a bool element is stored as 0 or 1]"]


def test_sound_bools_still_convert(tmp_path):
    src = _safetensors_bool(tmp_path / "b.safetensors", bytes([1, 0, 1]))
    convert(src, tmp_path / "out.zt", to="zt-v2")
    with open_file(tmp_path / "out.zt") as out:
        assert check_file(out).ok and out.tensor("flag").dtype == "bool"


def test_edit_output_of_a_v2_file_with_a_wrong_digest_refuses(tmp_path):
    src = _two_tensors(tmp_path / "two.zt")
    with pytest.raises(DamagedTensor, match=rf"tensor 'b', component 'data', at byte 8192 .*\[{DIGEST_RULE}"):
        edit_file(src, [SetFileAttribute("k", "v")], tmp_path / "edited.zt")
    assert not (tmp_path / "edited.zt").exists()
    edit_file(src, [SetFileAttribute("k", "v")], tmp_path / "edited.zt", skip_damaged=True)
    with open_file(tmp_path / "edited.zt") as out:
        assert [t.name for t in out.tensors] == ["a"] and out.attributes == {"k": "v"} and check_file(out).ok


def test_edit_in_place_of_a_v2_file_keeps_the_stale_digest_where_check_finds_it(tmp_path):
    """In place, a v2 metadata edit appends a generation and leaves the blobs as they are: the damage stays
    visible, not hidden behind a fresh digest."""
    src = _two_tensors(tmp_path / "two.zt")
    edit_file(src, [SetFileAttribute("k", "v")])
    with open_file(src) as tf:
        report = check_file(tf)
    assert [(p.tensor, p.component) for p in report.problems if p.is_error] == [("b", "data")]


def _seekable_file(path: Path, corrupt: bool) -> tuple[Path, bytes]:
    """One ``zt.zstd-seekable/1`` part whose digest is right for the data; ``corrupt`` flips a byte of a frame."""
    data = np.arange(4096, dtype="<u4").tobytes()
    stream = bytearray(seekable(data, 4096))
    if corrupt:
        stream[20] ^= 0xFF
    fields = {"encoding": "zt.zstd-seekable/1", "decoded_length": len(data), "digest": _xxh3(data)}
    manifest = {"objects": {"s": {"shape": [4096], "layout": "dense",
                                  "parts": {"data": part("u32", 4096, len(stream), **fields)}}}}
    path.write_bytes(assemble(manifest, {4096: bytes(stream)}))
    return path, data


def test_edit_output_refuses_a_broken_seekable_part(tmp_path):
    src, _ = _seekable_file(tmp_path / "s.zt", corrupt=True)
    with open_file(src) as tf:  # the seek table is sound: only decoding the frame finds the damage
        assert not [p for p in tf.all_problems() if p.is_error] and not check_file(tf).ok
    with pytest.raises(DamagedTensor, match=r"tensor 's', component 'data'.*cannot be written"):
        edit_file(src, [SetFileAttribute("k", "v")], tmp_path / "edited.zt")
    assert not (tmp_path / "edited.zt").exists()


def test_a_sound_seekable_part_is_copied_unchanged(tmp_path):
    src, data = _seekable_file(tmp_path / "s.zt", corrupt=False)
    edit_file(src, [SetFileAttribute("k", "v")], tmp_path / "edited.zt")
    with open_file(src) as before, open_file(tmp_path / "edited.zt") as after:
        old, new = before.tensor("s").components["data"], after.tensor("s").components["data"]
        assert new.encoding == old.encoding and new.digest == old.digest and check_file(after).ok
        assert after.source.read(new.offset, new.length) == before.source.read(old.offset, old.length)
        assert dense_array(after, after.tensor("s")).tobytes() == data

