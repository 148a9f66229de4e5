"""zTensor 0.1 and 1.x (``ZTEN0001`` / ``ZTEN1000``): format detection and the reader entry point.

The container (magic, footer, manifest size) is validated first and fatal problems raise; the manifest is
then turned into tensors by the layout's module, and the generic layout checks run over the result.
Tensor data is never read here.
"""
from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

from ..layout_check import check_layout
from ..model import Tensor, TensorFile, building_many
from ..source import Source
from . import zt_objects, zt_v01, zt_v10
from .zt_footer import decode_manifest, locate_manifest
from .zt_plain_bytes import read_plain

ALIGNMENT = 64
_READERS = {"v1.0": zt_v10.read_manifest, "v1.x-objects": zt_objects.read_manifest}


def read(source: Source) -> TensorFile:
    with building_many():
        return _read(source)


def _read(source: Source) -> TensorFile:
    loc = locate_manifest(source)
    plain = None if loc.layout == "v0.1" else read_plain(source.read(loc.offset, loc.size, "manifest"), loc.layout)
    root, problems = decode_manifest(source, loc) if plain is None else (plain[0], [])
    tensors: MutableSequence[Tensor]
    if loc.layout == "v0.1":
        tensors = zt_v01.read_tensors(root, loc.offset)
        attributes: dict[str, Any] = {}
        extra: dict[str, Any] = {}
    else:
        tensors, more, attributes, extra = _READERS[loc.layout](root, loc.offset, None if plain is None else plain[1])
        problems += more
    tf = TensorFile(path=source.path, format="zt", variant=loc.layout, attributes=attributes, tensors=tensors,
                    problems=problems, regions=list(loc.regions), source=source, extra=extra)
    check_layout(tf, source.size, alignment=ALIGNMENT, aliases=True)
    return tf

