"""zTensor v2 (spec draft 4), canonical form by default, byte-identical to ``ztensor.convert()`` of ztensor 2.1.2.

Layout: the magic, then one blob per part in bytewise ``(object name, part name)`` order, each at the next
multiple of the alignment (65536 unless the plan says otherwise; the first at 65536), zero padding between;
then the manifest blob, aligned the same way, and the 40-byte footer. Parts with byte-identical decoded content
(and the same encoding) share one blob: a candidate found by its XXH3-64 and length is confirmed on the bytes
themselves, then the just-written duplicate is cut off again. Every part carries a digest over its decoded
bytes (``xxh3`` by default). The manifest is deterministic CBOR (:func:`~.cbor.dumps_deterministic`).

Everything streams: a part goes out chunk by chunk (through the zstd-seekable encoder when asked), hashed on
the way, so memory stays bounded whatever the tensor size.

Phases: EMPTY → (:meth:`ZtV2Writer.begin`) BLOBS → (:meth:`ZtV2Writer.add_part` …) → (:meth:`ZtV2Writer.finish`)
CLOSED.
"""
from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import xxhash

import ztviewer.codec.writers.zt_v2_rules as rules

from ..errors import CodecError
from ..model import SEEKABLE_ENCODING
from .blobs import KEEP, BlobData, Buffer, FileBlob
from .cbor import dumps_deterministic
from .output import Output
from .phases import Phase, PhasedWriter
from .plan import FilePlan, PlannedComponent, PlannedTensor, with_unknown_keys
from .zstd_seekable_writer import SeekableEncoder

LAYOUT_IDS = {"dense": "dense", "sparse_csr": "zt.sparse_csr/1", "sparse_coo": "zt.sparse_coo/1"}
COMPARE_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class WrittenPart:
    """Where a part went: its blob, encoding (``None``: raw), decoded length and digest string."""

    offset: int
    length: int
    encoding: str | None
    decoded_length: int
    digest: str | None


@dataclass(slots=True)
class _Blob:
    """A blob already in the output, kept to share it with later identical parts."""

    written: WrittenPart
    data: BlobData
    xxh3: str | None    # hex digests of the decoded bytes, where known
    sha256: str | None


def layout_id(tensor: PlannedTensor) -> str:
    """The v2 ``layout`` string of a planned tensor (v2 layout ids pass through as they are)."""
    found = LAYOUT_IDS.get(tensor.layout)
    if found is not None:
        return found
    if "/" in tensor.layout:
        return tensor.layout
    raise CodecError(f"tensor {tensor.name!r} has layout {tensor.layout!r}, which zTensor v2 cannot name",
                     rule="v2 layouts: dense or a namespaced profile id", tensor=tensor.name)


def digest_algorithm(component: PlannedComponent) -> str | None:
    """The algorithm of the part's digest: ``KEEP`` means xxh3 (canonical form) unless a v2 part already has a
    sha256 digest over the same decoded bytes."""
    if component.digest != KEEP:
        return component.digest
    stored = component.data.stored()
    kept = stored.digest if stored is not None else None
    return "sha256" if isinstance(kept, str) and kept.startswith("sha256:") and _is_v2(component) else "xxh3"


def _is_v2(component: PlannedComponent) -> bool:
    return v2_part(component) is not None


def v2_part(component: PlannedComponent) -> dict[str, Any] | None:
    """The ``dtype`` / ``type`` fields of a part copied from a zTensor v2 file (they pass through as they are,
    u32 indices and logical types ztviewer cannot decode included); ``None`` for other sources."""
    data = component.data
    if not isinstance(data, FileBlob) or data.tf.format != "zt-v2":
        return None
    extra = data.component.extra or {}
    dtype = extra.get("dtype")
    if not isinstance(dtype, str):
        return None
    fields: dict[str, Any] = {"dtype": dtype}
    if isinstance(extra.get("type"), str):
        fields["type"] = extra["type"]
    return fields


