"""Files with hostile *values* in well-formed containers, built byte by byte (struct.pack, hand-written CBOR,
JSON text), never through ztviewer's writers: integers past Python's 4,300-digit limit, CBOR value sharing
(tags 28/29: self-containing values, "billion laughs"), deep legal nesting, names with terminal escapes,
lone surrogates and NUL, and decode work bounded only by the output size.

Each builder returns the file bytes; :data:`CASES` names them all for the tests that run every command over
every case (``tests/test_hostile_values.py``) and for the fuzz tests.
"""
from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

import cbor2
import numpy as np
import zstandard

V01, V1 = b"ZTEN0001", b"ZTEN1000"
BIG = 10 ** 5000  # 5,001 digits: past sys.get_int_max_str_digits() (4,300)
HUGE_DIGITS = "9" * 5000


# ------------------------------------------------------------------------------------------ hand-written CBOR

def head(major: int, argument: int) -> bytes:
    """A CBOR item head: major type and argument (shortest form)."""
    if argument < 24:
        return bytes([major << 5 | argument])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if argument < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, argument)
    raise ValueError(argument)


def cbor_text(text: str) -> bytes:
    """A CBOR text string of any code points, lone surrogates included (``surrogatepass``)."""
    data = text.encode("utf-8", "surrogatepass")
    return head(3, len(data)) + data


