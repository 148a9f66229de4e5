"""Hypothesis strategies: random VALID tensor files of every format, built byte by byte with struct / cbor2 /
json (never through ztviewer's writers), and random corruptions of them.

Each file strategy draws a :class:`Built`: the file bytes, the tensors they must decode to (with the SHA-256
of each tensor's canonical bytes: row-major, little-endian, bool as 0/1, a sparse tensor as its dense
equivalent), and enough structure to corrupt the file cleverly (where its length fields are, and a way to
re-encode a mutated manifest).
"""
from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cbor2
import crc32c
import numpy as np
import zstandard
from hypothesis import strategies as st

ALIGN = 64
U64_MAX = (1 << 64) - 1

#: canonical dtype → numpy storage dtype of its little-endian bits
STORAGE = {
    "float64": "<f8", "float32": "<f4", "float16": "<f2", "bfloat16": "<u2",
    "int64": "<i8", "int32": "<i4", "int16": "<i2", "int8": "i1",
    "uint64": "<u8", "uint32": "<u4", "uint16": "<u2", "uint8": "u1", "bool": "u1",
    "float8_e4m3fn": "u1", "float8_e5m2": "u1", "complex64": "<c8", "complex128": "<c16",
}
ZT_LONG = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint64", "uint32", "uint16", "uint8", "bool"]
ZT_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
            "int32": "i32", "int16": "i16", "int8": "i8", "uint64": "u64", "uint32": "u32", "uint16": "u16",
            "uint8": "u8", "bool": "bool"}
#: v1.x objects logical types: canonical dtype → (type, storage short dtype)
ZT_LOGICAL = {"complex64": ("complex64", "f32"), "complex128": ("complex128", "f64"),
              "float8_e4m3fn": ("f8_e4m3fn", "u8"), "float8_e5m2": ("f8_e5m2", "u8")}
ST_NAMES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
            "int32": "I32", "int16": "I16", "int8": "I8", "uint64": "U64", "uint32": "U32", "uint16": "U16",
            "uint8": "U8", "bool": "BOOL", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2",
            "complex64": "C64"}


# --------------------------------------------------------------------------------------------- tensors


@dataclass
class TensorData:
    """One logical tensor as generated: its dense equivalent in canonical storage bits, and how to store it."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    dense: np.ndarray                 # storage dtype, canonical bits (bool 0/1), C order
    layout: str = "dense"             # "dense" | "sparse_csr" | "sparse_coo"
    mask: np.ndarray | None = None    # where a sparse tensor has stored entries
    encoding: str = "raw"             # "raw" | "zstd"
    digest: str | None = None         # None | "crc32c" | "sha256"
    big_endian: bool = False          # v0.1 data_endianness "big"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.dense.tobytes()).hexdigest()

    # sparse parts -------------------------------------------------------------------------------
    def values(self) -> np.ndarray:
        return self.dense[self.mask]

    def csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, indices) as u64, values in storage bits."""
        rows = self.mask.sum(axis=1).astype(np.uint64)
        indptr = np.concatenate([[0], np.cumsum(rows)]).astype("<u8")
        indices = np.nonzero(self.mask)[1].astype("<u8")
        return indptr, indices, self.values()

    def coo(self) -> tuple[np.ndarray, np.ndarray]:
        """coords (ndim × nnz, u64, row-major order of the non-zeros) and values."""
        coords = np.array(np.nonzero(self.mask), dtype="<u8").reshape(len(self.shape), -1)
        return coords, self.values()


@st.composite
def shapes(draw, min_dims: int = 0, max_dims: int = 3, max_side: int = 5) -> tuple[int, ...]:
    ndim = draw(st.integers(min_dims, max_dims))
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=ndim, max_size=ndim)))
    if draw(st.integers(0, 9)) == 0 and ndim:  # now and then one long axis, so zstd has work to do
        shape = shape[:-1] + (draw(st.integers(20, 400)),)
    return shape


