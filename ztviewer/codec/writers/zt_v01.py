"""zTensor v0.1 (``ZTEN0001``), byte-compatible with ztensor 0.1.4 (specs/ztensor-v0.1.md and
real-world-writers.md §1).

Blobs 64-aligned with zero padding; the manifest is a definite-length CBOR array of *indefinite-length*
tensor maps with keys ``name, offset, size, dtype, layout, shape, encoding, [data_endianness], [checksum]``
followed by the custom fields (the tensor's attributes) in sorted order; u64 manifest size at EOF-8.
``data_endianness`` is written for raw multi-byte data only (``big`` when big-endian bytes are copied
unchanged; re-encoded data is always little-endian). The checksum is ``crc32c:0x%08X`` (or ``sha256:…``)
over the stored bytes. Sparse tensors exist only in the crate's packed one-blob layout, copied as they are.
"""
from __future__ import annotations

from typing import Any

from ..dtypes import DTYPES
from .blobs import Written
from .cbor import IndefiniteMap
from .plan import PlannedTensor
from .zt_common import ZtWriter, sorted_map


class ZtV01Writer(ZtWriter):
    """Writes a :class:`~.plan.FilePlan` as zTensor v0.1 (one ``data`` component per tensor)."""

    format_name = "zTensor v0.1"
    magic = b"ZTEN0001"
    keep_byte_order = True

    def manifest(self) -> list[IndefiniteMap]:
        return [self._entry(t) for t in self.plan.tensors]

    def _entry(self, t: PlannedTensor) -> IndefiniteMap:
        (role,) = t.components
        w: Written = self.result(t, role)
        entry: dict[str, Any] = {"name": t.name, "offset": w.offset, "size": w.length, "dtype": t.dtype,
                                 "layout": t.spelling, "shape": list(t.shape), "encoding": w.encoding}
        info = DTYPES.get(t.dtype)
        if w.encoding == "raw" and info is not None and info.itemsize > 1:
            entry["data_endianness"] = w.byte_order
        if w.digest is not None:
            entry["checksum"] = w.digest
        entry.update(sorted_map(t.attributes))
        return IndefiniteMap(entry)