def bignum(value: int) -> bytes:
    """Tag 2 (positive bignum) or 3 (negative), whatever the size."""
    tag, magnitude = (2, value) if value >= 0 else (3, -1 - value)
    data = magnitude.to_bytes(max(1, (magnitude.bit_length() + 7) // 8), "big")
    return head(6, tag) + head(2, len(data)) + data


def cbor_map(pairs: list[tuple[bytes, bytes]]) -> bytes:
    return head(5, len(pairs)) + b"".join(k + v for k, v in pairs)


def cbor_array(items: list[bytes]) -> bytes:
    return head(4, len(items)) + b"".join(items)


def enc(value: Any) -> bytes:
    return value if isinstance(value, bytes) else cbor2.dumps(value)


def shareable(item: bytes) -> bytes:
    return head(6, 28) + item


def shared_ref(index: int) -> bytes:
    return head(6, 29) + head(0, index)


def laughs(levels: int) -> bytes:
    """Billion laughs: level k is a shareable array holding level k-1 twice; 2^levels leaves in all."""
    item = shareable(cbor_array([enc("lol"), enc("lol")]))
    for k in range(1, levels):
        item = shareable(cbor_array([shared_ref(k - 1), shared_ref(k - 1)]))
    return item


def self_containing() -> bytes:
    """A shareable array whose only member refers to the array itself."""
    return shareable(cbor_array([shared_ref(0)]))


# ------------------------------------------------------------------------------------------ containers

def zt_file(magic: bytes, manifest: bytes, blobs: bytes = b"", *, objects: bool = False) -> bytes:
    """magic, blob bytes (placed at byte 64), the manifest bytes, the u64 size footer (+ trailing magic)."""
    body = magic + (bytes(64 - len(magic)) + blobs if blobs else b"")
    return body + manifest + struct.pack("<Q", len(manifest)) + (V1 if objects else b"")


def v10(tensors: bytes, *, attributes: bytes | None = None, version: bytes | None = None) -> bytes:
    pairs = [(enc("version"), version if version is not None else enc("1.0")), (enc("generator"), enc("test"))]
    if attributes is not None:
        pairs.append((enc("attributes"), attributes))
    pairs.append((enc("tensors"), tensors))
    return cbor_map(pairs)


def v10_dense(dtype: str = "float32", shape: bytes | None = None, offset: bytes | None = None,
              length: bytes | None = None, **component: bytes) -> bytes:
    comp = [(enc("offset"), offset if offset is not None else enc(64)),
            (enc("length"), length if length is not None else enc(16))]
    comp += [(enc(k), v) for k, v in component.items()]
    return cbor_map([(enc("dtype"), enc(dtype)), (enc("shape"), shape if shape is not None else enc([4])),
                     (enc("format"), enc("dense")), (enc("components"), cbor_map([(enc("data"), cbor_map(comp))]))])


def v01_entry(name: bytes, *, offset: bytes | None = None, size: bytes | None = None,
              shape: bytes | None = None, more: list[tuple[bytes, bytes]] = ()) -> bytes:
    pairs = [(enc("name"), name), (enc("offset"), offset if offset is not None else enc(64)),
             (enc("size"), size if size is not None else enc(16)), (enc("dtype"), enc("float32")),
             (enc("layout"), enc("dense")), (enc("shape"), shape if shape is not None else enc([4])),
             (enc("encoding"), enc("raw")), *more]
    return cbor_map(pairs)


FOUR_FLOATS = np.arange(4, dtype="<f4").tobytes()


def v10_file(tensors: bytes, **kw: bytes) -> bytes:
    return zt_file(V1, v10(tensors, **kw), FOUR_FLOATS)


def v01_file(entries: list[bytes], blobs: bytes = FOUR_FLOATS) -> bytes:
    return zt_file(V01, cbor_array(entries), blobs)


def safetensors_file(header_text: str, buffer: bytes = FOUR_FLOATS) -> bytes:
    raw = header_text.encode("utf-8", "surrogatepass")
    return struct.pack("<Q", len(raw)) + raw + buffer


def st_entry(shape: str = "[4]", offsets: str = "[0, 16]", dtype: str = '"F32"') -> str:
    return f'{{"dtype": {dtype}, "shape": {shape}, "data_offsets": {offsets}}}'


def blz_file(shape: list[int], ranks: list[int], cores: bytes, ndim: int | None = None, tag: int = 0) -> bytes:
    ndim = len(shape) if ndim is None else ndim
    return (b"BLZ1" + bytes([1, tag, ndim]) + bytes(8) + struct.pack(f"<{len(shape)}Q", *shape)
            + struct.pack(f"<{len(ranks)}Q", *ranks) + cores)


# ------------------------------------------------------------------------------------------ the cases

def _bignum_cases() -> dict[str, Callable[[], bytes]]:
    one = enc("t")
    return {
        "zt10_bignum_offset": lambda: v10_file(cbor_map([(one, v10_dense(offset=bignum(BIG)))])),
        "zt10_bignum_length": lambda: v10_file(cbor_map([(one, v10_dense(length=bignum(BIG)))])),
        "zt10_bignum_negative_length": lambda: v10_file(cbor_map([(one, v10_dense(length=bignum(-BIG)))])),
        "zt10_bignum_shape": lambda: v10_file(cbor_map([(one, v10_dense(shape=cbor_array([bignum(BIG)])))])),
        "zt10_bignum_uncompressed": lambda: zt_file(V1, cbor_map([
            (enc("version"), enc("1.1")), (enc("objects"), cbor_map([(one, cbor_map([
                (enc("shape"), enc([4])), (enc("format"), enc("dense")),
                (enc("components"), cbor_map([(enc("data"), cbor_map([
                    (enc("offset"), enc(64)), (enc("length"), enc(16)), (enc("dtype"), enc("f32")),
                    (enc("uncompressed_length"), bignum(BIG))]))]))]))]))]), FOUR_FLOATS, objects=True),
        "zt10_bignum_version": lambda: v10_file(cbor_map([(one, v10_dense())]), version=bignum(BIG)),
        "zt10_bignum_attribute": lambda: v10_file(cbor_map([(one, v10_dense())]),
                                                  attributes=cbor_map([(enc("big"), bignum(BIG))])),
        "zt10_bignum_map_key": lambda: v10_file(cbor_map([(one, v10_dense())]),
                                                attributes=cbor_map([(bignum(BIG), enc("value"))])),
        "zt10_bignum_tensor_key": lambda: v10_file(cbor_map([(bignum(BIG), v10_dense())])),
        "zt10_bignum_tt_ranks": lambda: v10_file(cbor_map([(one, cbor_map([
            (enc("dtype"), enc("float32")), (enc("shape"), enc([2, 2])), (enc("format"), enc("tensor_train")),
            (enc("attributes"), cbor_map([(enc("ranks"), cbor_array([enc(1), bignum(BIG), enc(1)]))])),
            (enc("components"), cbor_map([]))]))])),
        "zt01_bignum_offset": lambda: v01_file([v01_entry(enc("a"), offset=bignum(BIG))]),
        "zt01_bignum_size": lambda: v01_file([v01_entry(enc("a"), size=bignum(BIG))]),
        "zt01_bignum_shape": lambda: v01_file([v01_entry(enc("a"), shape=cbor_array([bignum(-BIG)]))]),
        "zt01_bignum_name": lambda: v01_file([v01_entry(bignum(BIG))]),
        "zt01_bignum_custom_key": lambda: v01_file([v01_entry(enc("a"), more=[(enc("extra"), bignum(BIG)),
                                                                               (bignum(BIG), enc(1))])]),
        "st_long_number_offsets": lambda: safetensors_file(f'{{"t": {st_entry(offsets=f"[0, {HUGE_DIGITS}]")}}}'),
        "st_long_number_shape": lambda: safetensors_file(f'{{"t": {st_entry(shape=f"[{HUGE_DIGITS}]")}}}'),
        "st_long_number_metadata": lambda: safetensors_file(
            f'{{"__metadata__": {{"k": {HUGE_DIGITS}}}, "t": {st_entry()}}}'),
    }


def _sharing_cases() -> dict[str, Callable[[], bytes]]:
    one = enc("t")
    return {
        "zt10_shared_self_attribute": lambda: v10_file(cbor_map([(one, v10_dense())]),
                                                       attributes=cbor_map([(enc("me"), self_containing())])),
        "zt10_shared_laughs_attribute": lambda: v10_file(cbor_map([(one, v10_dense())]),
                                                         attributes=cbor_map([(enc("lol"), laughs(59))])),
        "zt10_shared_root": lambda: zt_file(V1, shareable(v10(cbor_map([(one, v10_dense())]))), FOUR_FLOATS),
        "zt01_shared_laughs_entry": lambda: v01_file([v01_entry(enc("a"), more=[(enc("lol"), laughs(59))])]),
        "zt01_shared_self_shape": lambda: v01_file([v01_entry(enc("a"), shape=self_containing())]),
    }


def _nesting_cases() -> dict[str, Callable[[], bytes]]:
    deep = "[" * 500 + "]" * 500
    return {
        "st_metadata_deep_arrays": lambda: safetensors_file(f'{{"__metadata__": {{"k": {deep}}}, "t": {st_entry()}}}'),
        "st_entry_deep_arrays": lambda: safetensors_file(f'{{"t": {st_entry(shape=deep)}}}'),
        "st_deep_2000": lambda: safetensors_file(f'{{"__metadata__": {{"k": {"[" * 2000 + "]" * 2000}}}}}', b""),
        "zt10_cbor_nested_60": lambda: v10_file(cbor_map([(one_name(), v10_dense())]),
                                                attributes=cbor_map([(enc("d"), b"\x81" * 58 + enc(1))])),
    }


def one_name() -> bytes:
    return enc("t")


ESCAPE_NAME = "\x1b]0;pwned\x07\x1b[2Jname\x9b31m"


def _name_cases() -> dict[str, Callable[[], bytes]]:
    return {
        "zt10_name_escapes": lambda: v10_file(cbor_map([(cbor_text(ESCAPE_NAME), v10_dense())]),
                                              attributes=cbor_map([(cbor_text("k\x1b[2J"), cbor_text("v\x1b[31m"))])),
        "zt10_name_surrogate": lambda: v10_file(cbor_map([(cbor_text("a\ud800b"), v10_dense())]),
                                                attributes=cbor_map([(cbor_text("\udfff"), cbor_text("\ud800"))])),
        "zt10_generator_escapes": lambda: zt_file(V1, cbor_map([
            (enc("version"), enc("1.0")), (enc("generator"), cbor_text("gen\x1b]0;t\x07\x1b[2J")),
            (enc("tensors"), cbor_map([(enc("t"), v10_dense())]))]), FOUR_FLOATS),
        "zt10_name_nul": lambda: v10_file(cbor_map([(cbor_text("a\x00b"), v10_dense())])),
        "zt01_name_escapes": lambda: v01_file([v01_entry(cbor_text(ESCAPE_NAME))]),
        "zt01_name_surrogate": lambda: v01_file([v01_entry(cbor_text("\ud800"))]),
        "st_name_escapes": lambda: safetensors_file(
            json.dumps({ESCAPE_NAME: {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                        "__metadata__": {"\x1b[2J": "\x1b]0;x\x07"}})),
        "st_name_surrogate": lambda: safetensors_file('{"a\\ud800": ' + st_entry() + '}'),
        "st_name_raw_c1": lambda: safetensors_file('{"a\u009b2J\u202e": ' + st_entry() + '}'),
    }


def _work_cases() -> dict[str, Callable[[], bytes]]:
    return {
        "blz_ndim_255": lambda: blz_file([1] * 255, [1] * 256, bytes(8 * 255)),
        "blz_ndim_65": lambda: blz_file([1] * 65, [1] * 66, bytes(8 * 65)),
        "blz_trailing_bytes": lambda: blz_file([2, 2], [1, 1, 1], np.ones(4, "<f8").tobytes() + b"junk"),
        "blz_tt_wide_middle": lambda: tt_wide_middle(),
        "zt10_coo_scalar": lambda: coo_scalar(),
        "zt10_tt_zstd_core": lambda: tt_zstd_core(),
        "zt10_sparse_zstd_unsized": lambda: sparse_zstd_unsized(),
        "zt01_aliased_blob": lambda: v01_file([v01_entry(enc("a")), v01_entry(enc("b"))]),
    }


def tt_wide_middle(rank: int = 200_000) -> bytes:
    """A BLZ train of shape (1000, 1, 10) with ranks (1, 1, ``rank``, 1), all zeros: the dense result has
    10,000 elements but contracting left to right builds a 1000 × ``rank`` intermediate (1.6 GB as f64)."""
    shape, ranks = [1000, 1, 10], [1, 1, rank, 1]
    cores = b"".join(bytes(8 * ranks[i] * shape[i] * ranks[i + 1]) for i in range(3))
    return blz_file(shape, ranks, cores)


def coo_scalar() -> bytes:
    comps = cbor_map([(enc("values"), cbor_map([(enc("offset"), enc(64)), (enc("length"), enc(4))])),
                      (enc("coords"), cbor_map([(enc("offset"), enc(128)), (enc("length"), enc(0))]))])
    tensor = cbor_map([(enc("dtype"), enc("float32")), (enc("shape"), enc([])), (enc("format"), enc("sparse_coo")),
                       (enc("components"), comps)])
    blobs = struct.pack("<f", 2.5) + bytes(60)
    return zt_file(V1, v10(cbor_map([(enc("s"), tensor)])), blobs)


def tt_zstd_core() -> bytes:
    """A v1.0 tensor train (shape (2, 3), ranks 1-1-1) whose cores are zstd: [1, 2] ⊗ [1, 1, 1] = 2 rows."""
    cores = [zstandard.ZstdCompressor().compress(np.arange(1, 3, dtype="<f4").tobytes()),
             zstandard.ZstdCompressor().compress(np.ones(3, "<f4").tobytes())]
    comps = cbor_map([(enc(f"core_{k}"), cbor_map([(enc("offset"), enc(64 + 64 * k)), (enc("length"), enc(len(core))),
                                                   (enc("encoding"), enc("zstd"))])) for k, core in enumerate(cores)])
    tensor = cbor_map([(enc("dtype"), enc("float32")), (enc("shape"), enc([2, 3])),
                       (enc("format"), enc("tensor_train")),
                       (enc("attributes"), cbor_map([(enc("ranks"), enc([1, 1, 1]))])), (enc("components"), comps)])
    blobs = cores[0] + bytes(64 - len(cores[0])) + cores[1]
    return zt_file(V1, v10(cbor_map([(enc("tt"), tensor)])), blobs)


def sparse_zstd_unsized(nnz: int = 1000) -> bytes:
    """A v1.0 COO tensor whose values are zstd without any recorded decoded size."""
    values = zstandard.ZstdCompressor().compress(np.ones(nnz, "<f4").tobytes())
    coords = np.arange(nnz, dtype="<u8").tobytes()
    comps = cbor_map([(enc("values"), cbor_map([(enc("offset"), enc(64)), (enc("length"), enc(len(values))),
                                                (enc("encoding"), enc("zstd"))])),
                      (enc("coords"), cbor_map([(enc("offset"), enc(64 + _pad(len(values)))),
                                                (enc("length"), enc(len(coords)))]))])
    tensor = cbor_map([(enc("dtype"), enc("float32")), (enc("shape"), enc([nnz])), (enc("format"), enc("sparse_coo")),
                       (enc("components"), comps)])
    blobs = values + bytes(_pad(len(values)) - len(values)) + coords
    return zt_file(V1, v10(cbor_map([(enc("s"), tensor)])), blobs)


def _pad(n: int) -> int:
    return -(-n // 64) * 64


CASES: dict[str, Callable[[], bytes]] = {**_bignum_cases(), **_sharing_cases(), **_nesting_cases(),
                                         **_name_cases(), **_work_cases()}


def suffix(name: str) -> str:
    return ".safetensors" if name.startswith("st_") else ".blz" if name.startswith("blz_") else ".zt"
