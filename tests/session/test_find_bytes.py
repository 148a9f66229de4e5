"""Hex find: patterns from hex / text / typed values, chunked search both ways (chunk edges, cancel, progress),
and byte-range copies that evaluate back to the same bytes."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from ztviewer.codec.source import InMemorySource, Source
from ztviewer.session.byte_copy import (
    COPY_LIMIT,
    CopyTooLarge,
    as_c_array,
    as_hex,
    as_python_bytes,
    check_size,
)
from ztviewer.session.find_bytes import BadPattern, find, find_wrapping, pattern_bytes


def test_hex_and_text_patterns():
    assert pattern_bytes("hex", "DE AD be:ef") == b"\xde\xad\xbe\xef"
    assert pattern_bytes("hex", "0x0a,0xFF") == b"\x0a\xff"
    assert pattern_bytes("text", "héllo") == "héllo".encode()
    with pytest.raises(BadPattern, match="whole hex bytes"):
        pattern_bytes("hex", "ABC")
    with pytest.raises(BadPattern, match="whole hex bytes"):
        pattern_bytes("hex", "GG")


@pytest.mark.parametrize(("kind", "text", "little", "expected"), [
    ("u16", "0x1234", True, b"\x34\x12"), ("u16", "4660", False, b"\x12\x34"),
    ("i8", "-1", True, b"\xff"), ("u64", "1", False, b"\0" * 7 + b"\1"),
    ("i32", "-2", True, struct.pack("<i", -2)), ("f32", "1.5", True, struct.pack("<f", 1.5)),
    ("f64", "-0.25", False, struct.pack(">d", -0.25)), ("f16", "1", True, b"\x00\x3c"),
    ("bf16", "1", True, b"\x80\x3f"), ("bf16", "-2", False, b"\xc0\x00"),
    ("bf16", "3.140625", True, np.array([3.140625], np.float32).view(np.uint32).astype(np.uint32).__rshift__(16)
     .astype("<u2").tobytes()),
])
def test_typed_values_in_either_byte_order(kind, text, little, expected):
    assert pattern_bytes(kind, text, little) == expected


def test_typed_values_out_of_range_or_not_numbers_say_why():
    with pytest.raises(BadPattern, match="does not fit u8"):
        pattern_bytes("u8", "256")
    with pytest.raises(BadPattern, match="not an integer"):
        pattern_bytes("i16", "1.5")
    with pytest.raises(BadPattern, match="does not fit f16"):
        pattern_bytes("f16", "1e9")


def make(data: bytes) -> Source:
    return InMemorySource(data)


@pytest.mark.parametrize("chunk", [4, 5, 7, 64, 1 << 20])
def test_forward_and_backward_find_every_match_across_chunk_edges(chunk):
    rng = np.random.default_rng(3)
    data = bytearray(rng.integers(0, 200, 500, dtype=np.uint8).tobytes())
    pattern = b"\xfa\xfb\xfc"
    places = [0, 7, 11, 61, 64, 67, 250, 497]
    for p in places:
        data[p:p + 3] = pattern
    source = make(bytes(data))
    found, pos = [], 0
    while (hit := find(source, pattern, pos, chunk=chunk)) is not None:
        found.append(hit)
        pos = hit + 1
    assert found == places
    back, pos = [], len(data)
    while (hit := find(source, pattern, pos, backward=True, chunk=chunk)) is not None:
        back.append(hit)
        pos = hit
    assert back == places[::-1]


def test_wrapping_progress_and_cancel():
    data = b"x" * 1000 + b"NEEDLE" + b"y" * 5000
    source = make(data)
    assert find_wrapping(source, b"NEEDLE", 2000) == (1000, True)
    assert find_wrapping(source, b"NEEDLE", 10, backward=True) == (1000, True)
    assert find_wrapping(source, b"nothing", 0) == (None, False)
    seen = []
    assert find(source, b"zz", 0, chunk=512, progress=lambda done, total: seen.append((done, total))) is None
    assert seen[-1] == (len(data), len(data)) and len(seen) > 5
    calls = []
    assert find(source, b"y", 1100, chunk=16, cancelled=lambda: calls.append(1) or True) is None
    assert calls == [1]


def test_search_reads_bounded_windows():
    class Spy:
        size = 50_000_000
        largest = 0

        def window(self, offset, length):
            Spy.largest = max(Spy.largest, length)
            return bytes(length)

    assert find(Spy(), b"\x01\x02", 0, chunk=1 << 20) is None
    assert Spy.largest <= (1 << 20) + 1


def test_copy_formats_rebuild_the_bytes():
    data = bytes(range(256)) + b"\x00\xff"
    assert as_hex(b"\xde\xad\xbe\xef") == "DE AD BE EF"
    assert bytes.fromhex(as_hex(data).replace("\n", " ")) == data
    assert eval(as_python_bytes(data)) == data
    assert eval(as_python_bytes(b"")) == b""
    c = as_c_array(b"\x01\xab")
    assert c == "const unsigned char data[2] = {\n    0x01, 0xAB\n};\n"
    check_size(COPY_LIMIT)
    with pytest.raises(CopyTooLarge, match="at most 1,048,576 bytes"):
        check_size(COPY_LIMIT + 1)
