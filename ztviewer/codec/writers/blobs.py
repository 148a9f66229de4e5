"""Where a component's bytes come from, and how one component is written.

A component whose stored bytes can go out unchanged (same encoding, usable byte order, no re-encode asked)
is copied byte for byte and keeps its digest string. Anything else is streamed: decoded little-endian
chunks → (zstd compressor) → output, hashing the written bytes on the way, so memory stays bounded by
the chunk size whatever the tensor size. Bytes read from an open file are checked on the way
(:mod:`.read_check`): a damaged component is refused, never copied or re-encoded as if it were sound.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import crc32c as _crc32c
import numpy as np
import zstandard

from ..decode import storage_dtype
from ..decode_rules import CHUNK, expected_length
from ..digest import parse_digest
from ..dtypes import DTYPES
from ..errors import CodecError, DigestError
from ..model import Component, Tensor, TensorFile
from ..source import Source
from .output import Output, WriteBehind
from .read_check import checked_decoded, copy_checked

#: digest policy meaning "keep the file's digest (same algorithm when the bytes change)".
KEEP = "keep"
#: components decoding to at least this many bytes (or an unknown number) are written behind their decoding
WRITE_BEHIND_FROM = 2 * CHUNK

Buffer = bytes | bytearray | memoryview


@dataclass(frozen=True, slots=True)
class Stored:
    """Already-encoded bytes in an open file."""

    source: Source
    offset: int
    length: int
    encoding: str
    digest: str | None
    byte_order: str


@dataclass(slots=True)
class Written:
    """What a component became in the output file."""

    offset: int
    length: int
    encoding: str
    digest: str | None
    uncompressed_length: int | None
    byte_order: str


class BlobData:
    """A component's content: optionally stored bytes that may be copied, always decodable bytes."""

    itemsize: int = 1

    def stored(self) -> Stored | None:
        return None

    def decoded_length(self) -> int | None:
        raise NotImplementedError

    def iter_decoded(self, out: Output, buffers: int = 1) -> Iterator[Buffer]:
        """Decoded little-endian bytes in chunks, each valid until ``buffers`` more are requested."""
        raise NotImplementedError

    def copy_to(self, out: Output, also: Callable[[Buffer], None] | None = None) -> None:
        """Copy the stored bytes (there are some: :meth:`stored`) to ``out`` unchanged."""
        raise NotImplementedError


class FileBlob(BlobData):
    """A component of an open file."""

    def __init__(self, tf: TensorFile, tensor: Tensor, component: Component) -> None:
        self.tf, self.tensor, self.component = tf, tensor, component
        info = DTYPES.get(component.dtype or "")
        self.itemsize = info.itemsize if info is not None else 1
        self._decoded: int | None = None
        self._stored: Stored | None = None

    def stored(self) -> Stored:
        if self._stored is None:
            c = self.component
            self._stored = Stored(self.tf.source_for(self.tensor), c.offset, c.length, c.encoding, c.digest,
                                  c.byte_order)
        return self._stored

    def decoded_length(self) -> int | None:
        if self._decoded is None:
            self._decoded = expected_length(self.tensor, self.component)
        return self._decoded

    def count_decoded(self, out: Output) -> int:
        """The decoded length, decompressing once to count it when the manifest does not say."""
        if self.decoded_length() is None:
            self._decoded = sum(len(part) for part in self.iter_decoded(out))
        return self._decoded  # type: ignore[return-value]

    def iter_decoded(self, out: Output, buffers: int = 1) -> Iterator[Buffer]:
        """The decoded bytes, checked as they are read (:mod:`.read_check`: digest, bool bytes)."""
        c = self.component
        swap = c.byte_order == "big" and self.itemsize > 1
        for part in checked_decoded(self.tf, self.tensor, c, align=self.itemsize, cancelled=out.cancelled,
                                    buffers=buffers):
            if swap:
                big = storage_dtype(self.tensor, c)
                yield np.frombuffer(part, dtype=big).astype(big.newbyteorder("<")).tobytes()
            else:
                yield part


    def copy_to(self, out: Output, also: Callable[[Buffer], None] | None = None) -> None:
        """Copy the stored bytes to ``out`` unchanged, checked as they are read (:func:`.read_check.copy_checked`);
        ``also`` sees every chunk too (a digest of the output)."""
        copy_checked(self.tf, self.tensor, self.component, out, also)


class MemoryBlob(BlobData):
    """Bytes computed in memory (densified sparse tensors, unpacked crate sparse, TT cores)."""

    def __init__(self, data: Buffer | np.ndarray, itemsize: int = 1) -> None:
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data).reshape(-1).view(np.uint8).data
        self.data = memoryview(data).cast("B")
        self.itemsize = itemsize

    def decoded_length(self) -> int:
        return len(self.data)

    def iter_decoded(self, out: Output, buffers: int = 1) -> Iterator[Buffer]:
        for start in range(0, len(self.data), CHUNK):
            yield self.data[start:start + CHUNK]