class ZtV2Writer(PhasedWriter):
    """Writes a :class:`~.plan.FilePlan` as zTensor v2 (see the module docstring); ``plan.alignment`` is the blob
    placement (``None``: canonical 64 KiB)."""

    format_name = "zTensor v2"

    def __init__(self, out: Output, plan: FilePlan) -> None:
        super().__init__(out, plan)
        self.alignment = rules.ALIGN_CANONICAL if plan.alignment is None else plan.alignment
        rules.check_alignment(self.alignment)
        self.parts: dict[tuple[str, str], WrittenPart] = {}
        self._blobs: dict[tuple[str, int, str | None, int | None], list[_Blob]] = {}
        self._ranges: dict[tuple[Any, ...], _Blob] = {}

    def order(self) -> list[tuple[PlannedTensor, PlannedComponent]]:
        """Blob order of canonical form: bytewise ``(object name, part name)``."""
        pairs = [(t, c) for t in self.plan.tensors for c in t.components.values()]
        return sorted(pairs, key=lambda pair: (pair[0].name.encode("utf-8"), pair[1].role.encode("utf-8")))

    def write(self) -> None:
        self.begin()
        for tensor, component in self.order():
            self.add_part(tensor, component)
        self.finish()

    def begin(self) -> None:
        self._expect("write the magic", Phase.EMPTY)
        self.check()
        self.out.expect(self.plan.work())
        self.out.write(rules.MAGIC, work=0)
        self._advance(Phase.BLOBS)

    def check(self) -> None:
        """Names and attributes against §3.5 / §3.1 (canonical form also wants NFC names)."""
        canonical = self.plan.alignment is None
        rules.check_attributes(self.plan.attributes, "the file attributes", 1)
        for t in self.plan.tensors:
            rules.check_name(t.name, "tensor name", canonical)
            rules.check_attributes(t.attributes, f"tensor {t.name!r}", 3)
            if len(t.shape) > 64:
                raise CodecError(f"tensor {t.name!r} has rank {len(t.shape)}; zTensor v2 allows at most 64",
                                 rule="v2 shape rank ≤ 64 (spec §3.3)", tensor=t.name)
            if not t.components:
                raise CodecError(f"tensor {t.name!r} has no parts", rule="v2 objects have parts", tensor=t.name)
            for role in t.components:
                rules.check_name(role, f"part name of tensor {t.name!r}", canonical)
            layout_id(t)

    def add_part(self, tensor: PlannedTensor, component: PlannedComponent) -> WrittenPart:
        self._expect(f"add part {tensor.name}.{component.role}", Phase.BLOBS)
        encoding = SEEKABLE_ENCODING if component.encoding != "raw" else None
        algorithm = digest_algorithm(component)
        stored = component.data.stored()
        range_key = None if stored is None else (id(stored.source), stored.offset, stored.length, stored.encoding,
                                                 stored.digest, encoding, component.level, algorithm)
        blob = self._ranges.get(range_key) if range_key is not None else None  # tied in the source file too
        if blob is None:
            copied = self._copy_stored(component, encoding, algorithm)
            blob = copied if copied is not None else self._write_decoded(tensor, component, encoding, algorithm)
            if range_key is not None:
                self._ranges[range_key] = blob
        w = blob.written
        digest = None if algorithm is None else f"{algorithm}:{blob.xxh3 if algorithm == 'xxh3' else blob.sha256}"
        part = WrittenPart(w.offset, w.length, w.encoding, w.decoded_length, digest)
        self.parts[(tensor.name, component.role)] = part
        return part

    def _copy_stored(self, component: PlannedComponent, encoding: str | None, algorithm: str | None) -> _Blob | None:
        """A v2 part whose stored bytes can go out unchanged (same encoding, a digest of the wanted algorithm
        over its decoded bytes): copied, its digest verified on the way (:meth:`.FileBlob.copy_to`); ``None``
        when it cannot be."""
        stored = component.data.stored()
        if stored is None or component.reencode or not _is_v2(component) or algorithm is None:
            return None
        kept = stored.digest
        decoded = component.data.decoded_length()
        if stored.encoding != (encoding or "raw") or decoded is None or not isinstance(kept, str) or \
                not kept.startswith(f"{algorithm}:"):
            return None
        value = kept.partition(":")[2]
        xxh3, sha256 = (value, None) if algorithm == "xxh3" else (None, value)
        key = (kept if xxh3 is None else xxh3, decoded, encoding, None)
        for blob in self._blobs.get(key, ()):
            if same_content(blob.data, component.data, self.out):
                return blob
        self.out.pad_to(self.alignment)
        offset = self.out.pos
        component.data.copy_to(self.out)
        blob = _Blob(WrittenPart(offset, stored.length, encoding, decoded, kept), component.data, xxh3, sha256)
        self._blobs.setdefault(key, []).append(blob)
        return blob

    def _write_decoded(self, tensor: PlannedTensor, component: PlannedComponent, encoding: str | None,
                       algorithm: str | None) -> _Blob:
        """Stream the decoded bytes out (raw or through the seekable encoder), hashing them; a blob identical
        to an earlier one is cut off again and the earlier one shared."""
        before = self.out.pos
        self.out.pad_to(self.alignment)
        offset = self.out.pos
        xxh = xxhash.xxh3_64()
        sha = hashlib.sha256() if algorithm == "sha256" else None
        decoded = 0
        encoder = SeekableEncoder(lambda piece, work: self.out.write(piece, work=work), component.level) \
            if encoding is not None else None
        for chunk in component.data.iter_decoded(self.out):
            xxh.update(chunk)
            if sha is not None:
                sha.update(chunk)
            decoded += len(chunk)
            if encoder is not None:
                encoder.write(chunk)
            else:
                self.out.write(chunk)
        if encoder is not None:
            encoder.close()
        expected = component.data.decoded_length()
        if expected is not None and decoded != expected:
            raise CodecError(f"part {tensor.name}.{component.role} decoded to {decoded} bytes, expected {expected}",
                             rule="decoded size = shape × dtype size", tensor=tensor.name,
                             component=component.role)
        xxh3 = f"{xxh.intdigest():016x}"
        sha256 = sha.hexdigest() if sha is not None else None
        key = (xxh3, decoded, encoding, component.level if encoding is not None else None)
        shared = self._share(key, component.data, before)
        if shared is not None:
            return _Blob(shared.written, shared.data, xxh3, sha256 or shared.sha256)
        blob = _Blob(WrittenPart(offset, self.out.pos - offset, encoding, decoded, None), component.data, xxh3,
                     sha256)
        self._blobs.setdefault(key, []).append(blob)
        return blob

    def _share(self, key: tuple[str, int, str | None, int | None], data: BlobData, before: int) -> _Blob | None:
        """An earlier blob with the same content; the duplicate just written is cut off (output back at
        ``before``)."""
        for blob in self._blobs.get(key, ()):
            if same_content(blob.data, data, self.out):
                self.out.truncate(before)
                return blob
        return None

    def finish(self) -> None:
        self._expect("write the manifest", Phase.BLOBS)
        self._expect_all_written(lambda t, role: (t.name, role) in self.parts, "part")
        self._advance(Phase.MANIFEST)
        manifest = dumps_deterministic(self.manifest())
        if len(manifest) > rules.MAX_MANIFEST:
            raise CodecError(f"the manifest would be {len(manifest):,} bytes; zTensor v2 allows at most 1 GiB",
                             rule="v2 manifest ≤ 1 GiB (spec §3.1)")
        self.out.pad_to(self.alignment)
        offset = self.out.pos
        self.out.write(manifest)
        self.out.write(footer(offset, manifest), work=0)
        self._advance(Phase.CLOSED)

    def manifest(self) -> dict[str, Any]:
        root: dict[str, Any] = {"objects": {t.name: self._object(t) for t in self.plan.tensors}}
        if self.plan.attributes:
            root["attributes"] = dict(self.plan.attributes)
        return with_unknown_keys(root, self.plan.unknown_root)

    def _object(self, t: PlannedTensor) -> dict[str, Any]:
        entry: dict[str, Any] = {"shape": list(t.shape), "layout": layout_id(t)}
        if t.attributes:
            entry["attributes"] = dict(t.attributes)
        entry["parts"] = {role: self._part(t, c) for role, c in t.components.items()}
        return with_unknown_keys(entry, t.unknown_keys)

    def _part(self, t: PlannedTensor, c: PlannedComponent) -> dict[str, Any]:
        written = self.parts[(t.name, c.role)]
        part = v2_part(c)
        if part is None:
            dtype, logical = rules.v2_type(c.dtype or t.dtype, f" (tensor {t.name!r}, part {c.role!r})")
            part = {"dtype": dtype} if logical is None else {"dtype": dtype, "type": logical}
        part["blob"] = [written.offset, written.length]
        if written.encoding is not None:
            part["encoding"] = written.encoding
            part["decoded_length"] = written.decoded_length
        if written.digest is not None:
            part["digest"] = written.digest
        return with_unknown_keys(part, c.unknown_keys)


