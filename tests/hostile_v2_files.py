"""Hostile zTensor v2 files of issue 31, built byte by byte (hand-written CBOR, ``struct.pack``): manifests whose
values re-encode to far more than they take (value sharing, string references) or nest too deep, a footer forged
inside padding claiming a huge manifest, a seek table of millions of entries, thousands of generations."""
from __future__ import annotations

import struct
from pathlib import Path

from tests.codec.formats.v2_builders import MAGIC, assemble, dense, footer
from tests.hostile_values import cbor_array, cbor_map, enc, head, shareable, shared_ref

SEEKABLE = "zt.zstd-seekable/1"


def with_attribute(value: bytes) -> bytes:
    """A manifest of no objects whose one file attribute is ``value`` (raw CBOR)."""
    return cbor_map([(enc("objects"), enc({})), (enc("attributes"), cbor_map([(enc("x"), value)]))])


def laughs(levels: int = 59) -> bytes:
    """Value sharing as a DAG: item k is a shareable array holding item k-1 twice (2^levels leaves as a tree)."""
    items = [shareable(cbor_array([enc("lol"), enc("lol")]))]
    items += [shareable(cbor_array([shared_ref(k - 1), shared_ref(k - 1)])) for k in range(1, levels)]
    return cbor_array(items)


def string_references(length: int = 4000, count: int = 300_000) -> bytes:
    """Tag 256 (string-reference namespace) around one ``length``-byte string and ``count`` references to it (tag
    25): 0.9 MB that is 1.2 GB once each reference is written out."""
    return head(6, 256) + cbor_array([enc("x" * length)] + [head(6, 25) + head(0, 0)] * count)


def forged_footer_in_padding(path: Path, claimed: int) -> None:
    """A valid file whose one 8-byte blob sits after ``claimed`` bytes of zero padding (a sparse file), with a
    footer forged at the end of that padding: its manifest would be the ``claimed`` bytes from 4096 on."""
    blob_offset = 4096 + claimed + 4096
    image = assemble({"objects": {"t": dense("u8", [8], blob_offset, 8)}}, {blob_offset: bytes(range(1, 9))})
    forged = struct.pack("<QQQII", 4096, claimed, 0x1234_5678_9ABC_DEF0, 2, 0) + MAGIC
    with open(path, "wb") as out:
        out.write(image[:len(MAGIC)])
        out.seek(blob_offset - len(forged))
        out.write(forged)
        out.write(image[blob_offset:])


def seek_table_of(count: int) -> bytes:
    """A seekable stream of nothing but a seek table listing ``count`` frames of 1 stored, 1 decoded byte: the
    frames it lists are missing (they would cover ``count`` bytes before the table)."""
    table = struct.pack("<II", 1, 1) * count + struct.pack("<IBI", count, 0, 0x8F92EAB1)
    return struct.pack("<II", 0x184D2A5E, len(table)) + table


def generations_file(path: Path, count: int) -> None:
    """``count`` generations, each appended as a new manifest (its attribute ``g`` its number from 1) after
    the previous footer at the next 4 KiB boundary."""
    image = bytearray(MAGIC)
    for number in range(1, count + 1):
        raw = cbor_map([(enc("objects"), enc({})), (enc("attributes"), cbor_map([(enc("g"), enc(str(number)))]))])
        offset = -(-len(image) // 4096) * 4096
        image += bytes(offset - len(image)) + raw + footer(offset, raw)
    path.write_bytes(bytes(image))