class WidenedBlob(BlobData):
    """Another component's elements cast to a wider integer dtype, chunk by chunk (zTensor v2 ``u32`` sparse
    indices written where only ``u64`` indices exist)."""

    def __init__(self, inner: BlobData, source_dtype: str, dtype: str) -> None:
        self.inner = inner
        self.source = DTYPES[source_dtype].storage_dtype
        self.target = DTYPES[dtype].storage_dtype
        self.itemsize = self.target.itemsize

    def decoded_length(self) -> int | None:
        inner = self.inner.decoded_length()
        return None if inner is None else inner // self.source.itemsize * self.itemsize

    def iter_decoded(self, out: Output, buffers: int = 1) -> Iterator[Buffer]:
        for part in self.inner.iter_decoded(out):
            yield np.frombuffer(part, dtype=self.source).astype(self.target).tobytes()


class _Hasher:
    def __init__(self, algorithm: str | None) -> None:
        self.algorithm = algorithm
        self.crc = 0
        self.sha = hashlib.sha256() if algorithm == "sha256" else None

    def update(self, data: Buffer) -> None:
        if self.sha is not None:
            self.sha.update(data)
        elif self.algorithm == "crc32c":
            self.crc = _crc32c.crc32c(data, self.crc)

    def result(self) -> str | None:
        if self.sha is not None:
            return f"sha256:{self.sha.hexdigest()}"
        return f"crc32c:0x{self.crc:08X}" if self.algorithm == "crc32c" else None


def algorithm_of(digest: str | None) -> str | None:
    """``crc32c`` / ``sha256`` for a well-formed digest string, else ``None``."""
    if digest is None:
        return None
    try:
        return parse_digest(digest).algorithm
    except DigestError:
        return None


def can_copy(data: BlobData, encoding: str, reencode: bool, keep_byte_order: bool) -> bool:
    """True when the stored bytes can be written out unchanged."""
    stored = data.stored()
    if stored is None or reencode or stored.encoding != encoding:
        return False
    return keep_byte_order or stored.byte_order == "little" or data.itemsize == 1


def write_component(out: Output, data: BlobData, *, encoding: str = "raw", level: int | None = None,
                    digest: str | None = KEEP, reencode: bool = False, keep_byte_order: bool = False) -> Written:
    """Write one component at the current position and say what was written."""
    stored = data.stored()
    offset = out.pos
    if can_copy(data, encoding, reencode, keep_byte_order):
        assert stored is not None
        if digest == KEEP:
            wanted = algorithm_of(stored.digest) if stored.digest is not None else None
            keep = stored.digest
        else:
            wanted = digest
            keep = stored.digest if digest is not None and algorithm_of(stored.digest) == digest else None
        uncompressed = stored.length if encoding == "raw" else data.decoded_length()
        if keep is not None or wanted is None:
            data.copy_to(out)
            return Written(offset, stored.length, encoding, keep, uncompressed, stored.byte_order)
        hasher = _Hasher(wanted)
        data.copy_to(out, hasher.update)
        return Written(offset, stored.length, encoding, hasher.result(), uncompressed, stored.byte_order)
    if digest == KEEP:
        digest = algorithm_of(stored.digest) if stored is not None else None
    return _reencode(out, data, encoding, level, digest, offset)


def _reencode(out: Output, data: BlobData, encoding: str, level: int | None, digest: str | None,
              offset: int) -> Written:
    hasher = _Hasher(digest)
    compressor = None
    if encoding == "zstd":
        compressor = zstandard.ZstdCompressor(level=3 if level is None else level,
                                              write_content_size=False).compressobj()
    elif encoding != "raw":
        raise CodecError(f"cannot write encoding {encoding!r} (known: raw, zstd)", rule="encoding is raw or zstd")
    size = data.decoded_length()
    if size is not None and size < WRITE_BEHIND_FROM:
        produced = _stream(out, out, data.iter_decoded(out), compressor, hasher)
    else:  # large: write (and hash) each chunk on a thread while the next is decoded / compressed
        with WriteBehind(out, hasher.update) as sink:
            produced = _stream(out, sink, data.iter_decoded(out, WriteBehind.BUFFERS), compressor, None)
    expected = data.decoded_length()
    if expected is not None and produced != expected:
        raise CodecError(f"component decoded to {produced} bytes, expected {expected}",
                         rule="decoded size = shape × dtype size")
    return Written(offset, out.pos - offset, encoding, hasher.result(), produced, "little")


def _stream(out: Output, sink: Output | WriteBehind, parts: Iterator[Buffer], compressor: Any | None,
            hasher: _Hasher | None) -> int:
    """Decoded ``parts`` (compressed when asked) into ``sink``; the number of decoded bytes."""
    produced = 0
    for part in parts:
        produced += len(part)
        chunk = compressor.compress(part) if compressor is not None else part
        if chunk:
            if hasher is not None:
                hasher.update(chunk)
            sink.write(chunk, work=len(part))
        else:
            out.report(len(part))
    if compressor is not None:
        tail = compressor.flush()
        if hasher is not None:
            hasher.update(tail)
        sink.write(tail, work=0)
    return produced
