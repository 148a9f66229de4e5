"""Hostile zTensor v2 files built by hand: each gets a clean problem naming its rule, with bounded work."""
from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest
import zstandard

from tests.codec.formats.v2_builders import MAGIC, assemble, dense, footer, part, seekable
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.decode import component_bytes, read_range
from ztviewer.codec.errors import DecodeError
from ztviewer.codec.formats.zt_v2 import rules
from ztviewer.codec.formats.zt_v2.cbor_check import CborError, decode_strict, loads_fast
from ztviewer.codec.zstd_seekable import SeekableStream

U64_MAX = (1 << 64) - 1
SEEKABLE = "zt.zstd-seekable/1"


def write(tmp_path: Path, image: bytes, name: str = "model.zt") -> Path:
    path = tmp_path / name
    path.write_bytes(image)
    return path


def errors(tf) -> list:
    return [p for p in tf.all_problems() if p.is_error]


def check_errors(tf) -> list:
    return [p for p in check_file(tf).problems if p.is_error]


def compressed_object(stream: bytes, decoded: int, shape: list[int], dtype: str = "u8") -> dict:
    return {"objects": {"t": dense(dtype, shape, 4096, len(stream), encoding=SEEKABLE, decoded_length=decoded)}}


def test_truncated_seek_table_is_an_encoding_error(tmp_path):
    data = np.arange(4000, dtype=np.uint8).tobytes()
    stream = seekable(data, 1000)[:-5]
    tf = open_file(write(tmp_path, assemble(compressed_object(stream, 4000, [4000]), {4096: stream})))
    assert not errors(tf)
    found = check_errors(tf)
    assert len(found) == 1 and found[0].rule.startswith("encoding") and "seekable footer" in found[0].message


@pytest.mark.parametrize("cut", [8, 17, 30])
def test_seek_table_cut_anywhere_never_reads_outside_the_part(tmp_path, cut):
    stream = seekable(bytes(3000), 1000)
    broken = stream[:len(stream) - cut] + stream[-9:]  # footer kept, entries lost
    tf = open_file(write(tmp_path, assemble(compressed_object(broken, 3000, [3000]), {4096: broken})))
    found = check_errors(tf)
    assert len(found) == 1 and found[0].rule.startswith("encoding")


def test_frame_bomb_stops_at_the_declared_size(tmp_path):
    bomb = zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compress(bytes(64 << 20))
    table = struct.pack("<II", len(bomb), 100) + struct.pack("<IBI", 1, 0, 0x8F92EAB1)
    stream = bomb + struct.pack("<II", 0x184D2A5E, len(table)) + table
    tf = open_file(write(tmp_path, assemble(compressed_object(stream, 100, [100]), {4096: stream})))
    found = check_errors(tf)
    assert len(found) == 1 and "more than the 100" in found[0].message
    with pytest.raises(DecodeError):
        component_bytes(tf, tf.tensors[0], tf.tensors[0].components["data"])


def test_a_frame_declaring_more_than_16_mib_is_refused_before_decoding(tmp_path):
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(b"x")
    table = struct.pack("<II", len(frame), 17 << 20) + struct.pack("<IBI", 1, 0, 0x8F92EAB1)
    stream = frame + struct.pack("<II", 0x184D2A5E, len(table)) + table
    with pytest.raises(DecodeError, match="above 16 MiB"):
        SeekableStream(stream, 17 << 20)


def test_frames_without_checksum_and_unequal_frames_are_refused():
    with pytest.raises(DecodeError, match="checksum"):
        SeekableStream(seekable(bytes(100), 50, checksum=False), 100).decode_frame(0)
    one, two = seekable(bytes(10), 10), seekable(bytes(30), 30)
    frames = one[:-(8 + 8 + 9)] + two[:-(8 + 8 + 9)] + one[:-(8 + 8 + 9)]
    table = struct.pack("<IIIIII", len(one) - 25, 10, len(two) - 25, 30, len(one) - 25, 10)
    table += struct.pack("<IBI", 3, 0, 0x8F92EAB1)
    # frames of 10, 30, 10 bytes: only the last frame may differ from the others
    stream = frames + struct.pack("<II", 0x184D2A5E, len(table)) + table
    with pytest.raises(DecodeError, match="equal"):
        SeekableStream(stream, 50)


