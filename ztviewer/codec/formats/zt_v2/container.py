"""The zTensor v2 container (spec §2): magic, the 40-byte footer, the manifest blob and its hash.

Checks run in the order of the upstream reference reader, so a file that breaks several rules is
refused for the same one: size, header magic, footer magic, version, data-shard zeros, manifest size cap
(before anything is read), alignment, bounds, XXH3-64.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import xxhash

import ztviewer.codec.formats.zt_v2.rules as rules

from ...errors import (
    HeaderError,
    HeaderTooLarge,
    OutOfBounds,
    TruncatedFile,
    UnsupportedFormat,
)
from ...source import Source
from ..magic import ZT_V2_MAGIC as MAGIC

FOOTER_SIZE = 40
MIN_FILE_SIZE = len(MAGIC) + FOOTER_SIZE
ALIGNMENT = 4096
CANONICAL_ALIGNMENT = 65536
MAX_MANIFEST = 1 << 30
VERSION = 2
_FOOTER = struct.Struct("<QQQII8s")


@dataclass(frozen=True, slots=True)
class Footer:
    """The 40 bytes at ``end - 40``: where the manifest is, its hash and the version."""

    manifest_offset: int
    manifest_length: int
    manifest_hash: int
    version: int
    reserved: int
    magic: bytes
    end: int  # offset just past the footer: the file size for the current generation

    @property
    def offset(self) -> int:
        return self.end - FOOTER_SIZE

    @property
    def is_data_shard(self) -> bool:
        return self.manifest_length == 0


def parse_footer(raw: bytes, end: int) -> Footer:
    manifest_offset, manifest_length, manifest_hash, version, reserved, magic = _FOOTER.unpack(raw)
    return Footer(manifest_offset, manifest_length, manifest_hash, version, reserved, magic, end)


def read_footer(source: Source) -> Footer:
    """The footer at EOF, with the container checks that need nothing but the footer and the magic."""
    size = source.size
    if size < MIN_FILE_SIZE:
        raise TruncatedFile(f"the file has {size} bytes; a zTensor v2 file has at least {MIN_FILE_SIZE}",
                            offset=0, rule=rules.FILE_TOO_SMALL)
    if source.head(len(MAGIC)) != MAGIC:
        raise HeaderError(f"the first 8 bytes are {source.head(8).hex(' ')}, not the v2 magic", offset=0,
                          rule=rules.HEADER_MAGIC)
    footer = parse_footer(source.read(size - FOOTER_SIZE, FOOTER_SIZE, "footer"), size)
    if footer.magic != MAGIC:
        raise HeaderError(f"the footer ends with {footer.magic.hex(' ')}, not the v2 magic",
                          offset=size - len(MAGIC), rule=rules.FOOTER_MAGIC)
    if footer.version != VERSION:
        raise UnsupportedFormat(f"footer version {footer.version}: ztviewer reads zTensor v2 (version 2)",
                                offset=size - 16, rule=rules.VERSION)
    check_manifest_location(footer)
    return footer


def check_manifest_location(footer: Footer) -> None:
    """Data-shard zeros, size cap, alignment and bounds of the manifest a footer points to."""
    at = footer.offset
    if footer.is_data_shard:
        if footer.manifest_offset or footer.manifest_hash:
            raise HeaderError("manifest_length is 0 (a data shard) but manifest_offset or manifest_hash is not",
                              offset=at, rule=rules.MANIFEST_BOUNDS)
        return
    if footer.manifest_length > MAX_MANIFEST:
        raise HeaderTooLarge(f"manifest_length is {footer.manifest_length:,} bytes, above the 1 GiB cap",
                             offset=at + 8, rule=rules.MANIFEST_TOO_LARGE)
    offset = footer.manifest_offset
    if offset % ALIGNMENT or offset < ALIGNMENT:
        raise HeaderError(f"the manifest starts at byte {offset}, not a multiple of 4096 (>= 4096)",
                          offset=at, rule=rules.BLOB_ALIGNMENT)
    if offset + footer.manifest_length > footer.offset:
        raise OutOfBounds(f"the manifest [{offset}, {offset + footer.manifest_length}) runs past the footer "
                          f"at byte {footer.offset}", offset=at, rule=rules.MANIFEST_BOUNDS)


def read_manifest_bytes(source: Source, footer: Footer) -> bytes:
    """The manifest blob, after checking it hashes to the footer's XXH3-64."""
    data = source.read(footer.manifest_offset, footer.manifest_length, "manifest")
    actual = xxhash.xxh3_64_intdigest(data)
    if actual != footer.manifest_hash:
        raise HeaderError(f"the manifest hashes to XXH3-64 {actual:016x}, the footer records "
                          f"{footer.manifest_hash:016x}", offset=footer.manifest_offset, rule=rules.MANIFEST_HASH)
    return data


def footer_candidate_at(source: Source, end: int) -> Footer | None:
    """A footer of an earlier generation ending at ``end`` whose magic, version and manifest location check
    out, its manifest not read yet (:func:`manifest_hash_matches` does that). ``None`` otherwise."""
    if end < MIN_FILE_SIZE + ALIGNMENT or end > source.size:
        return None
    footer = parse_footer(source.read(end - FOOTER_SIZE, FOOTER_SIZE, "footer"), end)
    if footer.magic != MAGIC or footer.version != VERSION or footer.is_data_shard:
        return None
    try:
        check_manifest_location(footer)
    except (HeaderError, OutOfBounds):
        return None
    return footer


def manifest_hash_matches(source: Source, footer: Footer, chunk: int = 1 << 20) -> bool:
    """Whether the manifest a footer points to hashes to its XXH3-64, read ``chunk`` bytes at a time (a
    footer forged inside padding may claim a manifest of up to 1 GiB: it is never held whole)."""
    hasher = xxhash.xxh3_64()
    end = footer.manifest_offset + footer.manifest_length
    for offset in range(footer.manifest_offset, end, chunk):
        hasher.update(source.window(offset, min(chunk, end - offset)))
    return hasher.intdigest() == footer.manifest_hash


def footer_ending_at(source: Source, end: int) -> Footer | None:
    """A sound footer of an earlier generation ending at ``end``: magic, version, manifest location and
    hash all check out. ``None`` otherwise."""
    footer = footer_candidate_at(source, end)
    return footer if footer is not None and manifest_hash_matches(source, footer) else None
