"""The C reader of plain zTensor 1.x CBOR manifests (``_accel.zt_manifest``, used by ``zt.read_plain_manifest``)
gives exactly what cbor2 and the Python readers give whenever it accepts a manifest, declines everything else,
and neither crashes, reads out of bounds nor leaks on any input.

The manifests are built byte by byte here so that the tests control every encoding choice: key order,
non-minimal integer heads, indefinite lengths, tags, invalid UTF-8, duplicate keys, counts past the end, and
attributes of every CBOR kind. Each file is opened with and without the C module and the results compared.
"""
from __future__ import annotations

import gc
import itertools
import math
import random
import re
import struct
import sys
from collections.abc import Callable, Mapping
from typing import Any

import cbor2
import numpy as np
import pytest
from _accel_support import assert_no_leak, pure_python
from hypothesis import given, settings
from hypothesis import strategies as st
from zt_builders import V1, open_bytes

from ztviewer.codec import accel, registry
from ztviewer.codec.formats import zt, zt_fast
from ztviewer.codec.formats.zt_fast import PLAIN_DTYPES
from ztviewer.codec.formats.zt_fields import digest_problem
from ztviewer.codec.formats.zt_footer import (
    _DECODE_FAILURES,
    MAX_CBOR_DEPTH,
    _decode,
    decode_span,
    locate_manifest,
)
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.codec.source import Source

NATIVE = accel.native
pytestmark = pytest.mark.skipif(NATIVE is None, reason="ztviewer.codec._accel is not built, or disabled")
U64 = 1 << 64
V10_NAMES = sorted(PLAIN_DTYPES[False])
SHORT_NAMES = sorted(PLAIN_DTYPES[True])
ITEMSIZE = {False: {k: v[1] for k, v in PLAIN_DTYPES[False].items()},
            True: {k: v[1] for k, v in PLAIN_DTYPES[True].items()}}
BLOB_AT, BLOB_SIZE = 64, 512


# ------------------------------------------------------------------------------------------- CBOR by hand

def head(major: int, arg: int, width: int | None = None) -> bytes:
    """An item head; ``width`` None is the minimal encoding, 0 the argument inside the initial byte, 1/2/4/8
    the argument in that many following bytes (non-minimal when it would fit in fewer)."""
    if width is None:
        width = 0 if arg < 24 else 1 if arg < 1 << 8 else 2 if arg < 1 << 16 else 4 if arg < 1 << 32 else 8
    if width == 0:
        assert arg < 24
        return bytes([major << 5 | arg])
    return bytes([major << 5 | {1: 24, 2: 25, 4: 26, 8: 27}[width]]) + arg.to_bytes(width, "big")


def uint(n: int, width: int | None = None) -> bytes:
    return head(0, n, width)


def text(s: str | bytes, width: int | None = None) -> bytes:
    raw = s.encode() if isinstance(s, str) else s
    return head(3, len(raw), width) + raw


def array(items: list[bytes], width: int | None = None) -> bytes:
    return head(4, len(items), width) + b"".join(items)


def cmap(pairs: list[tuple[bytes, bytes]], width: int | None = None) -> bytes:
    return head(5, len(pairs), width) + b"".join(k + v for k, v in pairs)


def tag(number: int, item: bytes) -> bytes:
    return head(6, number) + item


def tmap(pairs: list[tuple[str, bytes]]) -> bytes:
    """A map with text keys (minimal heads)."""
    return cmap([(text(k), v) for k, v in pairs])


def v10_entry(dtype: str, shape: list[int], offset: int, length: int) -> bytes:
    return tmap([("dtype", text(dtype)), ("shape", array([uint(d) for d in shape])), ("format", text("dense")),
                 ("components", tmap([("data", tmap([("offset", uint(offset)), ("length", uint(length))]))]))])


def obj_entry(dtype: str, shape: list[int], offset: int, length: int) -> bytes:
    return tmap([("shape", array([uint(d) for d in shape])), ("format", text("dense")),
                 ("components", tmap([("data", tmap([("dtype", text(dtype)), ("offset", uint(offset)),
                                                     ("length", uint(length))]))]))])


def root(objects: bool, entries: list[tuple[str, bytes]], *, version: str | None = "",
         attributes: bytes | None = None, generator: str | None = None) -> bytes:
    """A root map of plain members (``version=None`` leaves the version out, ``""`` writes the layout's)."""
    members = []
    if version is not None:
        members.append(("version", text(version or ("1.2.0" if objects else "1.0"))))
    if generator is not None:
        members.append(("generator", text(generator)))
    if attributes is not None:
        members.append(("attributes", attributes))
    members.append(("objects" if objects else "tensors", tmap(entries)))
    return tmap(members)


def zt_file(manifest: bytes, objects: bool) -> bytes:
    """magic, zero blobs at 64, the manifest, its u64 size (and the trailing magic of the objects layout)."""
    body = V1 + bytes(BLOB_AT - len(V1) + BLOB_SIZE) + manifest + struct.pack("<Q", len(manifest))
    return body + V1 if objects else body


def direct(manifest: bytes, objects: bool) -> Any:
    return NATIVE.zt_manifest(manifest, objects, PLAIN_DTYPES[objects])


# ------------------------------------------------------------------------------------------- comparing

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def shown(value: Any) -> str:
    """A repr exact about types (1, 1.0 and True differ), safe with NaN and cycles, without object addresses,
    and with set members sorted (NaN hashes by identity, so equal sets from two decodes iterate differently)."""
    return _ADDRESS.sub("", _show(value, set()))


def _show(value: Any, active: set[int]) -> str:
    if id(value) in active:
        return "<cycle>"
    kind = type(value)
    if isinstance(value, (list, tuple, set, frozenset, Mapping, cbor2.CBORTag)):
        active.add(id(value))
        try:
            if isinstance(value, Mapping):
                inner = ", ".join(f"{_show(k, active)}: {_show(v, active)}" for k, v in value.items())
            elif isinstance(value, (set, frozenset)):
                inner = ", ".join(sorted(_show(v, active) for v in value))
            elif isinstance(value, cbor2.CBORTag):
                inner = f"{value.tag}, {_show(value.value, active)}"
            else:
                inner = ", ".join(_show(v, active) for v in value)
        finally:
            active.discard(id(value))
        return f"{kind.__name__}({inner})"
    return repr(value)


def raw(tensor: Any) -> str:
    """Every slot of a tensor, exactly (a deferred component is not a built one)."""
    assert type(tensor) is Tensor
    return shown(tuple(getattr(tensor, slot, "<unset>") for slot in Tensor.__slots__))


def same_file(a: TensorFile, b: TensorFile) -> None:
    assert (a.format, a.variant, a.readable) == (b.format, b.variant, b.readable)
    assert [str(p) for p in a.problems] == [str(p) for p in b.problems]
    assert shown(a.problems) == shown(b.problems)
    shown_a = [raw(t) for t in a.tensors]
    assert shown_a == [raw(t) for t in b.tensors]
    if not any("nan" in r or "<cycle>" in r for r in shown_a):  # == fails on NaN and recurses on cycles
        assert a.tensors == b.tensors
    assert [[str(p) for p in t.problems] for t in a.tensors] == [[str(p) for p in t.problems] for t in b.tensors]
    assert shown(a.attributes) == shown(b.attributes)
    assert shown(a.extra) == shown(b.extra)
    assert a.regions == b.regions


def both_ways(data: bytes) -> TensorFile:
    """The file opened with the C module, after checking that it equals the file opened without it."""
    with_c = open_bytes(data)
    with pure_python():
        without = open_bytes(data)
    same_file(with_c, without)
    return with_c


def _sentinel(index: int, name: Any, entry: Any) -> None:
    return None


def oracle(manifest: bytes, objects: bool, got: Any) -> None:
    """What ``zt_manifest`` returned agrees with cbor2 and the Python fast loops, or is ``None``.

    An accepted manifest decodes with cbor2 (no duplicate keys, no trailing bytes) to a root of exactly the
    fields returned, whose tensors the Python loop takes as plain. The only thing that may still fail is the
    attributes item (nesting past the limit, duplicate keys, invalid CBOR inside it): then ``decode_span``
    must reject it so that ``read_plain_manifest`` falls back to cbor2 and the full path."""
    if got is None:
        return
    fields, tensors = got
    assert type(fields) is dict and type(tensors) is list
    try:
        decoded, used = _decode(memoryview(manifest), allow_duplicate_keys=False)
    except _DECODE_FAILURES:
        assert "attributes" in fields, "accepted a manifest cbor2 rejects"
        assert decode_span(manifest, *fields["attributes"], level=1) is None, "attributes cbor2 rejects"
        return
    assert used == len(manifest), "accepted trailing bytes"
    key = "objects" if objects else "tensors"
    assert type(decoded) is dict and set(decoded) == {*fields, key}
    for name in ("version", "generator"):
        if name in decoded:
            assert type(fields[name]) is str and fields[name] == decoded[name]
    if "attributes" in decoded:
        start, end = fields["attributes"]
        assert 0 < start < end <= len(manifest)
        span = decode_span(manifest, start, end, level=1)
        if span is not None or decoded["attributes"] is not None:
            assert shown(span) == shown(decoded["attributes"])
    entries = decoded[key]
    assert type(entries) is dict
    loop = zt_fast._objects_loop if objects else zt_fast._v10_loop
    reference = loop(entries.items(), _sentinel, 0)
    assert None not in reference, "accepted an entry the Python fast loop does not take"
    assert [raw(t) for t in tensors] == [raw(t) for t in reference]
    assert tensors == reference  # plain tensors hold no attributes, so no NaN


