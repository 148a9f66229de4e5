"""The zTensor v2 writer: deterministic CBOR, the zstd-seekable encoder, blob sharing, migration from every
format ztviewer reads, and the refusals (checked against the real ztensor 2.1.2 where it matters)."""
from __future__ import annotations

import io
import math
import struct
from pathlib import Path
from typing import Any

import cbor2
import numpy as np
import pytest
import zstandard

from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays
from ztviewer.codec.convert import convert
from ztviewer.codec.edit import EditableDocument, RenameTensor, SetFileAttribute, SetTensorAttribute
from ztviewer.codec.errors import EditRefused, UnsupportedConversion
from ztviewer.codec.registry import open_file
from ztviewer.codec.save import save
from ztviewer.codec.writers import zt_v2
from ztviewer.codec.writers.cbor import dumps_deterministic
from ztviewer.codec.writers.zstd_seekable_writer import SEEKABLE_MAGIC, SKIPPABLE_MAGIC, SeekableEncoder, encode

ztensor = pytest.importorskip("ztensor")
MAGIC = b"\x89ZT2\r\n\x1a\n"


def manifest_of(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    offset, length = struct.unpack("<QQ", data[-40:-24])
    return cbor2.loads(data[offset:offset + length])


# -- deterministic CBOR (RFC 8949 §4.2.1) ------------------------------------------------------------------
def test_map_keys_sort_by_their_encoded_bytes() -> None:
    value = {"bb": 1, "a": 2, "aa": 3, "b": 4, "x" * 24: 5}
    assert dumps_deterministic(value) == cbor2.dumps(value, canonical=True)
    keys = list(cbor2.loads(dumps_deterministic(value)))
    assert keys == ["a", "b", "aa", "bb", "x" * 24]  # shorter heads first, then bytewise


def test_mixed_key_types_follow_bytewise_order_not_length_first() -> None:
    # 1000 encodes as 19 03 e8 (3 bytes) and "a" as 61 61 (2 bytes): bytewise, the integer comes first
    encoded = dumps_deterministic({"a": 0, 1000: 0, -1: 0, b"\x00": 0})
    assert encoded == bytes.fromhex("a4" "1903e8" "00" "20" "00" "4100" "00" "6161" "00")


@pytest.mark.parametrize(("value", "expected"), [
    (0.0, "f90000"), (-0.0, "f98000"), (1.5, "f93e00"), (65504.0, "f97bff"), (math.inf, "f97c00"),
    (-math.inf, "f9fc00"), (math.nan, "f97e00"), (100000.0, "fa47c35000"), (1.1, "fb3ff199999999999a"),
    (5.960464477539063e-08, "f90001"), (2**64 - 1, "1bffffffffffffffff"), (-(2**64), "3bffffffffffffffff"),
    (23, "17"), (24, "1818"), (-25, "3818"),
])
def test_shortest_heads_and_floats(value: Any, expected: str) -> None:
    assert dumps_deterministic(value).hex() == expected


def test_tags_and_duplicate_encodings_are_refused() -> None:
    with pytest.raises(EditRefused, match="tags"):
        dumps_deterministic({"a": cbor2.CBORTag(1, 0)})
    with pytest.raises(EditRefused, match="encode alike"):
        dumps_deterministic({float("nan"): 1, -float("nan"): 2})  # both encode as f9 7e00


# -- zt.zstd-seekable/1 ------------------------------------------------------------------------------------
def _frames(stream: bytes) -> tuple[list[tuple[int, int]], int]:
    assert struct.unpack("<I", stream[-4:])[0] == SEEKABLE_MAGIC
    count, descriptor = struct.unpack("<IB", stream[-9:-4])
    assert descriptor == 0
    table = 8 + count * 8 + 9
    start = len(stream) - table
    magic, size = struct.unpack("<II", stream[start:start + 8])
    assert (magic, size) == (SKIPPABLE_MAGIC, count * 8 + 9)
    entries = [struct.unpack("<II", stream[start + 8 + 8 * i:start + 16 + 8 * i]) for i in range(count)]
    return entries, start


def test_seekable_frames_are_equal_checksummed_and_indexed() -> None:
    data = np.random.default_rng(1).integers(0, 8, (5 << 20) + 12345, dtype=np.uint8).tobytes()
    stream = encode(data, level=1, frame_size=1 << 20)
    entries, end = _frames(stream)
    assert [d for _, d in entries] == [1 << 20] * 5 + [12345]
    assert sum(c for c, _ in entries) == end
    position, out = 0, bytearray()
    for compressed, decoded in entries:
        frame = stream[position:position + compressed]
        params = zstandard.get_frame_parameters(frame)
        assert params.has_checksum and params.content_size == decoded
        out += zstandard.ZstdDecompressor().decompress(frame)
        position += compressed
    assert bytes(out) == data
    # any conforming zstd decoder reads the whole stream, skipping the seek table's skippable frame
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(stream), read_across_frames=True)
    assert reader.read() == data