def test_random_access_decodes_only_the_frames_it_needs(tmp_path, monkeypatch):
    data = np.arange(10_000, dtype=np.uint32).tobytes()  # 40,000 bytes in 10 frames of 4,000
    stream = seekable(data, 4000)
    image = assemble(compressed_object(stream, len(data), [10_000], "u32"), {4096: stream})
    tf = open_file(write(tmp_path, image))
    assert not errors(tf)
    decoded: list[int] = []
    original = SeekableStream.decode_frame

    def counting(self: SeekableStream, index: int) -> bytes:
        decoded.append(index)
        return original(self, index)

    monkeypatch.setattr(SeekableStream, "decode_frame", counting)
    tensor = tf.tensors[0]
    window = read_range(tf, tensor, tensor.components["data"], 13_000, 4_000)
    assert window == data[13_000:17_000]
    assert decoded == [3, 4]
    decoded.clear()
    assert read_range(tf, tensor, tensor.components["data"], 39_990, 100) == data[39_990:]
    assert decoded == [9]
    decoded.clear()
    assert bytes(component_bytes(tf, tensor, tensor.components["data"])) == data
    assert decoded == list(range(10))


def test_self_and_cyclic_shard_references_are_bounded(tmp_path):
    body = {"objects": {"t": dense("u8", [8], 4096, 8, shard="self")},
            "shards": {"self": {"size": 0, "digest": "xxh3:0000000000000000"}}}
    image = assemble(body)
    body["shards"]["self"]["size"] = len(image)  # the size now matches the root itself
    image = assemble(body)
    root = write(tmp_path, image)
    os.symlink(root, tmp_path / "model-self.zt")
    tf = open_file(root)
    assert {p.rule for p in errors(tf)} == {rules.SHARD_IDENTITY, rules.SHARD_MISSING}
    assert "root file itself" in str(errors(tf)[0])
    # two roots, each the other's shard: opened as blob heaps, never followed
    a_body = {"objects": {"a": dense("u8", [8], 4096, 8, shard="b")},
              "shards": {"b": {"size": 0, "digest": "xxh3:0000000000000000"}}}
    b_body = {"objects": {"b": dense("u8", [8], 4096, 8, shard="a")},
              "shards": {"a": {"size": 0, "digest": "xxh3:0000000000000000"}}}
    for _ in range(3):  # the sizes are written in each other's manifests: iterate to the fixed point
        sizes = (len(assemble(a_body, {4096: bytes(8)})), len(assemble(b_body, {4096: bytes(8)})))
        a_body["shards"]["b"]["size"], b_body["shards"]["a"]["size"] = sizes[1], sizes[0]
    a = write(tmp_path, assemble(a_body, {4096: bytes(8)}), "a.zt")
    write(tmp_path, assemble(b_body, {4096: bytes(8)}), "a-b.zt")
    write(tmp_path, assemble(b_body, {4096: bytes(8)}), "b.zt")
    tf = open_file(a)
    assert not errors(tf)
    assert bytes(component_bytes(tf, tf.tensors[0], tf.tensors[0].components["data"])) == bytes(8)
    found = check_errors(tf)  # the recorded digest is not the shard's: identity fails, nothing loops
    assert [p.rule for p in found] == [rules.SHARD_IDENTITY]


