"""Where a zTensor 0.1 / 1.x manifest is, and decoding it.

The three on-disk layouts differ only at the end of the file (see specs/real-world-writers.md §0)::

    v0.1          ZTEN0001 … [CBOR array]  [u64 size]
    v1.0          ZTEN1000 … [CBOR map]    [u64 size]
    v1.x objects  ZTEN1000 … [CBOR map]    [u64 size] ZTEN1000

The size rule is ``manifest_size <= FILE_SIZE - 8 - footer`` (the seeds' strict ``<`` rejects the
17-byte empty v0.1 and 80-byte empty v1.0 files the real writers produce).
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import Any

import cbor2

from ..errors import HeaderError, HeaderTooLarge, ManifestDecodeError, TruncatedFile, UnsupportedFormat
from ..huge_int import from_bignum
from ..model import Problem, Region, warning
from ..source import Source
from .magic import ZT_MAGIC_V01 as MAGIC_V01
from .magic import ZT_MAGIC_V1 as MAGIC_V1

MAGIC_LEN = 8
MAX_CBOR_DEPTH = 64
RULE_SHARING = "manifests do not use CBOR value sharing (tags 28 / 29)"
_U64 = struct.Struct("<Q")
#: Exceptions a decoder can raise on hostile bytes; CBORError is not a ValueError in cbor2 6.
_DECODE_FAILURES = (cbor2.CBORError, ValueError, RecursionError, OverflowError, TypeError, LookupError,
                    MemoryError)


@dataclass(frozen=True, slots=True)
class ManifestLocation:
    """The manifest's byte range and the container regions around it."""

    layout: str                     # "v0.1" | "v1.0" | "v1.x-objects"
    offset: int
    size: int
    regions: tuple[Region, ...]


def locate_manifest(source: Source) -> ManifestLocation:
    """Read the magic and footer and validate the manifest size against the file, before any allocation."""
    size = source.size
    magic = source.head(MAGIC_LEN)
    if magic not in (MAGIC_V01, MAGIC_V1):
        if size < MAGIC_LEN:
            raise TruncatedFile(f"the file is {size} bytes, shorter than the 8-byte zTensor magic",
                                offset=0, rule="a zTensor file starts with an 8-byte magic")
        raise UnsupportedFormat(
            f"unknown zTensor magic {magic.decode('latin-1')!r} at byte 0 (known: 'ZTEN0001' for v0.1, "
            "'ZTEN1000' for v1.x)", offset=0, rule="zTensor magic")
    if size < 2 * MAGIC_LEN:
        raise TruncatedFile(f"the file is {size} bytes: too short for the 8-byte magic and the 8-byte footer",
                            offset=size, rule="magic + manifest + u64 footer")
    tail = source.read(size - MAGIC_LEN, MAGIC_LEN, "footer")
    head_region = Region("magic", 0, MAGIC_LEN, f"magic {magic.decode()}")
    if magic == MAGIC_V01:
        return _sized(source, "v0.1", size - 8, (head_region,), "v0.1 footer: u64 manifest size at EOF-8")
    if tail == MAGIC_V1:
        if size < 3 * MAGIC_LEN:
            raise TruncatedFile(f"the file is {size} bytes: too short for magic, manifest size and trailing "
                                "magic", offset=size, rule="v1.x objects footer: [u64 size][ZTEN1000]")
        trailer = Region("magic", size - 8, 8, "trailing magic ZTEN1000")
        return _sized(source, "v1.x-objects", size - 16, (head_region, trailer),
                      "v1.x objects footer: u64 manifest size at EOF-16, 'ZTEN1000' at EOF-8")
    try:
        return _sized(source, "v1.0", size - 8, (head_region,), "v1.0 footer: u64 manifest size at EOF-8")
    except HeaderError:
        if tail[:4] == b"ZTEN":  # an objects-layout footer whose trailing magic is wrong
            raise HeaderError(
                f"trailing magic {tail.decode('latin-1')!r} at byte {size - 8} (0x{size - 8:X}) is not "
                "'ZTEN1000'", offset=size - 8, rule="v1.x objects footer ends with 'ZTEN1000'") from None
        raise


def _sized(source: Source, layout: str, size_at: int, regions: tuple[Region, ...], rule: str
           ) -> ManifestLocation:
    (msize,) = _U64.unpack(source.read(size_at, 8, "manifest size"))
    room = size_at - MAGIC_LEN
    if msize == 0:
        raise HeaderError(f"the manifest size at byte {size_at} (0x{size_at:X}) is 0: there is no manifest",
                          offset=size_at, rule=rule)
    if msize > room:
        raise HeaderTooLarge(
            f"the manifest size at byte {size_at} (0x{size_at:X}) is {msize} (0x{msize:X}) but only {room} "
            f"bytes lie between the magic and the footer of this {source.size}-byte file",
            offset=size_at, rule=f"{rule}; manifest_size <= file size - magic - footer")
    offset = size_at - msize
    footer = Region("footer", size_at, 8, "manifest size (u64 LE)")
    manifest = Region("manifest", offset, msize, "CBOR manifest")
    return ManifestLocation(layout, offset, msize, (*regions[:1], manifest, footer, *regions[1:]))