def test_seekable_encoder_output_does_not_depend_on_input_chunking() -> None:
    data = bytes(range(256)) * 9000
    pieces: list[bytes] = []
    encoder = SeekableEncoder(lambda piece, _work: pieces.append(piece), 3, frame_size=100_000)
    for start in range(0, len(data), 77_777):
        encoder.write(memoryview(data)[start:start + 77_777])
    encoder.close()
    assert b"".join(pieces) == encode(data, 3, frame_size=100_000)
    assert encoder.decoded_length == len(data)
    assert encode(b"") == struct.pack("<II", SKIPPABLE_MAGIC, 9) + struct.pack("<IBI", 0, 0, SEEKABLE_MAGIC)


# -- blob sharing ------------------------------------------------------------------------------------------
def test_identical_parts_share_one_blob_and_different_ones_never(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    out = tmp_path / "tied.zt"
    same = np.arange(1000, dtype=np.float32)
    save_arrays(out, {"embed": same, "head": same.copy(), "other": same + 1}, to="zt-v2")
    parts = {name: obj["parts"]["data"]["blob"] for name, obj in manifest_of(out)["objects"].items()}
    assert parts["embed"] == parts["head"] != parts["other"]
    assert out.stat().st_size == 3 * 65536 + len(b"") + 40 + _manifest_length(out)

    class Collide:  # every part hashes alike: sharing must still compare the bytes
        def __init__(self) -> None:
            pass

        def update(self, _data: object) -> None:
            pass

        def intdigest(self) -> int:
            return 7

    monkeypatch.setattr(zt_v2.xxhash, "xxh3_64", Collide)
    collided = tmp_path / "collide.zt"
    save_arrays(collided, {"a": same, "b": same + 1, "c": same.copy()}, to="zt-v2")
    blobs = {name: obj["parts"]["data"]["blob"] for name, obj in manifest_of(collided)["objects"].items()}
    assert blobs["a"] == blobs["c"] != blobs["b"]
    source = ztensor.open(str(collided))
    assert source["b"].tobytes() == (same + 1).tobytes()


def _manifest_length(path: Path) -> int:
    return struct.unpack("<Q", path.read_bytes()[-32:-24])[0]


# -- migration ---------------------------------------------------------------------------------------------
def _v1_file(path: Path) -> Path:
    csr = SparseArray("sparse_csr", (3, 4), np.array([1.0, 2.0, 3.0], np.float32),
                      indices=np.array([0, 2, 1], np.uint64), indptr=np.array([0, 2, 2, 3], np.uint64))
    coo = SparseArray("sparse_coo", (3, 4, 5), np.array([1, 2], np.int16),
                      coords=np.array([[0, 2], [1, 3], [4, 0]], np.uint64))
    save_arrays(path, {"csr": csr, "coo": coo, "flags": np.array([True, False, True]), "w": np.ones((2, 3)),
                       "bf": (np.array([0x3F80, 0xC000], np.uint16), "bfloat16"),
                       "f8": (np.array([0x38, 0x40, 0xFF], np.uint8), "float8_e4m3fn")},
                to="zt-objects", attributes={"license": "MIT"}, tensor_attributes={"w": {"note": "hi", "n": 3}},
                compress=("zstd", 3), digest="sha256")
    return path


def test_v1_file_migrates_with_every_layout_and_logical_type(tmp_path: Path) -> None:
    src, out = _v1_file(tmp_path / "in.zt"), tmp_path / "out.zt"
    convert(src, out, to="zt-v2")
    manifest = manifest_of(out)
    objects = manifest["objects"]
    assert manifest["attributes"] == {"license": "MIT"}
    assert objects["csr"]["layout"] == "zt.sparse_csr/1" and set(objects["csr"]["parts"]) == {
        "values", "indices", "indptr"}
    assert objects["coo"]["layout"] == "zt.sparse_coo/1"
    assert objects["flags"]["parts"]["data"]["type"] == "bool"
    assert (objects["bf"]["parts"]["data"]["dtype"], objects["f8"]["parts"]["data"]["type"]) == ("bf16", "f8_e4m3fn")
    assert objects["w"]["attributes"] == {"note": "hi", "n": 3}
    for obj in objects.values():  # canonical: raw, xxh3 everywhere, 64 KiB placement
        for part in obj["parts"].values():
            assert "encoding" not in part and part["digest"].startswith("xxh3:") and part["blob"][0] % 65536 == 0
    ztensor.verify(str(out), deep=True)
    source = ztensor.open(str(out))
    assert source["coo"]["coords"].tobytes() == np.array([[0, 2], [1, 3], [4, 0]], "<u8").tobytes()
    assert source["bf"].tobytes() == np.array([0x3F80, 0xC000], "<u2").tobytes()
    assert source["flags"].tobytes() == b"\x01\x00\x01"


def test_tensor_trains_are_refused_unless_densified(tmp_path: Path) -> None:
    cores = [np.ones((1, 3, 2)), np.ones((2, 4, 1))]
    src = tmp_path / "tt.zt"
    save_arrays(src, {"tt": TensorTrainArray(cores)}, to="zt")
    with pytest.raises(UnsupportedConversion, match="no tensor-train layout profile; densify it"):
        convert(src, tmp_path / "out.zt", to="zt-v2")
    convert(src, tmp_path / "dense.zt", to="zt-v2", densify=True)
    assert ztensor.open(str(tmp_path / "dense.zt"))["tt"].tobytes() == np.full((3, 4), 2.0).tobytes()


def test_unsorted_csr_rows_are_refused_for_v2(tmp_path: Path) -> None:
    csr = SparseArray("sparse_csr", (2, 4), np.array([1.0, 2.0, 3.0], np.float32),
                      indices=np.array([2, 0, 1], np.uint64), indptr=np.array([0, 2, 3], np.uint64))
    src = tmp_path / "unsorted.zt"
    save_arrays(src, {"m": csr}, to="zt")
    with pytest.raises(UnsupportedConversion, match="not strictly increasing within a row"):
        convert(src, tmp_path / "out.zt", to="zt-v2")
    dup = SparseArray("sparse_coo", (3,), np.array([1, 2], np.int8), coords=np.array([[1, 1]], np.uint64))
    save_arrays(src, {"d": dup}, to="zt")
    with pytest.raises(UnsupportedConversion, match="unique coordinates"):
        convert(src, tmp_path / "out.zt", to="zt-v2")


@pytest.mark.parametrize(("compress", "digest", "align"), [
    (("zstd", 1), None, None), (("zstd", 19), "sha256", 4096), (None, "none", 8192), (None, "sha256", None)])
def test_every_variant_is_verified_by_ztensor(tmp_path: Path, compress: Any, digest: str | None,
                                              align: int | None) -> None:
    src, out = _v1_file(tmp_path / "in.zt"), tmp_path / "out.zt"
    convert(src, out, to="zt-v2", compress=compress, digest=digest, align=align)
    ztensor.verify(str(out), deep=True)
    for obj in manifest_of(out)["objects"].values():
        for part in obj["parts"].values():
            assert part["blob"][0] % (align or 65536) == 0
            assert ("encoding" in part) == (compress is not None)
            assert ("digest" in part) == (digest != "none")
    assert ztensor.open(str(out))["w"].tobytes() == np.ones((2, 3)).tobytes()


# -- refusals ----------------------------------------------------------------------------------------------
def test_names_and_attributes_v2_cannot_hold_are_refused(tmp_path: Path) -> None:
    v1 = tmp_path / "a1.zt"
    save_arrays(v1, {"w": np.ones(2, np.float32)}, to="zt")
    doc = EditableDocument(open_file(v1), "zt-v2")
    with pytest.raises(EditRefused, match="is empty"):
        RenameTensor("w", "").apply(doc)
    with pytest.raises(EditRefused, match="U\\+0000"):
        RenameTensor("w", "a\0b").apply(doc)
    with pytest.raises(EditRefused, match="1025 bytes long"):
        RenameTensor("w", "x" * 1025).apply(doc)
    with pytest.raises(EditRefused, match="tag"):
        SetFileAttribute("t", cbor2.CBORTag(0, "2020")).apply(doc)
    deep: Any = "leaf"
    for _ in range(31):
        deep = [deep]
    with pytest.raises(EditRefused, match="deeper than 32"):
        SetTensorAttribute("w", "deep", deep).apply(doc)
    RenameTensor("w", "e\u0301").apply(doc)  # decomposed: not NFC
    with pytest.raises(EditRefused, match="Normalization Form C"):
        save(doc, tmp_path / "out.zt")
    doc.alignment = 65536  # an explicit alignment is non-canonical: NFC is only a SHOULD
    save(doc, tmp_path / "out.zt")
    assert list(ztensor.open(str(tmp_path / "out.zt")).keys()) == ["e\u0301"]