# ------------------------------------------------------------------------------------ random manifests

_BAD_UTF8 = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"a\x80", b"\xe2\x82", b"\xf8\x88\x80\x80\x80"]
_ALPHABET = "ab.z_0 \x00\x7f\u00e9\u0394\uffff\U0001f600"
_FLOATS = [0.0, -0.0, 1.5, -2.0, math.inf, -math.inf, math.nan, 65504.0, 1e-7]
#: Items that are odd, semantic (tags cbor2 decodes) or invalid (cbor2 rejects them: then the file is fatal).
_ODD_ITEMS = [
    b"\xff", b"\x1c", b"\x5c", b"\x7c", b"\xfc", b"\x7f\x01\xff", b"\x7f\x41a\xff", b"\x7f\x7f\xff\xff", b"\xdf\x01",
    b"\x3f", b"\x9f\x01", b"\xbf\x01\xff", b"\xbf\x01", b"\xd8\x19\x00", b"\xd8\x1d\x00", b"\xc1\x1a\x5f\x00\x00\x00",
    b"\xc1\x61x", b"\xd8\x64\x19\x4e\x20", b"\xd8\x23\x63a.b", b"\xd8\x23\x61(", b"\xd8\x25\x50" + bytes(16),
    b"\xd9\x01\x00\x82\x63abc\xd8\x19\x00", b"\xd8\x1c\x81\xd8\x1d\x00", b"\xd8\x1c\x82\x01\xd8\x1d\x00",
    b"\x9b" + b"\xff" * 8, b"\x7b" + b"\xff" * 8 + b"a", b"\x5b\x00\x00\x00\x00\x00\x00\x00\x02a",
    b"\xd9\x01\x02\x82\x01\x02", b"\xd9\x01\x02\x82\x01\x01", b"\xd9\x01\x02\x81\x80", b"\xc4\x82\x21\x19\x6a\xb3",
    b"\xc5\x82\x20\x03", b"\xd8\x1e\x82\x01\x03", b"\xd8\x1e\x82\x01\x00", b"\xd9\xd9\xf7\x82\x01\x02",
    b"\xa1\x80\x01", b"\xa1\xa0\x01", b"\xa1\xf9\x7e\x00\x01", b"\xa2\xf9\x7e\x00\x01\xf9\x7e\x00\x02",
    b"\xa2\x01\x01\x01\x02", b"\xa2\x61a\x01\x7f\x61a\xff\x02", b"\xa2\x01\x01\xf9\x3c\x00\x02",
    b"\xa2\x01\x01\xf5\x02", b"\xa2\x80\x01\x80\x02", b"\xfb\x7f\xf8\x00\x00\x00\x00\x00\x01",
    b"\xc0\x74" + b"2013-03-21T20:04:00Z", b"\xc0\x61x", b"\xc2\x40", b"\xc3\x40", b"\xc2\x5f\x41\x01\xff",
]


def rand_text(r: random.Random, size: int = 6) -> str:
    return "".join(r.choice(_ALPHABET) for _ in range(r.randint(0, size)))


def rand_leaf(r: random.Random) -> bytes:
    kind = r.randint(0, 15)
    if kind == 0:
        return uint(r.choice([r.randint(0, 30), r.randint(0, U64 - 1), r.getrandbits(r.randint(1, 64))]))
    if kind == 1:
        return uint(r.randint(0, 255), r.choice([1, 2, 4, 8]))
    if kind == 2:
        return head(1, r.choice([0, r.randint(0, 30), U64 - 1, r.getrandbits(r.randint(1, 64))]), r.choice([None, 8]))
    if kind == 3:
        return b"\xf9" + struct.pack(">e", r.choice(_FLOATS))
    if kind == 4:
        return b"\xfa" + struct.pack(">f", r.choice([*_FLOATS, r.uniform(-1e30, 1e30)]))
    if kind == 5:
        return b"\xfb" + struct.pack(">d", r.choice([*_FLOATS, r.uniform(-1e300, 1e300)]))
    if kind == 6:
        return r.choice([b"\xf4", b"\xf5", b"\xf6", b"\xf7", b"\xe0", b"\xf3", b"\xf8\x20", b"\xf8\xff",
                         b"\xf8\x10", b"\xf8\x00"])  # simple values, the last two invalid two-byte forms
    if kind == 7:
        return text(rand_text(r), r.choice([None, None, 1, 8]))
    if kind == 8:
        return head(2, n := r.randint(0, 6)) + r.randbytes(n)
    if kind == 9:
        return b"\x5f" + b"".join(head(2, n := r.randint(0, 3)) + r.randbytes(n) for _ in range(r.randint(0, 3))) + b"\xff"
    if kind == 10:
        return b"\x7f" + b"".join(text(rand_text(r, 3)) for _ in range(r.randint(0, 3))) + b"\xff"
    if kind == 11:
        return r.choice([b"\xc2", b"\xc3"]) + head(2, n := r.randint(0, 9)) + r.randbytes(n)
    if kind == 12:
        return text(rand_text(r, 2).encode() + r.choice(_BAD_UTF8))
    return r.choice(_ODD_ITEMS)


def rand_item(r: random.Random, depth: int = 0) -> bytes:
    """Any CBOR item (and some invalid ones), nested at most 4 levels."""
    if depth >= 4 or r.random() < 0.4:
        return rand_leaf(r)
    n = r.randint(0, 4)

    def items() -> list[bytes]:
        return [rand_item(r, depth + 1) for _ in range(n)]

    kind = r.randint(0, 8)
    if kind == 0:
        return array(items())
    if kind == 1:
        return array(items(), r.choice([1, 2, 4, 8]))
    if kind == 2:
        return b"\x9f" + b"".join(items()) + b"\xff"
    if kind == 3:
        return cmap([(text(rand_text(r, 3)), v) for v in items()])
    if kind == 4:
        return cmap([(rand_item(r, depth + 2), v) for v in items()])  # any keys: tuples, frozendicts, duplicates
    if kind == 5:
        return b"\xbf" + b"".join(text(rand_text(r, 3)) + v for v in items()) + b"\xff"
    if kind == 6:
        return tag(r.choice([6, 28, 258, 1000, 55799, 1 << 20, U64 - 1]), rand_item(r, depth + 1))
    if kind == 7:
        key = text(rand_text(r, 2))
        return cmap([(key, rand_item(r, depth + 1)), (key, rand_item(r, depth + 1))])  # a duplicate key
    return cmap([(text(rand_text(r, 3)), text(rand_text(r))) for _ in range(n)])


def nested(r: random.Random) -> bytes:
    """Containers nested around the nesting limit (cbor2 counts maps, arrays and tags)."""
    n = r.randint(MAX_CBOR_DEPTH - 4, MAX_CBOR_DEPTH + 2)
    level = r.choice([b"\x81", b"\xa1\x61k", b"\xd9\x03\xe8", b"\x9f"])
    inner = r.choice([b"\x01", b"\x80", b"\xa0", b"\x61x", b"\x7f\xff"])
    return level * n + inner + (b"\xff" * n if level == b"\x9f" else b"")


def rand_attributes(r: random.Random) -> bytes:
    kind = r.randint(0, 9)
    if kind < 5:
        return cmap([(text(rand_text(r)), rand_item(r, 1)) for _ in range(r.randint(0, 4))])
    if kind < 7:
        return cmap([(text(rand_text(r)), text(rand_text(r))) for _ in range(r.randint(0, 4))])
    if kind == 7:
        return rand_item(r)
    if kind == 8:
        return nested(r)
    return b"\xa0"