def random_bits(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    storage = np.dtype(STORAGE[dtype])
    if dtype == "bool":
        return rng.integers(0, 2, size=shape, dtype=np.uint8)
    n = math.prod(shape) * storage.itemsize
    return np.frombuffer(rng.bytes(n), dtype=storage).reshape(shape).copy()


@st.composite
def tensor_data(draw, name: str, dtypes: list[str], layouts: tuple[str, ...] = ("dense",),
                encodings: tuple[str, ...] = ("raw", "zstd"), digests: tuple[str | None, ...] = (None,),
                big_endian: bool = False) -> TensorData:
    dtype = draw(st.sampled_from(dtypes))
    layout = draw(st.sampled_from(layouts))
    if layout == "sparse_csr":
        shape = draw(shapes(2, 2, 6))
    elif layout == "sparse_coo":
        shape = draw(shapes(1, 3, 6))
    else:
        shape = draw(shapes())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dense = random_bits(rng, dtype, shape)
    mask = None
    if layout != "dense":
        density = draw(st.sampled_from([0.0, 0.3, 1.0]))
        mask = rng.random(shape) < density
        dense = np.where(mask, dense, np.zeros((), dense.dtype))
    width = np.dtype(STORAGE[dtype]).itemsize
    encoding = draw(st.sampled_from(encodings))
    # ztensor writes data_endianness only for raw multi-byte dense data
    swapped = big_endian and encoding == "raw" and layout == "dense" and width > 1 and draw(st.booleans())
    return TensorData(name, dtype, shape, dense, layout, mask, encoding, draw(st.sampled_from(digests)), swapped)


NAME_CHARS = st.sampled_from("abcxyz._-019/ Ωé値")


@st.composite
def tensor_list(draw, max_tensors: int = 4, **kw) -> list[TensorData]:
    names = draw(st.lists(st.text(NAME_CHARS, min_size=1, max_size=8), max_size=max_tensors, unique=True))
    return [draw(tensor_data(name, **kw)) for name in names]


# ------------------------------------------------------------------------------------------ encoding


def zstd_frame(data: bytes, with_size: bool) -> bytes:
    return zstandard.ZstdCompressor(level=1, write_content_size=with_size).compress(data)


def digest_of(algorithm: str | None, stored: bytes) -> str | None:
    if algorithm == "crc32c":
        return f"crc32c:0x{crc32c.crc32c(stored):08X}"
    if algorithm == "sha256":
        return "sha256:" + hashlib.sha256(stored).hexdigest()
    return None


class Blobs:
    """The blob area of a zTensor file: magic at 0, each blob 64-aligned with zero padding written lazily
    before it (so a zero-length blob's offset is the next blob's, or the manifest's), as the writers do."""

    def __init__(self, magic: bytes) -> None:
        self.buf = bytearray(magic)

    def put(self, data: bytes) -> int:
        self.buf += bytes(-len(self.buf) % ALIGN)
        offset = len(self.buf)
        self.buf += data
        return offset


@dataclass
class Built:
    """A generated file and what it must decode to."""

    fmt: str                                  # "zt-v0.1" | "zt-v1.0" | "zt-v1.x" | "safetensors" | "blz"
    data: bytes
    path: str
    tensors: list[TensorData] = field(default_factory=list)
    #: byte offsets of u64 length/size fields worth overwriting with random values
    u64_fields: list[int] = field(default_factory=list)
    #: the decoded manifest, and how to rebuild the file bytes from a mutated copy of it
    manifest: Any = None
    rebuild: Callable[[Any], bytes] | None = None
    #: BLZ only: the dense reconstruction the cores must give
    expected_dense: np.ndarray | None = None

    @property
    def expected(self) -> dict[str, TensorData]:
        return {t.name: t for t in self.tensors}


def _stored(t: TensorData, raw: bytes, with_size: bool, frames: int = 1) -> bytes:
    """The stored bytes: raw, or one zstd frame, or (``frames=2``) two frames back to back."""
    if t.encoding != "zstd":
        return raw
    if frames == 2:
        cut = len(raw) // 2
        return zstd_frame(raw[:cut], with_size) + zstd_frame(raw[cut:], with_size)
    return zstd_frame(raw, with_size)


zstd_frames = st.sampled_from([1, 1, 1, 2])


# --------------------------------------------------------------------------------------------- zt v0.1


def _cbor_array_header(n: int) -> bytes:
    if n < 24:
        return bytes([0x80 | n])
    if n < 256:
        return bytes([0x98, n])
    if n < 65536:
        return b"\x99" + struct.pack(">H", n)
    return b"\x9a" + struct.pack(">I", n)


def encode_v01_manifest(entries: Any) -> bytes:
    """ztensor 0.1.4's CBOR: a definite-length array of INDEFINITE-length maps (0xBF … 0xFF).

    Anything that is not a list of dicts (after a mutation) is encoded with plain cbor2.
    """
    if type(entries) is not list:
        return cbor2.dumps(entries)
    out = bytearray(_cbor_array_header(len(entries)))
    for entry in entries:
        if type(entry) is dict:
            out += b"\xbf"
            for key, value in entry.items():
                out += cbor2.dumps(key) + cbor2.dumps(value)
            out += b"\xff"
        else:
            out += cbor2.dumps(entry)
    return bytes(out)


def _v01_blob(t: TensorData) -> bytes:
    if t.layout == "sparse_csr":
        indptr, indices, values = t.csr()
        return indptr.tobytes() + indices.tobytes() + values.tobytes()
    if t.layout == "sparse_coo":
        coords, values = t.coo()
        record = np.dtype([("idx", "<u8", (len(t.shape),)), ("val", values.dtype)])
        packed = np.zeros(values.size, dtype=record)
        packed["idx"] = coords.T
        packed["val"] = values
        return packed.tobytes()
    if t.big_endian:
        return t.dense.astype(t.dense.dtype.newbyteorder(">")).tobytes()
    return t.dense.tobytes()


@st.composite
def zt_v01_files(draw) -> Built:
    tensors = draw(tensor_list(dtypes=ZT_LONG, layouts=("dense", "dense", "sparse_csr", "sparse_coo"),
                               digests=(None, "crc32c"), big_endian=True))
    blobs = Blobs(b"ZTEN0001")
    entries = []
    for t in tensors:
        stored = _stored(t, _v01_blob(t), draw(st.booleans()), draw(zstd_frames))
        entry: dict[str, Any] = {"name": t.name, "offset": blobs.put(stored), "size": len(stored),
                                 "dtype": t.dtype,
                                 "layout": {"dense": "dense", "sparse_csr": "sparsecsr",
                                            "sparse_coo": "sparsecoo"}[t.layout],
                                 "shape": list(t.shape), "encoding": t.encoding}
        if t.encoding == "raw" and t.dense.dtype.itemsize > 1:
            entry["data_endianness"] = "big" if t.big_endian else "little"
        if t.digest:
            entry["checksum"] = digest_of(t.digest, stored)
        if draw(st.integers(0, 4)) == 0:  # custom fields are flattened in, sorted, after the known keys
            entry.update(sorted({"author": "fuzz", "step": draw(st.integers(0, 1 << 40))}.items()))
        entries.append(entry)
    head = bytes(blobs.buf)

    def rebuild(manifest: Any) -> bytes:
        body = encode_v01_manifest(manifest)
        return head + body + struct.pack("<Q", len(body))

    data = rebuild(entries)
    return Built("zt-v0.1", data, "fuzz.zt", tensors, [len(data) - 8], entries, rebuild)


# --------------------------------------------------------------------------------------------- zt v1


def _v1_parts(t: TensorData) -> dict[str, np.ndarray]:
    if t.layout == "sparse_csr":
        indptr, indices, values = t.csr()
        return {"values": values, "indices": indices, "indptr": indptr}
    if t.layout == "sparse_coo":
        coords, values = t.coo()
        return {"values": values, "coords": coords}
    return {"data": t.dense}


@st.composite
def zt_v10_files(draw) -> Built:
    tensors = draw(tensor_list(dtypes=ZT_LONG, layouts=("dense", "dense", "sparse_csr", "sparse_coo"),
                               digests=(None, "crc32c", "sha256")))
    blobs = Blobs(b"ZTEN1000")
    entries: dict[str, Any] = {}
    for t in tensors:
        components = {}
        for role, array in _v1_parts(t).items():
            stored = _stored(t, array.tobytes(), draw(st.booleans()), draw(zstd_frames))
            comp: dict[str, Any] = {"offset": blobs.put(stored), "length": len(stored)}
            if t.encoding == "zstd":
                comp["encoding"] = "zstd"
            elif draw(st.integers(0, 5)) == 0:
                comp["encoding"] = "raw"  # allowed by the spec although ztensor never writes it
            if t.digest:
                comp["digest"] = digest_of(t.digest, stored)
            components[role] = comp
        entries[t.name] = {"dtype": t.dtype, "shape": list(t.shape), "format": t.layout, "components": components}
    attributes = draw(st.sampled_from([{}, {"license": "MIT", "framework": "numpy"}]))
    manifest = {"version": "1.0", "generator": "zTensor-Rust v0.1.0", "attributes": attributes,
                "tensors": dict(sorted(entries.items()))}
    head = bytes(blobs.buf)

    def rebuild(manifest: Any) -> bytes:
        body = cbor2.dumps(manifest)
        return head + body + struct.pack("<Q", len(body))

    data = rebuild(manifest)
    return Built("zt-v1.0", data, "fuzz.zt", tensors, [len(data) - 8], manifest, rebuild)


@st.composite
def zt_v1x_files(draw) -> Built:
    tensors = draw(tensor_list(dtypes=ZT_LONG + list(ZT_LOGICAL),
                               layouts=("dense", "dense", "sparse_csr", "sparse_coo"),
                               digests=(None, "crc32c", "sha256")))
    # logical types are dense-only in the writers
    for t in tensors:
        if t.dtype in ZT_LOGICAL and t.layout != "dense":
            t.layout, t.mask = "dense", None
    version = draw(st.sampled_from(["1.1.0", "1.2.0"]))
    blobs = Blobs(b"ZTEN1000")
    objects: dict[str, Any] = {}
    for t in tensors:
        components = {}
        for role, array in _v1_parts(t).items():
            raw = array.tobytes()
            stored = _stored(t, raw, draw(st.booleans()), draw(zstd_frames))
            comp: dict[str, Any] = {}
            if role in ("indices", "indptr", "coords"):
                comp["dtype"] = "u64"
            elif t.dtype in ZT_LOGICAL:
                comp["dtype"], comp["type"] = ZT_LOGICAL[t.dtype][1], ZT_LOGICAL[t.dtype][0]
            else:
                comp["dtype"] = ZT_SHORT[t.dtype]
            comp["offset"] = blobs.put(stored)
            comp["length"] = len(stored)
            if t.encoding == "zstd":
                if version == "1.2.0" and draw(st.booleans()):
                    comp["uncompressed_length"] = len(raw)
                comp["encoding"] = "zstd"
            if t.digest:
                comp["digest"] = digest_of(t.digest, stored)
            components[role] = comp
        obj: dict[str, Any] = {"shape": list(t.shape), "format": t.layout}
        if draw(st.integers(0, 3)) == 0:
            obj["attributes"] = {"n": 3, "scale": 0.5, "tags": ["a", "b"], "nested": {"k": [1, 2]}}
        obj["components"] = components
        objects[t.name] = obj
    manifest = {"version": version, "objects": dict(sorted(objects.items()))}
    head = bytes(blobs.buf)

    def rebuild(manifest: Any) -> bytes:
        body = cbor2.dumps(manifest)
        return head + body + struct.pack("<Q", len(body)) + b"ZTEN1000"

    data = rebuild(manifest)
    return Built("zt-v1.x", data, "fuzz.zt", tensors, [len(data) - 16], manifest, rebuild)


# ------------------------------------------------------------------------------------------ safetensors


@st.composite
def safetensors_files(draw) -> Built:
    tensors = draw(tensor_list(dtypes=list(ST_NAMES), encodings=("raw",), max_tensors=5))
    tensors = [t for t in tensors if t.name != "__metadata__"]
    # HF orders the buffer by dtype alignment (descending), then by name; any order without holes is valid
    if draw(st.booleans()):
        tensors.sort(key=lambda t: (-t.dense.dtype.itemsize, t.name))
    header: dict[str, Any] = {}
    if draw(st.booleans()):
        header["__metadata__"] = {"format": "np", "ünïcødé": "値", "empty": ""}
    buffer = bytearray()
    for t in tensors:
        begin = len(buffer)
        buffer += t.dense.tobytes()
        header[t.name] = {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [begin, len(buffer)]}
    tail = bytes(buffer)
    pad8 = draw(st.booleans())

    def rebuild(header: Any) -> bytes:
        text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
        if pad8:
            text += b" " * (-len(text) % 8)
        return struct.pack("<Q", len(text)) + text + tail

    data = rebuild(header)
    return Built("safetensors", data, "fuzz.safetensors", tensors, [0], header, rebuild)


# ------------------------------------------------------------------------------------------------- BLZ


def tt_reconstruct(cores: list[np.ndarray]) -> np.ndarray:
    full = cores[0]  # (1, d0, r1)
    for core in cores[1:]:
        full = np.tensordot(full, core, axes=([-1], [0]))
    return full.reshape(full.shape[1:-1])


@st.composite
def blz_files(draw) -> Built:
    ndim = draw(st.integers(2, 4))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    ranks = [1] + draw(st.lists(st.integers(1, 3), min_size=ndim - 1, max_size=ndim - 1)) + [1]
    complex_ = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cores = []
    for i, d in enumerate(shape):
        core = rng.standard_normal((ranks[i], d, ranks[i + 1]))
        if complex_:
            core = core + 1j * rng.standard_normal(core.shape)
        cores.append(core.astype("<c16" if complex_ else "<f8"))
    body = b"".join(c.tobytes() for c in cores)

    def rebuild(h: Any) -> bytes:
        def u(value: Any, mask: int) -> int:
            return value & mask if type(value) is int else 0

        def u64s(values: Any) -> list[int]:
            return [u(v, U64_MAX) for v in values] if type(values) is list else []

        fixed = b"BLZ1" + bytes(u(h.get(k), 0xFF) for k in ("version", "dtype_tag", "ndim")) + bytes(8)
        return fixed + b"".join(struct.pack("<Q", v) for v in u64s(h.get("shape")) + u64s(h.get("ranks"))) + body

    header = {"version": 1, "dtype_tag": int(complex_), "ndim": ndim, "shape": shape, "ranks": ranks}
    data = rebuild(header)
    u64_fields = [15 + 8 * i for i in range(2 * ndim + 1)]
    dense = tt_reconstruct(cores)
    name = "fuzz"
    t = TensorData(name, "complex128" if complex_ else "float64", tuple(shape), dense, layout="tensor_train")
    return Built("blz", data, f"{name}.blz", [t], u64_fields, header, rebuild, expected_dense=dense)


FORMATS: dict[str, Callable[[], st.SearchStrategy[Built]]] = {
    "zt-v0.1": zt_v01_files, "zt-v1.0": zt_v10_files, "zt-v1.x": zt_v1x_files,
    "safetensors": safetensors_files, "blz": blz_files,
}


# ------------------------------------------------------------------------------------------- corruption

INTERESTING_INTS = [0, 1, 7, 8, 63, 64, 65, 255, 256, 2**31, 2**32, 2**40, 2**63 - 1, 2**63, U64_MAX - 63,
                    U64_MAX - 7, U64_MAX, 2**64, 2**70, -1, -(2**63)]
NASTY_VALUES: list[Any] = INTERESTING_INTS + [
    1.5, float("nan"), float("inf"), "", "x", "zstd", "raw", "lz4", "float32", "bool", "bfloat16", "f32", "u64",
    "complex64", "dense", "sparse_csr", "sparse_coo", "sparsecsr", "quantized_group", "crc32c:0x00000000",
    "sha256:" + "0" * 64, "crc32c:zz", "1.0", "2.0", "1.9", None, True, False, [], [0], [-1], [2**40, 2**40, 2**40],
    [2**64 - 1], [1.5], ["a"], {}, {"a": 1}, {"offset": 0, "length": 2**63}, b"\x00\x01",
]


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every (path to container, key) inside a decoded manifest."""
    out = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.append(prefix + (key,))
            out += _paths(value, prefix + (key,))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.append(prefix + (i,))
            out += _paths(value, prefix + (i,))
    return out


def _deepcopy(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _deepcopy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_deepcopy(v) for v in obj]
    return obj


@st.composite
def mutated_manifest(draw, built: Built) -> bytes:
    """Replace, delete or duplicate one value somewhere in the manifest, then re-encode it."""
    manifest = _deepcopy(built.manifest)
    paths = _paths(manifest)
    if not paths:
        manifest = draw(st.sampled_from(NASTY_VALUES))
        paths = [()]
    path = draw(st.sampled_from(paths))
    if not path:
        return _rebuild(built, manifest)
    parent = manifest
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    action = draw(st.sampled_from(["replace", "replace", "nudge", "delete", "duplicate", "rename"]))
    value = parent[key]
    if action == "nudge" and type(value) is int:
        parent[key] = value + draw(st.sampled_from([-65, -64, -8, -1, 1, 8, 64, 2**32]))
    elif action == "delete":
        del parent[key]
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(key, _deepcopy(value))
    elif action == "rename" and isinstance(parent, dict):
        new_key = draw(st.sampled_from(["", "data", "values", "__metadata__", "x", 0, "offset"]))
        items = [(new_key if k == key else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
    else:
        parent[key] = draw(st.sampled_from(NASTY_VALUES))
    return _rebuild(built, manifest)


def _rebuild(built: Built, manifest: Any) -> bytes:
    try:
        return built.rebuild(manifest)
    except (TypeError, ValueError, OverflowError, KeyError, AttributeError, struct.error, cbor2.CBOREncodeError):
        return built.data  # the mutation cannot be encoded in this format (e.g. bytes in JSON)


@st.composite
def corruptions(draw, built: Built) -> tuple[bytes, list[str]]:
    """1–3 random corruptions; returns the bytes and a description of what was done."""
    data = bytearray(built.data)
    done: list[str] = []
    kinds = ["truncate", "flip", "flip", "insert", "delete", "u64"] + (["manifest"] * 3 if built.rebuild else [])
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds))
        n = len(data)
        if kind == "manifest" and not done:
            data = bytearray(draw(mutated_manifest(built)))
            done.append("mutate manifest")
        elif kind == "truncate" and n:
            cut = draw(st.integers(0, n - 1))
            del data[cut:]
            done.append(f"truncate at {cut}")
        elif kind == "flip" and n:
            # bias towards the header and the tail, where the structure is
            where = draw(st.sampled_from(["any", "head", "tail"]))
            lo, hi = {"any": (0, n - 1), "head": (0, min(n, 80) - 1), "tail": (max(0, n - 160), n - 1)}[where]
            for _ in range(draw(st.integers(1, 4))):
                pos = draw(st.integers(lo, hi))
                data[pos] ^= draw(st.integers(1, 255))
                done.append(f"flip {pos}")
        elif kind == "insert":
            pos = draw(st.integers(0, n))
            blob = draw(st.binary(min_size=1, max_size=16))
            data[pos:pos] = blob
            done.append(f"insert {len(blob)} at {pos}")
        elif kind == "delete" and n:
            pos = draw(st.integers(0, n - 1))
            k = draw(st.integers(1, 16))
            del data[pos:pos + k]
            done.append(f"delete {k} at {pos}")
        elif kind == "u64" and built.u64_fields:
            pos = draw(st.sampled_from(built.u64_fields))
            if pos + 8 <= len(data):
                value = draw(st.one_of(st.sampled_from([v for v in INTERESTING_INTS if 0 <= v <= U64_MAX]),
                                       st.integers(0, U64_MAX), st.integers(0, 2 * len(data))))
                data[pos:pos + 8] = struct.pack("<Q", value)
                done.append(f"u64 {value} at {pos}")
    return bytes(data), done