def decode_manifest(source: Source, loc: ManifestLocation) -> tuple[Any, list[Problem]]:
    """Decode the CBOR manifest with a nesting guard; any failure is a fatal :class:`ManifestDecodeError`."""
    problems: list[Problem] = []
    data = source.read(loc.offset, loc.size, "manifest")
    try:
        root, used = _decode(data, allow_duplicate_keys=False)
    except _DECODE_FAILURES:
        try:  # a second pass tells duplicate map keys (tolerated, last one wins) from broken CBOR
            root, used = _decode(data, allow_duplicate_keys=True)
        except _DECODE_FAILURES as exc:
            shared = isinstance(exc.__cause__, SharingRefused)
            raise ManifestDecodeError(
                f"the {loc.size}-byte manifest at byte {loc.offset} (0x{loc.offset:X}) is not "
                f"{'accepted' if shared else 'valid CBOR'}: {_reason(exc)}", offset=loc.offset,
                rule=RULE_SHARING if shared else "the manifest is one CBOR item") from None
        problems.append(warning("the manifest has a map with duplicate keys; the last value of each is used",
                                offset=loc.offset, rule="CBOR maps should not repeat keys"))
    if used != loc.size:
        problems.append(warning(
            f"the manifest's CBOR item ends after {used} of the {loc.size} bytes the footer declares; "
            f"{loc.size - used} trailing bytes are ignored", offset=loc.offset + used,
            rule="the manifest is exactly one CBOR item"))
    return root, problems


class SharingRefused(ValueError):
    """A manifest uses CBOR value sharing: a value may then contain itself, or expand exponentially."""


def _refuse_sharing(*_: Any) -> Any:
    raise SharingRefused("it uses CBOR value sharing (tag 28 / 29), which can make a value contain itself or "
                         "expand exponentially")


#: Every CBOR decoding of a manifest goes through :func:`_decode` with these: bignums of more than
#: ``DECIMAL_BITS`` bits become :class:`~ztviewer.codec.huge_int.HugeInt`, value sharing is refused.
_SEMANTIC_DECODERS = {2: lambda data, immutable=False: from_bignum(data, False),
                      3: lambda data, immutable=False: from_bignum(data, True),
                      28: _refuse_sharing, 29: _refuse_sharing}


def _decode(data: bytes, allow_duplicate_keys: bool) -> tuple[Any, int]:
    stream = io.BytesIO(data)
    decoder = cbor2.CBORDecoder(stream, max_depth=MAX_CBOR_DEPTH, allow_duplicate_keys=allow_duplicate_keys,
                                semantic_decoders=_SEMANTIC_DECODERS)
    return decoder.decode(), stream.tell()


def _reason(exc: BaseException) -> str:
    if isinstance(exc.__cause__, SharingRefused):
        return str(exc.__cause__)
    if isinstance(exc, RecursionError) or "depth" in str(exc):
        return f"containers nested deeper than {MAX_CBOR_DEPTH} levels ({exc})"
    if isinstance(exc, cbor2.CBORDecodeEOF):
        return f"it ends in the middle of an item ({exc})"
    return str(exc) or type(exc).__name__


def decode_root_before(data: bytes, key: str) -> tuple[dict[Any, Any], int] | None:
    """``(the root map's other entries, where the value of key starts)`` of a manifest whose root is a definite
    map with ``key`` as its last entry, the other entries decoded exactly as :func:`decode_manifest` decodes
    them (as one map, no key repeated); ``None`` for anything else (the manifest is then decoded whole)."""
    head = data[:1]
    if not head or not 0xA1 <= head[0] <= 0xB7:
        return None
    others = head[0] - 0xA1
    stream = io.BytesIO(data)
    stream.seek(1)
    decoder = cbor2.CBORDecoder(stream, max_depth=MAX_CBOR_DEPTH, semantic_decoders=_SEMANTIC_DECODERS)
    try:
        for _ in range(2 * others):
            decoder.decode()
    except _DECODE_FAILURES:
        return None
    at = stream.tell()
    token = bytes([0x60 + len(key)]) + key.encode()
    if data[at:at + len(token)] != token:
        return None
    try:
        root, used = _decode(bytes([0xA0 + others]) + data[1:at], allow_duplicate_keys=False)
    except _DECODE_FAILURES:
        return None
    return (root, at + len(token)) if used == at and type(root) is dict else None
