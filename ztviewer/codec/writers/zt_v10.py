"""zTensor v1.0 "tensors" layout, byte-compatible with ztensor 1.0.0 / 1.0.1 (specs/ztensor-v1.0.md and
real-world-writers.md §2).

``ZTEN1000`` at 0, blobs 64-aligned with zero padding, then a definite-length CBOR map
``{version: "1.0", generator, attributes, tensors}`` and its size as a u64 at EOF-8 (no trailing magic).
``tensors`` is sorted by name, as are each tensor's ``components``; tensor keys go
``dtype, shape, format, [attributes], components`` and component keys ``offset, length, [encoding],
[digest]`` with ``encoding`` written only for ``zstd``.

Extensions beyond ztensor 1.0.1 (which reads past them): a tensor ``attributes`` map (per-tensor
attributes, and the ``ranks`` of a ``tensor_train``), and a component ``dtype`` (long name) for layouts
other than dense / sparse / tensor_train whose components differ from the tensor dtype.
"""
from __future__ import annotations

from typing import Any

from ... import __version__
from .cbor import U64_MAX, Encoded, dumps_plain
from .plan import PlannedTensor, with_unknown_keys
from .zt_common import ZtWriter, manifest_attributes, sorted_map

GENERATOR = f"ztviewer {__version__}"
_STANDARD = ("dense", "sparse_csr", "sparse_coo", "tensor_train")


class ZtV10Writer(ZtWriter):
    """Writes a :class:`~.plan.FilePlan` as zTensor v1.0 (see the module docstring for the layout)."""

    format_name = "zTensor v1.0"
    magic = b"ZTEN1000"

    def manifest(self) -> dict[str, Any]:
        tensors: Any = sorted_map({t.name: self._tensor(t) for t in self.plan.tensors})
        if all(map(_plain, self.plan.tensors)):
            tensors = Encoded(dumps_plain(tensors, "manifest.tensors"))
        root: dict[str, Any] = {
            "version": "1.0",
            "generator": GENERATOR if self.plan.generator is None else self.plan.generator,
            "attributes": sorted_map(self.plan.attributes),
            "tensors": tensors,
        }
        return with_unknown_keys(root, self.plan.unknown_root)

    def _tensor(self, t: PlannedTensor) -> dict[str, Any]:
        entry: dict[str, Any] = {"dtype": t.dtype, "shape": list(t.shape), "format": t.spelling}
        if t.attributes or t.ranks is not None:
            entry["attributes"] = sorted_map(manifest_attributes(t))
        components = {}
        for role, c in t.components.items():
            w = self.result(t, role)
            comp: dict[str, Any] = {"offset": w.offset, "length": w.length}
            if w.encoding != "raw":
                comp["encoding"] = w.encoding
            if w.digest is not None:
                comp["digest"] = w.digest
            if t.layout not in _STANDARD and c.dtype is not None and c.dtype != t.dtype:
                comp["dtype"] = c.dtype
            components[role] = with_unknown_keys(comp, c.unknown_keys)
        entry["components"] = sorted_map(components) if len(components) > 1 else components
        return with_unknown_keys(entry, t.unknown_keys)


def _plain(t: PlannedTensor) -> bool:
    """Whether the tensor's manifest entry holds only text, lists and maps, and integers in [0, 2**64) (what
    :func:`dumps_plain` may encode): no attributes or unknown keys (any CBOR value), no oversized dimension."""
    return not (t.attributes or t.ranks is not None or t.unknown_keys
                or any(c.unknown_keys for c in t.components.values())) and \
        all(type(d) is int and 0 <= d <= U64_MAX for d in t.shape)