class Maker:
    """Makes the CBOR bytes of one manifest: plain but for encoding choices (key orders, head widths, names,
    attributes) at ``noise`` 0, odd in one place or another more often the higher ``noise`` is."""

    def __init__(self, r: random.Random, noise: int) -> None:
        self.r = r
        self.noise = noise

    def odd(self) -> bool:
        return self.noise > 0 and self.r.randint(0, 40) < self.noise

    def head(self, major: int, arg: int) -> bytes:
        fits = [w for w in (0, 1, 2, 4, 8) if (w == 0 and arg < 24) or (w and arg < 1 << (8 * w))]
        return head(major, arg, self.r.choice([None, None, None, *fits]))

    def uint(self, n: int) -> bytes:
        if not self.odd():
            return self.head(0, n)
        r = self.r
        kind = r.randint(0, 11)
        if kind == 0:
            return self.head(1, n)                                        # -1 - n
        if kind == 1:
            return b"\xfb" + struct.pack(">d", float(n))                  # a float of the same value
        if kind == 2:
            return b"\xf9" + struct.pack(">e", float(min(n, 1000)))
        if kind == 3:
            return r.choice([b"\xf4", b"\xf5", b"\xf6", b"\xf7"])         # false, true, null, undefined
        if kind == 4:
            body = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
            return b"\xc2" + head(2, len(body)) + body                    # a bignum of the same value
        if kind == 5:
            return tag(r.choice([6, 1000, 55799]), self.head(0, n))
        if kind == 6:
            return r.choice([b"\x1c", b"\x1d", b"\x1e", b"\x1f"])         # reserved / indefinite
        if kind == 7:
            return text(str(n))
        if kind == 8:
            return b"\xc2\x49\x01" + bytes(8)                             # 2**64
        if kind == 9:
            return head(0, n)[:-1] if n >= 24 else b"\x18"                # a head cut short
        if kind == 10:
            return b"\x3b" + b"\xff" * 8                                  # -2**64
        return head(0, r.choice([U64 - 1, 1 << 63, 1 << 32]), 8)

    def text(self, s: str) -> bytes:
        raw = s.encode()
        if not self.odd():
            return self.head(3, len(raw)) + raw
        r = self.r
        kind = r.randint(0, 8)
        if kind == 0:
            return head(2, len(raw)) + raw                                # a byte string
        if kind == 1:
            cut = r.randint(0, len(raw))
            while 0 < cut < len(raw) and (raw[cut] & 0xC0) == 0x80:
                cut -= 1
            return b"\x7f" + text(raw[:cut]) + text(raw[cut:]) + b"\xff"  # indefinite, in two chunks
        if kind == 2:
            return text(raw + r.choice(_BAD_UTF8))                        # invalid UTF-8
        if kind == 3:
            return tag(r.choice([32, 1000, 55799]), text(s))
        if kind == 4:
            return text(raw + b"\0")
        if kind == 5:
            return text(s.upper() if s.upper() != s else s + "x")
        if kind == 6:
            return head(3, len(raw) + r.randint(1, 3)) + raw              # longer than what follows
        if kind == 7:
            return head(3, U64 - 1, 8) + raw
        return self.uint(len(raw))                                        # not text at all

    def container(self, major: int, items: list[bytes]) -> bytes:
        """An array (items) or a map (items are key and value already joined)."""
        body = b"".join(items)
        if not self.odd():
            return self.head(major, len(items)) + body
        r = self.r
        kind = r.randint(0, 5)
        if kind == 0:
            return bytes([major << 5 | 31]) + body + b"\xff"              # indefinite length
        if kind == 1:
            return head(major, len(items) + 1) + body                     # one more than there are
        if kind == 2:
            return head(major, max(0, len(items) - 1)) + body             # one fewer
        if kind == 3:
            return head(major, r.choice([U64 - 1, 1 << 62, 1 << 31, 255]), 8) + body
        if kind == 4:
            return tag(r.choice([258, 1000, 55799]), self.head(major, len(items)) + body)
        return self.head(4 if major == 5 else 5, len(items)) + body       # the other kind

    def map(self, pairs: list[tuple[str, bytes]], extras: list[tuple[str, bytes]] = ()) -> bytes:
        """A text-keyed map, its keys in random order, sometimes one repeated, missing, added or misspelt."""
        r = self.r
        pairs = list(pairs)
        if self.odd():
            kind = r.randint(0, 3)
            if kind == 0 and pairs:
                pairs.append(r.choice(pairs))                             # a duplicate key
            elif kind == 1 and pairs:
                pairs.pop(r.randrange(len(pairs)))                        # a missing key
            elif kind == 2:
                pairs.append(r.choice([*extras, ("x", uint(1)), ("attributes", b"\xa0")]))
            elif pairs:
                first = pairs[0][0]
                pairs[0] = (first.upper() if first.upper() != first else first + "s", pairs[0][1])
        r.shuffle(pairs)
        return self.container(5, [self.text(k) + v for k, v in pairs])

    def entry(self, objects: bool) -> bytes:
        r = self.r
        dtype = r.choice(SHORT_NAMES if objects else V10_NAMES)
        ndim = r.choice([64, 65, 100]) if self.odd() else r.randint(0, 3)
        dims = [r.randint(0, 4) if ndim < 8 else r.choice([1, 1, 1, 2]) for _ in range(ndim)]
        if self.odd():
            dims = [r.choice([1 << 32, 1 << 40, U64 - 1, 1 << 63, 3]) for _ in range(ndim)]
            if dims and r.random() < 0.5:
                dims[r.randrange(len(dims))] = 0
        nbytes = ITEMSIZE[objects][dtype] * math.prod(dims)
        length = r.choice([nbytes + 1, max(0, nbytes - 1), 0, U64 - 1]) if self.odd() else nbytes
        length %= U64
        offset = r.choice([r.randint(0, BLOB_SIZE), r.randint(0, BLOB_SIZE), BLOB_AT, U64 - 1, 1 << 40])
        if self.odd():
            dtype = r.choice(["f128", "float8_e4m3", "", "F32", *(V10_NAMES if objects else SHORT_NAMES)])
        shape = self.container(4, [self.uint(d) for d in dims])
        data = [("offset", self.uint(offset)), ("length", self.uint(length))]
        if objects:
            data.append(("dtype", self.text(dtype)))
        data_map = self.map(data, [("encoding", text("raw")), ("digest", text("crc32c:0x00000000")),
                                   ("uncompressed_length", uint(length)), ("type", text("complex64"))])
        role = r.choice(["values", "Data", "dat"]) if self.odd() else "data"
        components = self.map([(role, data_map)], [("indices", data_map)])
        fmt = r.choice(["sparse_coo", "Dense", "densE", "dense\0"]) if self.odd() else "dense"
        members = [("shape", shape), ("format", self.text(fmt)), ("components", components)]
        if not objects:
            members.append(("dtype", self.text(dtype)))
        return self.map(members, [("attributes", b"\xa0"), ("dtype" if objects else "extra", text("f32"))])

    def name(self) -> bytes:
        if self.odd():
            return text(rand_text(self.r, 3).encode() + self.r.choice(_BAD_UTF8))
        return self.text(rand_text(self.r, 4))

    def manifest(self, objects: bool, attributes: bytes | None = None) -> bytes:
        """The manifest; ``plain`` then says whether it is plain: no odd item, and attributes that are one
        complete CBOR item (random ones may hold a stray break or a count past their end, and then the bytes
        after them are read as something else)."""
        r = self.r
        self.plain = self.noise == 0
        entries = [(self.name(), self.entry(objects)) for _ in range(r.randint(0, 4))]
        if entries and self.odd():
            entries.insert(r.randint(0, len(entries)), r.choice(entries))  # a repeated name
        members = [("objects" if objects else "tensors", self.container(5, [k + v for k, v in entries]))]
        if r.random() < 0.85:
            version = "1.2.0" if objects else "1.0"
            if self.odd():
                version = r.choice(["1.1", "1.9.0", "2.0", "1", "x.y", "1.0.0.0", "", "1.0.2", "0.1"])
            members.append(("version", self.text(version)))
        if r.random() < 0.5:
            members.append(("generator", self.text(rand_text(r))))
        if attributes is not None or r.random() < 0.6:
            attributes = attributes if attributes is not None else rand_attributes(r)
            self.plain = self.plain and one_item(attributes)
            members.append(("attributes", attributes))
        if self.odd():
            members.append(r.choice([("tensors" if objects else "objects", b"\xa0"), ("unknown", uint(1)),
                                     ("version", text("1.0"))]))
        manifest = self.map(members)
        if self.odd():
            kind = r.randint(0, 3)
            if kind == 0:
                manifest += r.choice([b"\x00", b"\xff", b"\xa0", b"\x60"])           # trailing bytes
            elif kind == 1 and len(manifest) > 1:
                manifest = manifest[:r.randint(1, len(manifest) - 1)]                # truncated
            elif kind == 2:
                manifest = tag(r.choice([55799, 256]), manifest)
            else:
                manifest = array([manifest])
        return manifest


def one_item(item: bytes) -> bool:
    """Whether cbor2 reads the bytes as exactly one item (nesting counted as in a manifest's attributes)."""
    try:
        return _decode(memoryview(item), allow_duplicate_keys=True, max_depth=MAX_CBOR_DEPTH - 1)[1] == len(item)
    except _DECODE_FAILURES:
        return False


def check_manifest(manifest: bytes, objects: bool, must_accept: bool = False) -> Any:
    """The C reader's answer agrees with cbor2 and the Python loop, and the file opens the same with and without
    C; with ``must_accept``, a manifest cbor2 decodes without duplicate keys is read directly."""
    got = direct(manifest, objects)
    oracle(manifest, objects, got)
    oracle(manifest, not objects, direct(manifest, not objects))
    if must_accept and got is None:
        try:
            used = _decode(memoryview(manifest), allow_duplicate_keys=False)[1]
        except _DECODE_FAILURES:
            used = None  # repeated names, or attributes that are not valid CBOR
        assert used != len(manifest), f"declined a plain manifest: {manifest.hex()}"
    data = zt_file(manifest, objects)
    both_ways(data)
    if got is not None:  # the reader takes the direct path unless cbor2 rejects the attributes
        source = Source.from_bytes(data, path="t.zt")
        taken = zt.read_plain_manifest(source, locate_manifest(source))
        assert (taken is not None) == ("attributes" not in got[0]
                                       or decode_span(manifest, *got[0]["attributes"], level=1) is not None)
    return got


# ------------------------------------------------------------------------------------------ the tests

@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
@settings(max_examples=500, deadline=None, database=None)
@given(seed=st.integers(0, 2 ** 64), noise=st.sampled_from([0, 1, 2, 4, 8]))
def test_random_manifests_open_the_same_with_and_without_c(objects, seed, noise):
    """Three manifests per example (one plain, two at the drawn noise), 1500 per layout in all."""
    for at, level in enumerate((0, noise, noise)):
        maker = Maker(random.Random(seed + at), level)
        check_manifest(maker.manifest(objects), objects, must_accept=maker.plain)


