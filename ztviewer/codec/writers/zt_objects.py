"""zTensor v1.x "objects" layout, as ztensor 1.0.2 / 1.1.x (``version "1.1.0"``) and 1.2.x
(``"1.2.0"``) write it (real-world-writers.md §3).

``ZTEN1000`` at 0, blobs 64-aligned, then CBOR ``{version, objects}`` sorted by name, the manifest size as
a u64 and ``ZTEN1000`` again at EOF-8. Object keys: ``shape, format, [attributes], components``;
component keys: ``dtype`` (short name), ``[type]`` (complex64 / complex128 / f8_*), ``offset, length,
[uncompressed_length]`` (1.2 and later, zstd only), ``[encoding]`` (zstd only), ``[digest]``. File
attributes, when a document has any, go in a root ``attributes`` map that ztensor 1.2 reads past.
"""
from __future__ import annotations

from typing import Any

from ..dtypes import CANONICAL_TO_ZT_SHORT, ZT_LOGICAL_TYPES
from ..errors import CodecError
from .blobs import FileBlob
from .plan import PlannedComponent, PlannedTensor, with_unknown_keys
from .zt_common import ZtWriter, manifest_attributes, sorted_map

#: canonical logical dtype → (storage short name, logical ``type``)
LOGICAL = {logical: (CANONICAL_TO_ZT_SHORT[storage], type_name)
           for type_name, (logical, storage) in ZT_LOGICAL_TYPES.items()}


def short_dtype(dtype: str | None) -> tuple[str, str | None]:
    """(component ``dtype``, ``type`` or None) of a canonical dtype."""
    if dtype in LOGICAL:
        return LOGICAL[dtype]
    if dtype in CANONICAL_TO_ZT_SHORT:
        return CANONICAL_TO_ZT_SHORT[dtype], None
    raise CodecError(f"the objects layout has no dtype {dtype!r}", rule="v1.x component dtypes")


class ZtObjectsWriter(ZtWriter):
    """Writes a :class:`~.plan.FilePlan` as the v1.x objects layout (see the module docstring)."""

    format_name = "zTensor v1.x objects"
    magic = b"ZTEN1000"

    @property
    def version(self) -> str:
        return self.plan.version or "1.2.0"

    @property
    def records_uncompressed(self) -> bool:
        major, _, rest = self.version.partition(".")
        return (int(major), int(rest.partition(".")[0] or 0)) >= (1, 2)

    def prepare(self, component: PlannedComponent) -> None:
        if self.records_uncompressed and component.encoding == "zstd" and isinstance(component.data, FileBlob):
            component.data.count_decoded(self.out)

    def manifest(self) -> dict[str, Any]:
        root: dict[str, Any] = {"version": self.version}
        if self.plan.attributes:
            root["attributes"] = sorted_map(self.plan.attributes)
        root["objects"] = sorted_map({t.name: self._object(t) for t in self.plan.tensors})
        return with_unknown_keys(root, self.plan.unknown_root)

    def _object(self, t: PlannedTensor) -> dict[str, Any]:
        entry: dict[str, Any] = {"shape": list(t.shape), "format": t.spelling}
        attributes = manifest_attributes(t)
        if attributes:
            entry["attributes"] = sorted_map(attributes)
        components = {}
        for role, c in t.components.items():
            w = self.result(t, role)
            short, logical = short_dtype(c.dtype)
            comp: dict[str, Any] = {"dtype": short}
            if logical is not None:
                comp["type"] = logical
            comp["offset"] = w.offset
            comp["length"] = w.length
            if w.encoding != "raw":
                if self.records_uncompressed and w.uncompressed_length is not None:
                    comp["uncompressed_length"] = w.uncompressed_length
                comp["encoding"] = w.encoding
            if w.digest is not None:
                comp["digest"] = w.digest
            components[role] = with_unknown_keys(comp, c.unknown_keys)
        entry["components"] = sorted_map(components)
        return with_unknown_keys(entry, t.unknown_keys)

    def footer(self, manifest_size: int) -> bytes:
        return manifest_size.to_bytes(8, "little") + self.magic