def test_shard_names_never_leave_the_folder(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    folder = tmp_path / "models"
    folder.mkdir()
    target = outside / "secret.zt"
    target.write_bytes(assemble({"objects": {}}))
    os.symlink(target, folder / "model-s.zt")
    body = {"objects": {"t": dense("u8", [8], 4096, 8, shard="s")},
            "shards": {"s": {"size": target.stat().st_size, "digest": "xxh3:0000000000000000"}}}
    tf = open_file(write(folder, assemble(body)))
    assert rules.SHARD_OUTSIDE in {p.rule for p in errors(tf)}
    with pytest.raises(DecodeError, match="not available"):
        component_bytes(tf, tf.tensors[0], tf.tensors[0].components["data"])


def test_footer_pointing_into_a_blob(tmp_path):
    manifest = {"objects": {"t": dense("u8", [8192], 4096, 8192)}}
    image = bytearray(assemble(manifest, {4096: bytes(8192)}))
    raw = image[-40 - len(image[12288:-40]):-40]
    # move the manifest into the middle of the blob and point the footer at it
    image[8192:8192 + len(raw)] = raw
    image[-40:] = footer(8192, bytes(raw))
    tf = open_file(write(tmp_path, bytes(image)))
    assert {p.rule for p in errors(tf)} == {rules.BLOB_OVERLAP}


@pytest.mark.parametrize("fields, rule", [
    ((4096, U64_MAX), rules.BLOB_BOUNDS),
    (((1 << 64) - 4096, 8), rules.BLOB_BOUNDS),
    ((U64_MAX, 1), rules.BLOB_ALIGNMENT),
    ((1 << 63, 1 << 63), rules.BLOB_BOUNDS),
])
def test_2_to_the_64_lengths_are_bounds_errors(tmp_path, fields, rule):
    offset, length = fields
    manifest = {"objects": {"t": {"shape": [length], "layout": "dense", "parts": {"data": part("u8", offset, length)}}}}
    tf = open_file(write(tmp_path, assemble(manifest)))
    assert {p.rule for p in errors(tf)} == {rule}


def test_huge_decoded_length_is_refused_without_allocating(tmp_path):
    stream = seekable(bytes(16), 16)
    manifest = compressed_object(stream, U64_MAX, [U64_MAX])
    tf = open_file(write(tmp_path, assemble(manifest, {4096: stream})))
    assert not errors(tf)
    found = check_errors(tf)
    assert len(found) == 1 and "decode limit" in found[0].message


@pytest.mark.parametrize("footer_fields, rule", [
    ((4096, U64_MAX), rules.MANIFEST_TOO_LARGE),
    ((U64_MAX - 4095, 10), rules.MANIFEST_BOUNDS),
    ((4096, 1 << 30), rules.MANIFEST_BOUNDS),
])
def test_footer_lengths_near_2_to_the_64(tmp_path, footer_fields, rule):
    offset, length = footer_fields
    image = MAGIC + bytes(4096) + struct.pack("<QQQII", offset, length, 0, 2, 0) + MAGIC
    tf = open_file(write(tmp_path, image))
    assert not tf.readable and tf.problems[0].rule == rule


@pytest.mark.parametrize("raw, rule", [
    (b"\x9b" + b"\xff" * 8, rules.CBOR_SYNTAX),            # an array of 2^64 - 1 items in 9 bytes
    (b"\xbb\x7f" + b"\xff" * 7, rules.CBOR_SYNTAX),        # a map of 2^63 pairs
    (b"\x5b" + b"\xff" * 8, rules.CBOR_SYNTAX),            # a byte string of 2^64 - 1 bytes
    (b"\x81" * 100_000 + b"\x00", rules.CBOR_DEPTH),       # deep nesting: no recursion
    (b"\xa1\x61a\xf9\x7e\x01", rules.CBOR_DETERMINISM),    # NaN with a payload
    (b"\xa1\x61a\xfa\x3f\xc0\x00\x00", rules.CBOR_DETERMINISM),  # 1.5 in 4 bytes
    (b"\xa1\x61a\xfb\x3f\xf8\x00\x00\x00\x00\x00\x00", rules.CBOR_DETERMINISM),  # 1.5 in 8 bytes
    (b"\xa1\x61a\xf7", rules.CBOR_SYNTAX),                  # undefined
    (b"\xa1\x61a\xc2\x41\x05", rules.CBOR_SYNTAX),          # a bignum tag
    (b"\xa1\x62\xff\xfe\x00", rules.CBOR_SYNTAX),           # invalid UTF-8
    (b"\xa2\x01\x00\x61a\x00", rules.SCHEMA),               # sorted bytewise (int before text): CBOR is fine
])
def test_hostile_cbor_is_refused_with_its_rule(tmp_path, raw, rule):
    tf = open_file(write(tmp_path, assemble(raw)))
    assert not tf.readable and tf.problems[0].rule == rule, tf.problems


def test_fast_path_agrees_with_the_strict_decoder_on_what_it_accepts():
    # cbor2 sorts map keys by length first; a map ordered that way with mixed key types is not deterministic
    length_first = b"\xa2\x61a\x00\x1b\x00\x00\x00\x17\x48\x76\xe8\x00\x00"
    with pytest.raises(CborError) as caught:
        decode_strict(length_first)
    assert caught.value.rule == rules.CBOR_DETERMINISM
    value = loads_fast(length_first)
    assert value is not None  # cbor2 re-encodes it identically: the schema's key-order check must catch it
    from ztviewer.codec.formats.zt_v2.reader import parse_manifest

    root = b"\xa3\x61a\x00\x67objects\xa0\x1b\x00\x00\x00\x17\x48\x76\xe8\x00\x00"  # same, at the root
    assert loads_fast(root) is not None
    with pytest.raises(CborError) as caught:
        parse_manifest(root, 0)
    assert caught.value.rule == rules.CBOR_DETERMINISM


@pytest.mark.parametrize("raw", [
    b"\xa1\x61a" + b"\xd8\x1c\x82\x61x\xd8\x1d\x00",                        # a shared reference (tags 28/29)
    b"\xa1\x61a" + b"\xd9\x01\x00\x83\x64long\xd8\x19\x00\xd8\x19\x00",     # string references (tags 256/25)
    b"\xa1\x61a\xc2\x41\x05",                                              # a bignum
    b"\xa1\x61a" + b"\x81" * 40 + b"\x00",                                  # deeper than the limit
])
def test_the_fast_path_refuses_tags_and_depth_before_re_encoding(monkeypatch, raw):
    """Issue 31: a value-sharing DAG of 1 KB was re-encoded as a tree of 2^59 leaves before tags were refused."""
    import cbor2

    encoded: list[object] = []
    monkeypatch.setattr(cbor2, "dumps", lambda value, *args, **kwargs: encoded.append(value) or b"")
    assert loads_fast(raw) is None
    assert not encoded
    with pytest.raises(CborError):
        decode_strict(raw)


def test_a_seek_table_of_millions_is_checked_as_arrays():
    """Issue 31: 2 million entries were 2 million frame objects before the table was found wrong."""
    import tracemalloc

    from tests.hostile_v2_files import seek_table_of

    count = 2_000_000
    stream = seek_table_of(count)
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match=f"the frames cover {count:,} bytes"):
            SeekableStream(stream, count)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * len(stream)  # a generous guard: the frame objects alone took 10 times the table
    with pytest.raises(DecodeError, match="more than decoded_length 10 can fill"):
        SeekableStream(stream, 10)  # refused from the footer alone