# The attributes as a hypothesis strategy, to shrink a failure to its smallest item.
_leaf_items = st.one_of(
    st.integers(0, U64 - 1).map(uint),
    st.tuples(st.integers(0, 255), st.sampled_from([1, 2, 4, 8])).map(lambda a: uint(*a)),
    st.integers(0, U64 - 1).map(lambda n: head(1, n)),
    st.floats(width=16).map(lambda f: b"\xf9" + struct.pack(">e", f)),
    st.floats(width=32).map(lambda f: b"\xfa" + struct.pack(">f", f)),
    st.floats().map(lambda f: b"\xfb" + struct.pack(">d", f)),
    st.integers(0, 255).map(lambda n: head(7, n) if n < 24 else b"\xf8" + bytes([n])),  # simple values
    st.text(st.characters(codec="utf-8"), max_size=6).map(text),
    st.binary(max_size=6).map(lambda b: head(2, len(b)) + b),
    st.binary(max_size=8).map(lambda b: b"\x5f" + head(2, len(b)) + b + b"\xff"),
    st.binary(max_size=8).map(text),                                                    # mostly invalid UTF-8
    st.sampled_from(_ODD_ITEMS),
)
attribute_items = st.recursive(_leaf_items, lambda inner: st.one_of(
    st.lists(inner, max_size=4).map(array),
    st.lists(inner, max_size=4).map(lambda xs: b"\x9f" + b"".join(xs) + b"\xff"),
    st.lists(st.tuples(st.text(max_size=3), inner), max_size=4).map(lambda ps: cmap([(text(k), v) for k, v in ps])),
    st.lists(st.tuples(inner, inner), max_size=3).map(cmap),
    st.lists(st.tuples(st.text(max_size=3), inner), max_size=3).map(
        lambda ps: b"\xbf" + b"".join(text(k) + v for k, v in ps) + b"\xff"),
    st.tuples(st.integers(0, U64 - 1), inner).map(lambda a: tag(*a)),
), max_leaves=10)


@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
@settings(max_examples=250, deadline=None, database=None)
@given(attributes=attribute_items, seed=st.integers(0, 2 ** 32))
def test_attributes_of_every_kind(objects, attributes, seed):
    maker = Maker(random.Random(seed), 0)
    check_manifest(maker.manifest(objects, attributes), objects, must_accept=maker.plain)


# ------------------------------------------------------------------------------------------- edge cases

E10 = v10_entry("float32", [2, 3], 64, 24)
EOB = obj_entry("f32", [2, 3], 64, 24)
U64_HEAD = b"\x1b" + b"\xff" * 8  # the largest u64, as an argument


def _v10(entries: list[tuple[str, bytes]] | None = None, **kw: Any) -> bytes:
    return root(False, [("w", E10)] if entries is None else entries, **kw)


def _obj(entries: list[tuple[str, bytes]] | None = None, **kw: Any) -> bytes:
    return root(True, [("w", EOB)] if entries is None else entries, **kw)


def _wide(objects: bool) -> bytes:
    """The plain manifest with every head 8 bytes wide (non-minimal everywhere)."""
    t = lambda s: text(s, 8)
    data = [(t("offset"), uint(64, 8)), (t("length"), uint(24, 8))]
    if objects:
        data.append((t("dtype"), t("f32")))
    entry = [(t("shape"), array([uint(2, 8), uint(3, 8)], 8)), (t("format"), t("dense")),
             (t("components"), cmap([(t("data"), cmap(data, 8))], 8))]
    if not objects:
        entry.append((t("dtype"), t("float32")))
    members = [(t("version"), t("1.2.0" if objects else "1.0")), (t("attributes"), cmap([(t("k"), t("v"))], 8)),
               (t("objects" if objects else "tensors"), cmap([(t("w"), cmap(entry, 8))], 8))]
    return cmap(members, 8)


def _replace(manifest: bytes, old: bytes, new: bytes) -> bytes:
    assert manifest.count(old) == 1, (manifest, old)
    return manifest.replace(old, new)


ACCEPTED, DECLINED, EITHER = True, False, None
CRC = "crc32c:0x0000ABCD"
SHA = "sha256:" + "a1" * 32


def _stored(objects: bool, length: int = 24, **optional: bytes) -> bytes:
    """The plain f32 [2, 3] entry with extra keys in its data component."""
    data = [("offset", uint(64)), ("length", uint(length)), *optional.items()]
    if objects:
        data.insert(0, ("dtype", text("f32")))
    entry = [("shape", array([uint(2), uint(3)])), ("format", text("dense")),
             ("components", tmap([("data", tmap(data))]))]
    if not objects:
        entry.insert(0, ("dtype", text("float32")))
    return root(objects, [("w", tmap(entry))])


def _stored_shape(objects: bool, short: str, shape: list[int], length: int = 9, **optional: bytes) -> bytes:
    """An entry of any dtype and shape, with extra keys in its data component."""
    dtype = ("dtype", text(short if objects else dict(PLAIN_DTYPES[True])[short][0]))
    data = [("offset", uint(64)), ("length", uint(length)), *optional.items(), *([dtype] if objects else [])]
    entry = [("shape", array([uint(d) for d in shape])), ("format", text("dense")),
             ("components", tmap([("data", tmap(data))])), *([] if objects else [dtype])]
    return root(objects, [("w", tmap(entry))])


