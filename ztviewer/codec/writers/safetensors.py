"""safetensors, laid out as HF safetensors 0.8.0 writes it (specs/safetensors.md, real-world-writers.md §4).

An 8-byte little-endian header size N, N bytes of compact JSON padded with spaces to a multiple of 8, then
the tensors back to back. The JSON starts with ``__metadata__`` (sorted keys; omitted when empty), then the
tensors in buffer order: the reference sorts by dtype — descending in its ``Dtype`` enum order, which puts
wider types first — then by name. UTF-8 is written raw.

Phases: EMPTY → (:meth:`SafetensorsWriter.write_header`) HEADER → (:meth:`write_data`) BLOBS →
(:meth:`finish`) CLOSED.
"""
from __future__ import annotations

import json
import struct
from typing import Any

try:  # optional, as for the reader: json writes the same bytes, slower
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None  # type: ignore[assignment]

from ..dtypes import CANONICAL_TO_SAFETENSORS
from ..errors import CodecError, EditRefused
from .blobs import can_copy, write_component
from .output import Output
from .phases import Phase, PhasedWriter
from .plan import FilePlan, PlannedTensor

#: safetensors 0.8.0 ``Dtype`` declaration order; the writer sorts tensors by it, descending.
DTYPE_ORDER = ("bool", "F4", "F6_E2M3", "F6_E3M2", "uint8", "int8", "float8_e5m2", "float8_e4m3fn", "F8_E8M0",
               "int16", "uint16", "float16", "bfloat16", "int32", "uint32", "float32", "complex64", "float64",
               "int64", "uint64")
_RANK = {name: i for i, name in enumerate(DTYPE_ORDER)}


def buffer_order(tensors: list[PlannedTensor]) -> list[PlannedTensor]:
    """The reference writer's order: dtype rank descending, then name (bytewise)."""
    return sorted(tensors, key=lambda t: (-_RANK[t.dtype], t.name))


def header_bytes(metadata: dict[str, str], entries: dict[str, dict[str, Any]]) -> bytes:
    """The padded JSON header (without the size prefix)."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = {k: metadata[k] for k in sorted(metadata)}
    header.update(entries)
    text = _compact_json(header)
    return text + b" " * (-len(text) % 8)


def _compact_json(header: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON. The header holds text, integers and lists only, which orjson writes as ``json.dumps``
    does with these settings, several times faster (100,000 entries: ~0.1 s saved); what orjson refuses (a lone
    surrogate, an integer past 64 bits) goes json's way."""
    if orjson is not None:
        try:
            return orjson.dumps(header)
        except TypeError:
            pass
    try:
        return json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        raise EditRefused("a tensor name or metadata text is not valid Unicode (it holds a lone surrogate)",
                          rule="the header is UTF-8 JSON; rename the tensor or fix the metadata") from None


class SafetensorsWriter(PhasedWriter):
    """Writes a :class:`~.plan.FilePlan` as safetensors (dense, raw tensors only): every tensor must be dense with
    a ``data`` component of a safetensors dtype."""

    format_name = "safetensors"

    def __init__(self, out: Output, plan: FilePlan) -> None:
        super().__init__(out, plan)
        self.order: list[PlannedTensor] = []
        self.lengths: dict[int, int] = {}

    def write(self) -> None:
        self.write_header()
        self.write_data()
        self.finish()

    def write_header(self) -> None:
        self._expect("write the header", Phase.EMPTY)
        self.order = buffer_order(self.plan.tensors)
        entries: dict[str, dict[str, Any]] = {}
        position = 0
        for t in self.order:
            length = self._length(t)
            self.lengths[id(t)] = length
            entries[t.name] = {"dtype": CANONICAL_TO_SAFETENSORS[t.dtype], "shape": list(t.shape),
                               "data_offsets": [position, position + length]}
            position += length
        header = header_bytes(self.plan.attributes, entries)
        self.out.expect(self.plan.work() + len(header) + 8)
        self.out.write(struct.pack("<Q", len(header)) + header)
        self._advance(Phase.HEADER)

    def _length(self, t: PlannedTensor) -> int:
        c = t.components["data"]
        stored = c.data.stored()
        if stored is not None and can_copy(c.data, "raw", c.reencode, False):
            return stored.length
        length = c.data.decoded_length()
        if length is None:
            raise CodecError(f"the decoded size of tensor {t.name!r} is unknown", rule="dense size", tensor=t.name)
        return length

    def write_data(self) -> None:
        self._expect("write tensor data", Phase.HEADER)
        self._advance(Phase.BLOBS)
        for t in self.order:
            c = t.components["data"]
            written = write_component(self.out, c.data, encoding="raw", digest=None, reencode=c.reencode)
            if written.length != self.lengths[id(t)]:
                raise CodecError(f"tensor {t.name!r} produced {written.length} bytes, the header says "
                                 f"{self.lengths[id(t)]}", rule="data_offsets match the data", tensor=t.name)

    def finish(self) -> None:
        self._expect("finish", Phase.BLOBS)
        self._advance(Phase.CLOSED)