def test_frames_of_a_valid_table_are_those_it_lists():
    data = np.arange(10_500, dtype=np.uint8).tobytes()
    stream = SeekableStream(seekable(data, 1000), len(data))
    frames = stream.frames
    assert len(frames) == 11 and stream.frame_size == 1000
    assert [f.decoded_offset for f in frames] == list(range(0, 10_001, 1000))
    assert frames[-1] == frames[10] and frames[-1].decoded_length == 500
    ends = [f.stored_offset + f.stored_length for f in frames]
    assert [f.stored_offset for f in frames[1:]] == ends[:-1] and frames[0].stored_offset == 0
    assert frames[2:4] == [frames[2], frames[3]]
    with pytest.raises(IndexError):
        frames[11]
    assert b"".join(stream.iter_frames()) == data


def test_a_forged_footer_claiming_a_large_manifest_costs_the_budget_not_memory(tmp_path):
    """Issue 31: a footer forged in padding claiming a 64 MiB manifest had it read whole (hashed in one piece)."""
    import tracemalloc

    from tests.hostile_v2_files import forged_footer_in_padding
    from ztviewer.codec.formats.zt_v2.generations import search_generations

    path = tmp_path / "forged.zt"
    forged_footer_in_padding(path, 64 << 20)
    tracemalloc.start()
    try:
        tf = open_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    with tf:
        assert not errors(tf) and tf.extra["_generations"] == [] and "generations_search" in tf.extra
        assert peak < 32 << 20
        assert search_generations(tf, budget=None).generations == []  # exhaustive: hashed in chunks, unmatched


def test_check_finds_the_generations_opening_did_not_or_says_padding_may_be_theirs(tmp_path, monkeypatch):
    """Issue 31: past the 4 MiB search budget, older generations' manifests and footers were warned of as padding."""
    from tests.hostile_v2_files import generations_file
    from ztviewer.codec.formats.zt_v2 import deep

    path = tmp_path / "many.zt"
    generations_file(path, 2000)
    with open_file(path) as tf:
        assert tf.extra["_generations_stopped"] and len(tf.extra["_generations"]) < 1999
        assert not check_file(tf).problems  # check searched on: all 1,999 found
        monkeypatch.setattr(deep, "CHECK_SEARCH_FILES", 0)
        found = check_file(tf).problems
        assert [p.rule for p in found] == [rules.PADDING] and "they may be one's manifest or footer" in found[0].message