def _stored_cases() -> list[tuple[str, bytes, bool, bool | None]]:
    """encoding, digest and uncompressed_length, as the Python fast path (zt_fast._optional) takes them."""
    cases = []
    for objects in (False, True):
        layout = "objects" if objects else "v1.0"
        cases += [
            (f"{layout}: crc32c digest", _stored(objects, digest=text(CRC)), objects, ACCEPTED),
            (f"{layout}: sha256 digest", _stored(objects, digest=text(SHA)), objects, ACCEPTED),
            (f"{layout}: upper-case 0X crc32c", _stored(objects, digest=text("crc32c:0X0000abcd")), objects, ACCEPTED),
            (f"{layout}: short crc32c", _stored(objects, digest=text("crc32c:0x0000ABC")), objects, DECLINED),
            (f"{layout}: non-hex sha256", _stored(objects, digest=text("sha256:" + "g" * 64)), objects, DECLINED),
            (f"{layout}: md5 digest", _stored(objects, digest=text("md5:00")), objects, DECLINED),
            (f"{layout}: null digest", _stored(objects, digest=b"\xf6"), objects, DECLINED),
            (f"{layout}: zstd, any stored length", _stored(objects, length=9, encoding=text("zstd")), objects, ACCEPTED),
            (f"{layout}: raw, wrong length", _stored(objects, length=9, encoding=text("raw")), objects, DECLINED),
            (f"{layout}: lz4", _stored(objects, encoding=text("lz4")), objects, DECLINED),
            (f"{layout}: encoding as int", _stored(objects, encoding=uint(1)), objects, DECLINED),
            (f"{layout}: all optional keys", _stored(objects, encoding=text("zstd"), digest=text(CRC),
                                                      **({"uncompressed_length": uint(24)} if objects else {})),
             objects, ACCEPTED),
            ("v1.0: uncompressed_length is not a v1.0 key", _stored(False, encoding=text("zstd"),
                                                                     uncompressed_length=uint(24)), False, DECLINED),
            (f"{layout}: uncompressed_length with zstd", _stored(objects, length=9, encoding=text("zstd"),
                                                                  uncompressed_length=uint(24)),
             objects, ACCEPTED if objects else DECLINED),
            (f"{layout}: uncompressed_length off by one", _stored(objects, length=9, encoding=text("zstd"),
                                                                   uncompressed_length=uint(25)), objects, DECLINED),
            (f"{layout}: raw with uncompressed_length", _stored(objects, uncompressed_length=uint(24)),
             objects, ACCEPTED if objects else DECLINED),
            (f"{layout}: raw, uncompressed_length differs", _stored(objects, uncompressed_length=uint(23)),
             objects, DECLINED),
            (f"{layout}: zstd, product exactly u64 max", _stored_shape(objects, "u8", [3, U64 // 3], encoding=text("zstd"),
                                                                        uncompressed_length=uint(U64 - 1)),
             objects, ACCEPTED if objects else DECLINED),
            (f"{layout}: zstd, product one past u64 max", _stored_shape(objects, "u8", [3, U64 // 3 + 1],
                                                                         encoding=text("zstd"),
                                                                         uncompressed_length=uint(U64 - 1)),
             objects, DECLINED),
            (f"{layout}: zstd, product past u64, no uncompressed_length",
             _stored_shape(objects, "f32", [1 << 62], encoding=text("zstd")), objects, ACCEPTED),
            (f"{layout}: zstd, product past u64, then a zero", _stored_shape(objects, "f32", [1 << 62, 4, 0],
                                                                              encoding=text("zstd"),
                                                                              uncompressed_length=uint(0)),
             objects, ACCEPTED if objects else DECLINED),
            (f"{layout}: zstd, zero dim, uncompressed_length 1", _stored_shape(objects, "f32", [0, 5], encoding=text("zstd"),
                                                                                uncompressed_length=uint(1)),
             objects, DECLINED),
            (f"{layout}: raw, zero dim, digest", _stored_shape(objects, "f32", [U64 - 1, 0], length=0, digest=text(SHA)),
             objects, ACCEPTED),
            (f"{layout}: digest read, then a wrong length", _stored(objects, length=25, digest=text(SHA)),
             objects, DECLINED),
            (f"{layout}: digest read, then an unknown key", _stored(objects, digest=text(SHA), x=uint(1)),
             objects, DECLINED),
            (f"{layout}: digest non-ASCII, 17 bytes", _stored(objects, digest=text("crc32c:0x\u00e90000ab")),
             objects, DECLINED),
            (f"{layout}: digest with a NUL", _stored(objects, digest=text("crc32c:0x0000abc\x00")), objects, DECLINED),
            (f"{layout}: digest twice", _replace(_stored(objects, digest=text(CRC)), text("digest") + text(CRC),
                                                  text("digest") + text(CRC) + text("digest") + text(SHA)),
             objects, DECLINED),
        ]
    return cases
_DIMS_8 = array([uint(1 << 32), uint(1 << 32)])

EDGES: list[tuple[str, bytes, bool, bool | None]] = [
    ("plain", _v10(), False, ACCEPTED),
    ("plain objects", _obj(), True, ACCEPTED),
    ("empty tensors map", _v10([]), False, ACCEPTED),
    ("empty objects map", _obj([]), True, ACCEPTED),
    ("no version", _v10(version=None), False, ACCEPTED),
    ("generator and attributes", _v10(generator="g", attributes=tmap([("k", text("v"))])), False, ACCEPTED),
    ("non-minimal heads everywhere", _wide(False), False, ACCEPTED),
    ("non-minimal heads everywhere, objects", _wide(True), True, ACCEPTED),
    ("non-minimal 0x18 0x05", _v10([("w", v10_entry("uint8", [5], 64, 5).replace(b"\x81\x05", b"\x81\x18\x05"))]),
     False, ACCEPTED),
    ("many tensors sharing shapes", _v10([(f"t{i}", v10_entry("int16", [i % 3, 2], 64, 4 * (i % 3)))
                                          for i in range(40)]), False, ACCEPTED),
    ("names of any text", _v10([(n, E10) for n in ["", "\x00", "\uffff", "\U0001f600", "a" * 300]]), False,
     ACCEPTED),
    ("offset and length u64 max", _v10([("w", v10_entry("uint8", [U64 - 1], U64 - 1, U64 - 1))]), False, ACCEPTED),
    ("zero dim beside a huge one", _v10([("w", v10_entry("float64", [0, U64 - 1], 0, 0))]), False, ACCEPTED),
    ("product past u64", _v10([("w", _replace(v10_entry("float32", [], 0, 0), b"\x80", _DIMS_8))]), False, DECLINED),
    ("product past u64, then a zero", _v10([("w", _replace(v10_entry("float32", [], 0, 0), b"\x80",
                                                           array([uint(1 << 32), uint(1 << 32), uint(0)])))]),
     False, ACCEPTED),
    ("product exactly 2**64", _v10([("w", v10_entry("uint16", [1 << 63], 0, 0))]), False, DECLINED),
    ("64 dims", _v10([("w", v10_entry("uint8", [1] * 64, 0, 1))]), False, ACCEPTED),
    ("65 dims", _v10([("w", v10_entry("uint8", [1] * 65, 0, 1))]), False, DECLINED),
    ("length off by one", _v10([("w", v10_entry("float32", [2, 3], 64, 25))]), False, DECLINED),
    ("unknown dtype", _v10([("w", v10_entry("float128", [2], 64, 32))]), False, DECLINED),
    ("short dtype in v1.0", _v10([("w", v10_entry("f32", [2], 64, 8))]), False, DECLINED),
    ("long dtype in objects", _obj([("w", obj_entry("float32", [2], 64, 8))]), True, DECLINED),
    ("v1.0 entry in objects", _obj([("w", E10)]), True, DECLINED),
    ("objects entry in v1.0", _v10([("w", EOB)]), False, DECLINED),
    ("v1.0 root in objects file", _v10(), True, DECLINED),
    ("objects root in v1.0 file", _obj(), False, DECLINED),
    ("version 2.0", _v10(version="2.0"), False, ACCEPTED),
    ("version 1.9", _v10(version="1.9"), False, ACCEPTED),
    ("version not semver", _v10(version="one"), False, ACCEPTED),
    ("version an int", _replace(_v10(), text("1.0"), uint(1)), False, DECLINED),
    ("attributes an int", _v10(attributes=uint(5)), False, ACCEPTED),
    ("attributes an array", _v10(attributes=array([uint(5)])), False, ACCEPTED),
    ("attributes null", _v10(attributes=b"\xf6"), False, ACCEPTED),
    ("attributes with a duplicate key", _v10(attributes=b"\xa2\x61k\x01\x61k\x02"), False, ACCEPTED),
    ("attributes with an invalid simple value", _v10(attributes=b"\xa1\x61k\xf8\x10"), False, ACCEPTED),
    ("attributes with a stray break", _v10(attributes=b"\xa1\x61k\xff"), False, DECLINED),
    ("attributes with a reserved head", _v10(attributes=b"\xa1\x61k\x1c"), False, DECLINED),
    ("attributes with a tag of an indefinite head", _v10(attributes=b"\xa1\x61k\xdf\x01"), False, DECLINED),
    ("attributes of every kind", _v10(attributes=tmap([
        ("u", uint(7, 8)), ("n", head(1, U64 - 1)), ("h", b"\xf9\x7e\x00"), ("f", b"\xfa\x3f\xc0\x00\x00"),
        ("d", b"\xfb" + struct.pack(">d", -0.0)), ("t", b"\xf5"), ("z", b"\xf6"), ("u2", b"\xf7"),
        ("s", b"\xf8\xff"), ("b", b"\x43abc"), ("ib", b"\x5f\x41a\x40\xff"), ("it", b"\x7f\x61a\x60\xff"),
        ("ia", b"\x9f\x01\x9f\xff\xff"), ("im", b"\xbf\x61k\xbf\xff\xff"), ("big", b"\xc2\x49\x01" + bytes(8)),
        ("neg", b"\xc3\x41\x05"), ("set", b"\xd9\x01\x02\x82\x01\x02"), ("tag", b"\xd9\x03\xe8\x81\x01"),
        ("deep tag", b"\xdb" + b"\xff" * 8 + b"\x01"), ("shared", b"\xd8\x1c\x82\x01\xd8\x1d\x00"),
        ("strref", b"\xd9\x01\x00\x83\x63abc\xd8\x19\x00\x63abc"), ("date", b"\xc1\x1a\x5f\x00\x00\x00"),
        ("keys", b"\xa3\x80\x01\xa0\x02\xf9\x3c\x00\x03"), ("nested", b"\xa1\x61a\x81\xa1\x61b\x80"),
        ("self", b"\xd9\xd9\xf7\x82\x01\x02"), ("re", b"\xd8\x23\x63a.b"), ("uuid", b"\xd8\x25\x50" + bytes(16)),
    ])), False, ACCEPTED),
    ("attributes nested 63 deep", _v10(attributes=b"\x81" * 63 + b"\x01"), False, ACCEPTED),
    ("attributes nested 64 deep", _v10(attributes=b"\x81" * 64 + b"\x01"), False, DECLINED),
    ("attributes nested 64 deep, empty", _v10(attributes=b"\x81" * 63 + b"\x80"), False, ACCEPTED),
    ("attributes nested 65 deep, empty", _v10(attributes=b"\x81" * 64 + b"\x80"), False, DECLINED),
    ("attributes of 64 tags", _v10(attributes=b"\xd9\x03\xe8" * 64 + b"\x01"), False, DECLINED),
    ("attributes of 63 tags", _v10(attributes=b"\xd9\x03\xe8" * 63 + b"\x01"), False, ACCEPTED),
    ("attributes of indefinite arrays 64 deep", _v10(attributes=b"\x9f" * 64 + b"\xff" * 64), False, EITHER),
    ("attributes 63 deep around an indefinite text", _v10(attributes=b"\x81" * 62 + b"\x7f\x61a\xff"), False, EITHER),
    ("duplicate root key", _v10(generator="g").replace(b"\x69generator\x61g", b"\x67version\x63" + b"1.0"), False,
     DECLINED),
    ("duplicate attributes", tmap([("attributes", b"\xa0"), ("attributes", b"\xa0"), ("tensors", tmap([]))]), False,
     DECLINED),
    ("duplicate tensors", tmap([("tensors", tmap([])), ("tensors", tmap([("w", E10)]))]), False, DECLINED),
    ("duplicate name", _v10([("w", E10), ("w", v10_entry("uint8", [1], 0, 1))]), False, DECLINED),
    ("duplicate entry key", _v10([("w", _replace(E10, b"\xa4\x65dtype", b"\xa5\x66format\x65dense\x65dtype"))]),
     False, DECLINED),
    ("duplicate data key", _v10([("w", _replace(E10, b"\xa2\x66offset", b"\xa3\x66length\x18\x18\x66offset"))]),
     False, DECLINED),
    ("unknown root key", tmap([("x", uint(1)), ("tensors", tmap([("w", E10)]))]), False, DECLINED),
    ("no tensors", tmap([("version", text("1.0"))]), False, DECLINED),
    ("empty root", b"\xa0", False, DECLINED),
    ("root an array", array([_v10()]), False, DECLINED),
    ("root tagged", tag(55799, _v10()), False, DECLINED),
    ("root in a stringref namespace", tag(256, _v10()), False, DECLINED),
    ("indefinite root", b"\xbf" + _v10()[1:] + b"\xff", False, DECLINED),
    ("indefinite tensors map", _replace(_v10(), b"\x67tensors\xa1", b"\x67tensors\xbf") + b"\xff", False, DECLINED),
    ("indefinite entry", _v10([("w", b"\xbf" + E10[1:] + b"\xff")]), False, DECLINED),
    ("indefinite shape", _v10([("w", _replace(E10, b"\x82\x02\x03", b"\x9f\x02\x03\xff"))]), False, DECLINED),
    ("indefinite name", _replace(_v10(), b"\x61w", b"\x7f\x61w\xff"), False, DECLINED),
    ("indefinite version", _replace(_v10(), b"\x631.0", b"\x7f\x631.0\xff"), False, DECLINED),
    ("tagged version", _replace(_v10(), b"\x631.0", b"\xd8\x20\x631.0"), False, DECLINED),
    ("tagged name", _replace(_v10(), b"\x61w", b"\xd9\x03\xe8\x61w"), False, DECLINED),
    ("tagged dim", _v10([("w", _replace(E10, b"\x82\x02\x03", b"\x82\xc2\x41\x02\x03"))]), False, DECLINED),
    ("tagged shape", _v10([("w", _replace(E10, b"\x82\x02\x03", b"\xd9\x01\x02\x82\x02\x03"))]), False, DECLINED),
    ("tagged entry", _v10([("w", tag(1000, E10))]), False, DECLINED),
    ("invalid UTF-8 name", _replace(_v10(), b"\x61w", b"\x61\xff"), False, DECLINED),
    ("surrogate name", _replace(_v10(), b"\x61w", b"\x63\xed\xa0\x80"), False, DECLINED),
    ("overlong name", _replace(_v10(), b"\x61w", b"\x62\xc0\x80"), False, DECLINED),
    ("invalid UTF-8 version", _replace(_v10(), b"\x631.0", b"\x631.\xff"), False, DECLINED),
    ("invalid UTF-8 generator", _v10(generator="\x00").replace(b"generator\x61\x00", b"generator\x61\x80"), False,
     DECLINED),
    ("invalid UTF-8 dtype", _v10([("w", _replace(E10, b"\x67float32", b"\x67float3\xb2"))]), False, DECLINED),
    ("invalid UTF-8 attributes key", _v10(attributes=b"\xa1\x61\xff\x01"), False, ACCEPTED),
    ("name a byte string", _replace(_v10(), b"\x61w", b"\x41w"), False, DECLINED),
    ("name an int", _replace(_v10(), b"\x61w", b"\x01"), False, DECLINED),
    ("dtype a byte string", _v10([("w", _replace(E10, b"\x67float32", b"\x47float32"))]), False, DECLINED),
    ("format Dense", _v10([("w", _replace(E10, b"\x65dense", b"\x65Dense"))]), False, DECLINED),
    ("format sparse_coo", _v10([("w", _replace(E10, b"\x65dense", b"\x6asparse_coo"))]), False, DECLINED),
    ("format with a NUL", _v10([("w", _replace(E10, b"\x65dense", b"\x66dense\x00"))]), False, DECLINED),
    ("two components", _v10([("w", _replace(E10, b"\xa1\x64data\xa2\x66offset\x18\x40\x66length\x18\x18",
                                             b"\xa2\x64data\xa2\x66offset\x18\x40\x66length\x18\x18\x61x\x01"))]),
     False, DECLINED),
    ("optional encoding key", _v10([("w", _replace(E10, b"\xa2\x66offset", b"\xa3\x68encoding\x63raw\x66offset"))]),
     False, ACCEPTED),
    *_stored_cases(),
    ("negative offset", _v10([("w", _replace(E10, b"\x66offset\x18\x40", b"\x66offset\x38\x40"))]), False, DECLINED),
    ("float offset", _v10([("w", _replace(E10, b"\x66offset\x18\x40", b"\x66offset\xf9\x54\x00"))]), False, DECLINED),
    ("bool dim", _v10([("w", _replace(E10, b"\x82\x02\x03", b"\x82\xf5\x03"))]), False, DECLINED),
    ("null length", _v10([("w", _replace(E10, b"\x66length\x18\x18", b"\x66length\xf6"))]), False, DECLINED),
    ("bignum length", _v10([("w", _replace(E10, b"\x66length\x18\x18", b"\x66length\xc2\x41\x18"))]), False,
     DECLINED),
    ("indefinite-length int", _v10([("w", _replace(E10, b"\x66length\x18\x18", b"\x66length\x1f"))]), False,
     DECLINED),
    ("trailing byte", _v10() + b"\x00", False, DECLINED),
    ("trailing item", _v10() + b"\xa0", False, DECLINED),
    ("root count past the end", b"\xbb" + b"\xff" * 8 + _v10()[1:], False, DECLINED),
    ("root count one more", b"\xa3" + _v10()[1:], False, DECLINED),
    ("tensors count huge", _replace(_v10(), b"\x67tensors\xa1", b"\x67tensors\xbb" + b"\xff" * 8), False, DECLINED),
    ("shape count huge", _v10([("w", _replace(E10, b"\x82\x02\x03", b"\x9b" + b"\xff" * 8 + b"\x02\x03"))]), False,
     DECLINED),
    ("shape count 2**32", _v10([("w", _replace(E10, b"\x82\x02\x03", b"\x9a\x00\x00\x00\x01\x02"))]), False,
     DECLINED),
    ("text length huge", _replace(_v10(), b"\x61w", b"\x7b" + b"\xff" * 8 + b"w"), False, DECLINED),
    ("text length past the end", _replace(_v10(), b"\x631.0", b"\x7a\x00\x01\x00\x001.0"), False, DECLINED),
    ("key length 2**63", _replace(_v10(), b"\x67tensors", b"\x7b\x80" + bytes(7) + b"tensors"), False, DECLINED),
]


@pytest.mark.parametrize("manifest, objects, accepted", [case[1:] for case in EDGES], ids=[case[0] for case in EDGES])
def test_edges(manifest, objects, accepted):
    got = check_manifest(manifest, objects)
    if accepted is not None:
        assert (got is not None) == accepted


# ------------------------------------------------------------------------ optional component keys, random

_HEXCHARS = "0123456789abcdefABCDEF"
_DIM_CHOICES = [0, 1, 2, 3, 7, 1 << 16, 1 << 32, 1 << 63, U64 - 1]


@st.composite
def _digest_items(draw: Any) -> tuple[bytes, bool]:
    """(CBOR item, whether digest_problem accepts it): valid crc32c/sha256 in any case, and near misses."""
    hexes = lambda n: st.text(st.sampled_from(_HEXCHARS), min_size=n, max_size=n)
    kind = draw(st.integers(-2, 9))  # half of them valid
    if kind <= 0:
        return text("crc32c:0" + draw(st.sampled_from("xX")) + draw(hexes(8))), True
    if kind == 1 or kind == -2:
        return text("sha256:" + draw(hexes(64))), True
    if kind == 2:  # wrong length
        algo, n = draw(st.sampled_from([("crc32c:0x", 8), ("sha256:", 64)]))
        return text(algo + draw(hexes(n + draw(st.sampled_from([-1, 1, 2, -n]))))), False
    if kind == 3:  # one character replaced by a non-hex one (non-ASCII too, same number of code points)
        value = draw(st.sampled_from(["crc32c:0x" + "ab12CD34", "sha256:" + "0f" * 32]))
        at = draw(st.integers(0, len(value) - 1))
        odd = draw(st.sampled_from(["g", "G", ":", " ", "\x00", "\u00e9", "\uff10", "\U0001f600", "x", "-"]))
        changed = value[:at] + odd + value[at + 1:]
        return text(changed), changed == value or (odd == "x" and at == 8 and value.startswith("crc"))
    if kind == 4:  # the same bytes, but not valid UTF-8 or not text
        value = draw(st.sampled_from([b"crc32c:0x0000abcd", b"sha256:" + b"ab" * 32]))
        at = draw(st.integers(0, len(value) - 1))
        changed = value[:at] + bytes([draw(st.sampled_from([0x80, 0xc3, 0xff]))]) + value[at + 1:]
        return draw(st.sampled_from([text(changed), head(2, len(value)) + value])), False
    if kind == 5:
        return draw(st.sampled_from([text("md5:00"), text("crc32:0x0000abcd"), text("CRC32C:0x0000abcd"),
                                     text("sha256" + "0" * 64), text(""), text(":"), text("crc32c:0x"),
                                     text("crc32c:00x0000abcd"), text("crc32c:0x0000abcd "),
                                     text("crc32c::0x000abcd")])), False
    if kind == 6:
        return draw(st.sampled_from([uint(0), b"\xf6", b"\xf5", array([]), tmap([])])), False
    if kind == 7:  # indefinite-length or tagged valid text: cbor2 accepts it, C need not
        value = "crc32c:0x0000abcd"
        return draw(st.sampled_from([b"\x7f" + text(value) + b"\xff", tag(1000, text(value))])), None
    if kind == 8:  # non-minimal text head
        return text("sha256:" + "A" * 64, draw(st.sampled_from([1, 2, 4, 8]))), True
    return text("crc32c:0x" + draw(st.text(st.characters(codec="utf-8"), min_size=8, max_size=8))), None


@st.composite
def _optional_entry(draw: Any, objects: bool) -> tuple[bytes, bool]:
    """(entry, whether it holds an item C may decline whatever its value: null, tagged or indefinite-length)."""
    table = ITEMSIZE[objects]
    dtype = draw(st.sampled_from(SHORT_NAMES if objects else V10_NAMES))
    shape = draw(st.lists(st.sampled_from(_DIM_CHOICES), max_size=4))
    nbytes = table[dtype] * math.prod(shape)
    near = lambda n: st.sampled_from([n - 1, n, n + 1]).filter(lambda v: 0 <= v < U64)
    sized = nbytes < U64
    length = draw(st.one_of(st.just(nbytes), near(nbytes), st.integers(0, U64 - 1)) if sized
                  else st.integers(0, U64 - 1))
    data = [("offset", uint(draw(st.sampled_from([0, 64, U64 - 1]))))]
    data.append(("length", uint(length)))
    if objects:
        data.append(("dtype", text(dtype)))
    odd = False
    if draw(st.booleans()):
        encoding = draw(st.sampled_from([text("raw"), text("raw"), text("zstd"), text("zstd"), text("zstd"),
                                         text("zstd"), text("RAW"), text("zst"),
                                         text("zstd\x00"), uint(0), b"\xf6", text("raw", 1), b"\x7f\x63raw\xff"]))
        odd |= encoding == b"\x7f\x63raw\xff"
        data.append(("encoding", encoding))
    if draw(st.booleans()):
        digest, valid = draw(_digest_items())
        odd |= valid is None or digest == b"\xf6"
        data.append(("digest", digest))
    if draw(st.booleans()) if objects else draw(st.integers(0, 9)) == 0:
        pick = st.one_of(st.just(nbytes), st.just(length), near(nbytes), near(length)) if sized else near(length)
        uncompressed = draw(st.one_of(pick.map(uint), st.sampled_from([uint(0), uint(U64 - 1), head(1, 0), b"\xf6",
                                                                       b"\xc2\x41\x18"])))
        odd |= uncompressed in (b"\xf6", b"\xc2\x41\x18")
        data.append(("uncompressed_length", uncompressed))
    if draw(st.integers(0, 9)) == 0:
        data.append(draw(st.sampled_from([("type", text("f32")), ("x", uint(1)), ("digest", text(CRC)),
                                          ("encoding", text("raw"))])))
    data = draw(st.permutations(data))
    entry = [("shape", array([uint(d) for d in shape])), ("format", text("dense")),
             ("components", tmap([("data", tmap(data))]))]
    if not objects:
        entry.append(("dtype", text(dtype)))
    return tmap(draw(st.permutations(entry))), odd


def _fast_path_takes(manifest: bytes, objects: bool) -> bool:
    """Whether cbor2 decodes the manifest (no repeated keys) and the Python fast loop takes every entry, with no
    more than 64 dims."""
    try:
        decoded, used = _decode(memoryview(manifest), allow_duplicate_keys=False)
    except _DECODE_FAILURES:
        return False
    entries = decoded["objects" if objects else "tensors"]
    loop = zt_fast._objects_loop if objects else zt_fast._v10_loop
    if used != len(manifest) or None in loop(entries.items(), _sentinel, 0):
        return False
    return all(len(entry["shape"]) <= 64 for entry in entries.values())


@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
@settings(max_examples=400, deadline=None, database=None)
@given(data=st.data())
def test_random_optional_component_keys(objects, data):
    """Entries with random subsets and values of encoding, digest and uncompressed_length (valid and invalid
    digests, sizes around the right one, zero and huge dims) open the same with and without C, C accepts only
    what the Python fast path takes (oracle), and takes all of it (bar null, tagged and indefinite-length
    values, which it declines)."""
    entries = data.draw(st.lists(_optional_entry(objects), min_size=1, max_size=2))
    manifest = root(objects, [(f"t{i}", entry) for i, (entry, _) in enumerate(entries)])
    got = check_manifest(manifest, objects)
    if not any(odd for _, odd in entries) and _fast_path_takes(manifest, objects):
        assert got is not None, f"declined entries the Python fast path takes: {manifest.hex()}"


@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
@settings(max_examples=300, deadline=None, database=None)
@given(data=st.data())
def test_random_digests(objects, data):
    """A digest C accepts is exactly one digest_problem accepts; one it accepts C reads (in plain text)."""
    item, valid = data.draw(_digest_items())
    manifest = _stored(objects, digest=item)
    got = check_manifest(manifest, objects)
    if valid is not None:
        try:
            value = _decode(memoryview(item), allow_duplicate_keys=False)[0]
        except _DECODE_FAILURES:
            value = None
        assert valid == (type(value) is str and digest_problem(value) is None), (item, value)
        assert (got is not None) == valid, item


@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
def test_every_prefix_declines_and_opens_the_same(objects):
    manifest = root(objects, [("a", v10_entry("int8", [3], 64, 3) if not objects else obj_entry("i8", [3], 64, 3)),
                              ("b", E10 if not objects else EOB)], generator="g",
                    attributes=tmap([("k", b"\x9f\x01\xff"), ("j", text("v"))]))
    assert direct(manifest, objects) is not None
    for end in range(len(manifest)):
        assert direct(manifest[:end], objects) is None
        both_ways(zt_file(manifest[:end], objects))


@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
def test_every_key_order_is_accepted(objects):
    """All orders of the entry's keys and of the data component's keys, and of the root's members."""
    dtype = ("dtype", text("f32" if objects else "float32"))
    data = [("offset", uint(64)), ("length", uint(24)), *([dtype] if objects else [])]
    entry = [("shape", array([uint(2), uint(3)])), ("format", text("dense")), *([] if objects else [dtype])]
    expected = None
    for data_order in itertools.permutations(data):
        for entry_order in itertools.permutations([*entry, ("components", tmap([("data", tmap(list(data_order)))]))]):
            manifest = root(objects, [("w", tmap(list(entry_order)))])
            got = direct(manifest, objects)
            assert got is not None
            expected = expected or got
            assert [raw(t) for t in got[1]] == [raw(t) for t in expected[1]]
    members = [("version", text("1.0")), ("generator", text("g")), ("attributes", tmap([("k", text("v"))])),
               ("objects" if objects else "tensors", tmap([("w", tmap(entry + [("components", tmap([
                   ("data", tmap(data))]))]))]))]
    for order in itertools.permutations(members):
        check_manifest(tmap(list(order)), objects, must_accept=True)


def test_attributes_nested_too_deeply_give_the_same_fatal_error():
    for attributes in (b"\x81" * 64 + b"\x01", b"\xa1\x61k" * 64 + b"\xa0", b"\xd9\x03\xe8" * 64 + b"\x01",
                       b"\x81" * 64 + b"\x80", b"\x9f" * 65 + b"\xff" * 65):
        tf = both_ways(zt_file(_v10(attributes=attributes), False))
        assert not tf.readable and "nested deeper" in str(tf.problems[0]), tf.problems
    tf = both_ways(zt_file(_v10(attributes=b"\x81" * 62 + b"\x80"), False))
    assert tf.readable and any("'attributes' must be a map" in str(p) for p in tf.problems)


def test_what_the_full_path_reports_is_kept():
    """A declined manifest still gets its problems from cbor2 (trailing bytes, duplicate keys), an accepted one
    from the layout reader (version, attributes)."""
    tf = both_ways(zt_file(_v10() + b"\x00", False))
    assert any("trailing" in str(p) for p in tf.problems) and tf.tensors
    tf = both_ways(zt_file(_v10([("w", E10), ("w", E10)]), False))
    assert any("duplicate" in str(p) for p in tf.problems) and len(tf.tensors) == 1
    tf = both_ways(zt_file(_v10(version="1.9"), False))
    assert any("newer" in str(p) for p in tf.problems)
    tf = both_ways(zt_file(_v10(version="2.0"), False))
    assert not tf.readable
    tf = both_ways(zt_file(_v10(attributes=uint(5)), False))
    assert any("attributes" in str(p) for p in tf.problems)
    tf = both_ways(zt_file(_replace(_v10(), b"\x61w", b"\x61\xff"), False))
    assert not tf.readable


# --------------------------------------------------------------------------------- the direct path is taken

ARRAYS = {"w": np.zeros((2, 3), np.float32), "b": np.arange(4, dtype=np.int16), "s": np.float64(1.0),
          "e": np.zeros((0, 5), np.uint8), "flags": np.array([True, False])}


def _manifest_of(data: bytes, objects: bool) -> bytes:
    end = len(data) - (16 if objects else 8)
    (size,) = struct.unpack("<Q", data[end:end + 8])
    return data[end - size:end]


@pytest.mark.parametrize("to, objects", [("zt", False), ("zt-objects", True)])
def test_writer_files_are_read_directly(tmp_path, monkeypatch, to, objects):
    from ztviewer.codec.writers.arrays import save_arrays

    path = tmp_path / "plain.zt"
    save_arrays(path, ARRAYS, to=to, attributes={"k": "v", "n": "1"})
    data = path.read_bytes()
    manifest = _manifest_of(data, objects)
    got = direct(manifest, objects)
    assert got is not None, "the C reader declined a writer's plain manifest"
    oracle(manifest, objects, got)
    assert sorted(t.name for t in got[1]) == sorted(ARRAYS)

    def no_cbor2(*args: Any) -> Any:
        raise AssertionError("cbor2 decoded the manifest: the direct path was not taken")

    monkeypatch.setattr(zt, "decode_manifest", no_cbor2)
    with_c = registry.open_file(path)
    monkeypatch.undo()
    with pure_python():
        without = registry.open_file(path)
    same_file(with_c, without)
    assert with_c.attributes == {"k": "v", "n": "1"} and not list(with_c.all_problems())
    for t in with_c.tensors:
        assert np.array_equal(t_read(with_c, t.name), ARRAYS[t.name])


def t_read(tf: TensorFile, name: str) -> Any:
    from ztviewer.codec.decode import to_dense

    return to_dense(tf, tf.tensor(name))


# ------------------------------------------------------------------------------------------------ leaks

def _fresh(s: str) -> str:
    return (s + "!")[:-1]  # an equal string that no one else holds


def _tables() -> dict[bool, dict]:
    """Copies of the dtype tables whose values no one else holds, to count references to exactly."""
    return {objects: {key: (_fresh(canonical), size) for key, (canonical, size) in PLAIN_DTYPES[objects].items()}
            for objects in (False, True)}


def _no_leak(calls: list[Callable[[], Any]], watched: list[Any]) -> None:
    assert_no_leak(calls, watched, rounds=6000, warmup=20)


def _leak_manifests() -> list[tuple[bytes, bool]]:
    entries = [(f"t{i}", v10_entry("float32", [2, i], 64 * i, 8 * i)) for i in range(5)]
    objs = [(f"t{i}", obj_entry("f32", [2, i], 64 * i, 8 * i)) for i in range(5)]
    attributes = tmap([("k", text("v")), ("deep", b"\x81" * 10 + b"\x80"), ("tag", b"\xd9\x03\xe8\x01")])
    good = root(False, entries, generator="g", attributes=attributes)
    return [
        (good, False),                                                              # accepted
        (root(True, objs, attributes=attributes), True),                           # accepted
        (root(False, [*entries, ("x", v10_entry("float32", [2], 0, 9))]), False),  # all built, the last declines
        (root(False, [*entries, ("t0", E10)]), False),                             # a repeated name at the end
        (_replace(root(False, [*entries, ("zzz", E10)]), b"zzz", b"\xff\xfe\xfd"), False),      # bad UTF-8
        (root(False, [*entries, ("x", E10)], attributes=attributes).replace(b"float32", b"float3\xff"), False),
        (good + b"\x00", False),                                                    # trailing
        (good[:-3], False),                                                         # truncated
        (good, True),                                                               # the other layout
        (root(False, entries, attributes=b"\x81" * 70 + b"\x01"), False),           # attributes too deep
        (root(False, entries, attributes=b"\x81" * 63 + b"\x01"), False),           # deep, accepted
        (b"", False),
        (b"\xbf\xff", False),
        *_stored_leak_manifests(),
    ]


def _stored_leak_manifests() -> list[tuple[bytes, bool]]:
    """Digests, encodings and uncompressed lengths: accepted, and declined after the digest was read."""
    return [
        (_stored(False, length=9, encoding=text("zstd"), digest=text(SHA)), False),              # accepted
        (_stored(True, length=9, encoding=text("zstd"), digest=text(CRC), uncompressed_length=uint(24)), True),
        (_stored(True, length=25, digest=text(SHA)), True),                                      # declined
        (_stored(False, digest=text(CRC), x=uint(1)), False),
        (_replace(_stored(True, digest=text(CRC)), text("digest") + text(CRC),
                  text("digest") + text(CRC) + text("digest") + text(SHA)), True),
    ]


def test_zt_manifest_does_not_leak():
    tables = _tables()
    manifests = _leak_manifests()
    expected = [None if direct(m, o) is None else True for m, o in manifests]
    assert expected[:2] == [True, True] and expected[2:10] == [None] * 8 and expected[10]

    def bad_args(*args: Any) -> Callable[[], Any]:
        def call() -> None:
            with pytest.raises(TypeError):
                NATIVE.zt_manifest(*args)
        return call

    calls = [(lambda m=m, o=o: NATIVE.zt_manifest(m, o, tables[o])) for m, o in manifests]
    calls += [bad_args(bytearray(manifests[0][0]), False, tables[False]), bad_args(manifests[0][0], False, []),
              bad_args(manifests[0][0]), bad_args("text", False, tables[False])]
    watched = [tables[False], tables[True], *(m for m, _ in manifests)]
    for table in tables.values():
        watched += [*table.values(), *(canonical for canonical, _ in table.values())]
    _no_leak(calls, watched)


def test_zt_manifest_holds_exactly_what_its_tensors_hold():
    tables = _tables()
    canonical = tables[False]["float32"][0]
    manifest = root(False, [(f"t{i}", v10_entry("float32", [2, 3], 64 * i, 24)) for i in range(7)],
                    attributes=tmap([("k", text("v"))]))
    before = sys.getrefcount(canonical)
    fields, tensors = NATIVE.zt_manifest(manifest, False, tables[False])
    assert sys.getrefcount(canonical) == before + 2 * 7  # the dtype slot and the deferred component of each
    assert all(t.dtype is canonical and t._data[5] is canonical for t in tensors)
    assert all(t.shape is tensors[0].shape for t in tensors), "equal shapes share one tuple within a call"
    assert {sys.getrefcount(t) for t in tensors} == {3}  # the list's, the loop's and getrefcount's
    assert sys.getrefcount(fields) == 2 and sys.getrefcount(tensors) == 2
    del tensors
    assert sys.getrefcount(canonical) == before
    declined = NATIVE.zt_manifest(manifest + b"\x00", False, tables[False])
    assert declined is None and sys.getrefcount(canonical) == before


@pytest.mark.parametrize("objects", [False, True], ids=["v1.0", "objects"])
def test_zt_manifest_survives_finalizers_that_change_the_dtype_table(objects):
    """The collector may run while tensors are built, and a finalizer may then replace the table's entries: the
    dtype taken from the table must be held from the moment it is looked up. (Shapes of more than 20 dims:
    smaller tuples come from a free list and never start the collector.) Was a use-after-free, seen with ASan."""
    table = _tables()[objects]
    shape = [2] + [1] * 24
    make = obj_entry if objects else v10_entry
    manifest = root(objects, [(f"t{i}", make("f32" if objects else "float32", shape, 8 * i, 8)) for i in range(100)])
    expected = [raw(t) for t in NATIVE.zt_manifest(manifest, objects, table)[1]]
    churning = True

    class Churn:
        def __init__(self) -> None:
            self.cycle = self

        def __del__(self) -> None:
            for key, (canonical, size) in table.items():
                table[key] = (_fresh(canonical), size)
            if churning:
                Churn()

    threshold = gc.get_threshold()
    Churn()
    gc.set_threshold(1)
    try:
        for _ in range(4):
            got = NATIVE.zt_manifest(manifest, objects, table)
            assert [raw(t) for t in got[1]] == expected
    finally:
        gc.set_threshold(*threshold)
        churning = False
        gc.collect()


def test_zt_manifest_under_failing_allocations():
    """Whichever allocation fails, the call raises MemoryError or gives the full answer: never a crash, a
    SystemError (an error returned without an exception, or a result with one set) nor a silent decline."""
    _testcapi = pytest.importorskip("_testcapi")
    tables = _tables()
    for manifest, objects in [*_leak_manifests()[:4], *_stored_leak_manifests()[:3]]:
        expected = NATIVE.zt_manifest(manifest, objects, tables[objects])
        shown_expected = shown(expected) if expected is None else [raw(t) for t in expected[1]]
        failures = 0
        for k in range(400):
            _testcapi.set_nomemory(k, k + 1)
            try:
                got = NATIVE.zt_manifest(manifest, objects, tables[objects])
            except MemoryError:
                got = MemoryError
            finally:
                _testcapi.remove_mem_hooks()
            if got is MemoryError:
                failures += 1
            else:
                assert (shown(got) if got is None else [raw(t) for t in got[1]]) == shown_expected, k
        assert failures > 0


# ------------------------------------------------------------------------------------------- mutation fuzz

def _seeds() -> list[tuple[bytes, bool]]:
    r = random.Random(7)
    seeds = [(m, o) for m, o in _leak_manifests()[:2]]
    seeds += [(_wide(False), False), (_wide(True), True)]
    seeds += [(case[1], case[2]) for case in EDGES if case[0] == "attributes of every kind"]
    for objects in (False, True):
        made = 0
        while made < 4:
            m = Maker(r, 0).manifest(objects)
            if direct(m, objects) is not None:
                seeds.append((m, objects))
                made += 1
    return seeds


SEEDS = _seeds() if NATIVE is not None else []
_INTERESTING = [0x00, 0x17, 0x18, 0x1B, 0x1C, 0x1F, 0x20, 0x3B, 0x40, 0x5F, 0x60, 0x7B, 0x7F, 0x80, 0x9B, 0x9F, 0xA0,
                0xBB, 0xBF, 0xC0, 0xC2, 0xD8, 0xDB, 0xF4, 0xF6, 0xF8, 0xF9, 0xFB, 0xFF]


def mutate(r: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(r.randint(1, 4)):
        if not b:
            b += r.randbytes(1)
        at = r.randrange(len(b))
        kind = r.randint(0, 8)
        if kind == 0:
            b[at] = r.randrange(256)
        elif kind == 1:
            b[at] ^= 1 << r.randrange(8)
        elif kind == 2:
            del b[at:]
        elif kind == 3:
            b[at:at] = r.randbytes(r.randint(1, 4))
        elif kind == 4:
            del b[at:at + r.randint(1, 8)]
        elif kind == 5:
            other = r.choice(SEEDS)[0]
            start = r.randrange(len(other))
            b[at:at + r.randint(0, 8)] = other[start:start + r.randint(1, 24)]
        elif kind == 6:
            b[at] = (b[at] & 0xE0) | r.choice([24, 25, 26, 27, 28, 31])  # another head width, or a bad one
        elif kind == 7:
            b[at] = r.choice(_INTERESTING)
        else:
            b[at] = (b[at] + r.choice([-2, -1, 1, 2])) % 256               # a count or length one off
    return bytes(b)


@settings(max_examples=300, deadline=None, database=None)
@given(seed=st.integers(0, 2 ** 64))
def test_mutated_manifests(seed):
    """Mutants of accepted manifests, fed to the C reader directly (40 per example): it never crashes, and
    when it accepts, cbor2 and the Python loop agree and the file opens the same with and without C."""
    r = random.Random(seed)
    for _ in range(40):
        manifest, objects = r.choice(SEEDS)
        mutant = mutate(r, manifest)
        for layout in (objects, not objects):
            got = direct(mutant, layout)
            oracle(mutant, layout, got)
            if got is not None or r.random() < 0.05:
                both_ways(zt_file(mutant, layout))
