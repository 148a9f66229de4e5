"""Digests over stored bytes: parsing, streaming computation with progress and cancel, verification.

Stored bytes are read into two reused buffers while a second thread hashes the previous one
(:func:`.readahead.feed`; a range in the page cache is hashed from the map): ``crc32c`` (hardware),
``hashlib.sha256`` and ``xxhash`` release the GIL on large buffers, so reading a cold file overlaps with hashing,
the resident size stays at the buffers whatever the file size, and a worker thread verifying a file leaves the
GUI thread free.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import crc32c as _crc32c
import xxhash

from .errors import DigestError, DigestMismatch
from .model import SEEKABLE_ENCODING, Component, Tensor, TensorFile
from .readahead import feed
from .source import Source
from .source_ranges import StoredRange

CHUNK = 8 << 20
_CRC_RE = re.compile(r"0x[0-9A-Fa-f]{8}")
_SHA_RE = re.compile(r"[0-9A-Fa-f]{64}")
_XXH3_RE = re.compile(r"[0-9a-f]{16}")

ProgressCallback = Callable[[int], None]
CancelCheck = Callable[[], bool]


@dataclass(frozen=True, slots=True)
class Digest:
    algorithm: str   # "crc32c" | "sha256" | "xxh3"
    value: str       # canonical: crc32c as "0x%08X", sha256 and xxh3 (64-bit) as lower-case hex

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.value}"


def parse_digest(text: str) -> Digest:
    """Parse ``crc32c:0x1A2B3C4D`` or ``sha256:<64 hex>``; raise :class:`DigestError` otherwise."""
    algorithm, sep, value = text.partition(":") if isinstance(text, str) else ("", "", "")
    if not sep:
        raise DigestError(f"digest {text!r} is not of the form 'algorithm:value'", rule="digest syntax")
    if algorithm == "crc32c":
        if not _CRC_RE.fullmatch(value):
            raise DigestError(f"crc32c digest {text!r} must be '0x' followed by 8 hex digits",
                              rule="digest syntax crc32c:0x%08X")
        return Digest("crc32c", "0x" + value[2:].upper())
    if algorithm == "sha256":
        if not _SHA_RE.fullmatch(value):
            raise DigestError(f"sha256 digest {text!r} must have 64 hex digits", rule="digest syntax sha256:<hex>")
        return Digest("sha256", value.lower())
    if algorithm == "xxh3":
        if not _XXH3_RE.fullmatch(value):
            raise DigestError(f"xxh3 digest {text!r} must have 16 lower-case hex digits",
                              rule="digest syntax xxh3:<16 hex>")
        return Digest("xxh3", value)
    raise DigestError(f"unsupported digest algorithm {algorithm!r} (supported: crc32c, sha256, xxh3)",
                      rule="supported digest algorithms")


class Hasher:
    def __init__(self, algorithm: str) -> None:
        self.algorithm = algorithm
        self._crc = 0
        self._hash: Any = None
        if algorithm == "sha256":
            self._hash = hashlib.sha256()
        elif algorithm == "xxh3":
            self._hash = xxhash.xxh3_64()
        elif algorithm != "crc32c":
            raise DigestError(f"unsupported digest algorithm {algorithm!r}")

    def update(self, data: memoryview | bytes) -> None:
        if self._hash is not None:
            self._hash.update(data)
        else:
            self._crc = _crc32c.crc32c(data, self._crc)

    def result(self) -> Digest:
        if self._hash is not None:
            return Digest(self.algorithm, self._hash.hexdigest())
        return Digest("crc32c", f"0x{self._crc:08X}")


def compute(
    source: Source, offset: int, length: int, algorithm: str,
    progress: ProgressCallback | None = None, cancelled: CancelCheck | None = None,
) -> Digest:
    """Digest of ``length`` stored bytes at ``offset``. ``progress`` gets the byte count of each chunk done;
    ``cancelled`` is polled between chunks and raises :class:`Cancelled` when it returns true."""
    hasher = Hasher(algorithm)
    feed(source, offset, length, hasher.update, cancelled=cancelled, progress=progress)
    return hasher.result()


def verify_component(
    source: Source, tensor: Tensor, component: Component,
    progress: ProgressCallback | None = None, cancelled: CancelCheck | None = None,
) -> Digest:
    """Check a component against its recorded digest; raise :class:`DigestMismatch` when it differs."""
    if component.digest is None:
        raise DigestError("component has no digest", tensor=tensor.name, component=component.role)
    try:
        expected = parse_digest(component.digest)
    except DigestError as exc:
        raise exc.located(tensor=tensor.name, component=component.role) from None
    decoded = bool(component.extra) and component.extra.get("digest_over") == "decoded"
    if decoded and component.encoding != "raw":
        actual = _compute_decoded(source, tensor, component, expected.algorithm, progress, cancelled)
    else:
        actual = compute(source, component.offset, component.length, expected.algorithm, progress, cancelled)
    if actual != expected:
        raise mismatch(tensor, component, expected, actual)
    return actual


def mismatch(tensor: Tensor, component: Component, expected: Digest, actual: Digest) -> DigestMismatch:
    """The error of a component whose bytes hash to ``actual`` where the file records ``expected``."""
    decoded = bool(component.extra) and component.extra.get("digest_over") == "decoded"
    what = "decoded bytes of" if decoded else "stored bytes"
    return DigestMismatch(
        f"{expected.algorithm} of the {what} [{component.offset}, {component.end}) is {actual.value}, "
        f"the file records {expected.value}",
        offset=component.offset, rule=DECODED_RULE if decoded else "digest over the stored bytes",
        tensor=tensor.name, component=component.role,
    )


DECODED_RULE = "digest (v2 §3.4): the decoded bytes hash to the part's digest"


def _compute_decoded(source: Source, tensor: Tensor, component: Component, algorithm: str,
                     progress: ProgressCallback | None, cancelled: CancelCheck | None) -> Digest:
    """Digest of a part's decoded bytes (zTensor v2 digests cover decoded content); progress is reported in
    stored bytes, frame by frame, so totals stay those of the stored ranges."""
    from .decode_rules import refuse_unsupported
    from .zstd_seekable import SeekableStream

    refuse_unsupported(tensor, component)
    if component.encoding != SEEKABLE_ENCODING:
        raise DigestError(f"cannot decode encoding {component.encoding!r} to verify its digest",
                          rule=DECODED_RULE, tensor=tensor.name, component=component.role)
    stored = StoredRange(source, component.offset, component.length, "component", tensor=tensor.name,
                         component=component.role)  # frames read with positional reads, one at a time
    where = {"tensor": tensor.name, "component": component.role, "offset": component.offset}
    stream = SeekableStream(stored, component.uncompressed_length or 0, where=where)
    hasher = Hasher(algorithm)
    for frame, data in zip(stream.frames, stream.iter_frames(cancelled)):
        hasher.update(data)
        if progress is not None:
            progress(frame.stored_length)
    if progress is not None:
        progress(component.length - sum(f.stored_length for f in stream.frames))
    return hasher.result()


def components_with_digests(tf: TensorFile, tensors: Iterable[Tensor] | None = None) -> list[tuple[Tensor, Component]]:
    return [(t, c) for t in (tf.tensors if tensors is None else tensors)
            for c in t.components.values() if c.digest is not None]