def footer(manifest_offset: int, manifest: bytes) -> bytes:
    """The 40-byte footer: manifest offset, length, XXH3-64, version 2, reserved 0, magic."""
    return struct.pack("<QQQII", manifest_offset, len(manifest), xxhash.xxh3_64_intdigest(manifest),
                       rules.VERSION, 0) + rules.MAGIC


def _blocks(chunks: Iterator[Buffer], size: int) -> Iterator[bytes]:
    pending = bytearray()
    for chunk in chunks:
        pending += chunk
        while len(pending) >= size:
            yield bytes(pending[:size])
            del pending[:size]
    if pending:
        yield bytes(pending)


def same_content(a: BlobData, b: BlobData, out: Output) -> bool:
    """True when two parts decode to the same bytes (compared block by block, never whole)."""
    if a is b:
        return True
    sa, sb = a.stored(), b.stored()
    if sa is not None and sb is not None and sa.source is sb.source and (sa.offset, sa.length, sa.encoding) == \
            (sb.offset, sb.length, sb.encoding):
        return True
    left, right = _blocks(a.iter_decoded(out), COMPARE_BLOCK), _blocks(b.iter_decoded(out), COMPARE_BLOCK)
    for x in left:
        if x != next(right, None):
            return False
    return next(right, None) is None
