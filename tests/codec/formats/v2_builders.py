"""Hand-built zTensor v2 files for tests: a manifest (any CBOR, or raw bytes), blobs placed where asked."""
from __future__ import annotations

import struct
from typing import Any

import xxhash
import zstandard

from ztviewer.codec.formats.zt_v2.cbor_check import encode_deterministic

MAGIC = b"\x89ZT2\r\n\x1a\n"


def footer(manifest_offset: int, manifest: bytes, version: int = 2) -> bytes:
    return struct.pack("<QQQII", manifest_offset, len(manifest), xxhash.xxh3_64_intdigest(manifest), version, 0) + MAGIC


def assemble(manifest: Any, blobs: dict[int, bytes] | None = None) -> bytes:
    """Magic, zero padding, each blob at its offset, the manifest at the next 4 KiB boundary, the footer."""
    raw = manifest if isinstance(manifest, bytes) else encode_deterministic(manifest)
    image = bytearray(MAGIC)
    for offset, data in sorted((blobs or {}).items()):
        image += bytes(offset - len(image))
        image += data
    manifest_offset = max(4096, -(-len(image) // 4096) * 4096)
    image += bytes(manifest_offset - len(image))
    return bytes(image + raw + footer(manifest_offset, raw))


def part(dtype: str, offset: int, length: int, **fields: Any) -> dict[str, Any]:
    return {"dtype": dtype, "blob": [offset, length], **fields}


def dense(dtype: str, shape: list[int], offset: int, length: int, **fields: Any) -> dict[str, Any]:
    return {"shape": shape, "layout": "dense", "parts": {"data": part(dtype, offset, length, **fields)}}


def seekable(data: bytes, frame_size: int, checksum: bool = True) -> bytes:
    """``data`` as a zstd seekable stream of ``frame_size``-byte frames."""
    compressor = zstandard.ZstdCompressor(write_checksum=checksum, write_content_size=True)
    frames, entries = [], []
    for start in range(0, len(data), frame_size):
        frame = compressor.compress(data[start:start + frame_size])
        frames.append(frame)
        entries.append(struct.pack("<II", len(frame), len(data[start:start + frame_size])))
    table = b"".join(entries) + struct.pack("<IBI", len(entries), 0, 0x8F92EAB1)
    return b"".join(frames) + struct.pack("<II", 0x184D2A5E, len(table)) + table
