"""zTensor 0.1 and 1.x (``ZTEN0001`` / ``ZTEN1000``): format detection and the reader entry point.

The container (magic, footer, manifest size) is validated first and fatal problems raise; the manifest is
then turned into tensors by the layout's module, and the generic layout checks run over the result.
Tensor data is never read here.
"""
from __future__ import annotations

from collections.abc import Callable, MutableSequence
from typing import Any

from ..gc_pause import building_many
from ..layout_check import check_layout
from ..model import Problem, Tensor, TensorFile
from ..source import Source
from . import zt_v10
from .zt_footer import decode_manifest, locate_manifest
from .zt_plain_bytes import read_plain

ALIGNMENT = 64


def read(source: Source) -> TensorFile:
    with building_many():
        return _read(source)


def _read(source: Source) -> TensorFile:
    loc = locate_manifest(source)
    plain = None if loc.layout == "v0.1" else read_plain(source.read(loc.offset, loc.size, "manifest"), loc.layout)
    root, problems = decode_manifest(source, loc) if plain is None else (plain[0], [])
    tensors: MutableSequence[Tensor]
    if loc.layout == "v0.1":
        from . import zt_v01  # here: most files are v1.x

        tensors = zt_v01.read_tensors(root, loc.offset)
        attributes: dict[str, Any] = {}
        extra: dict[str, Any] = {}
    else:
        tensors, more, attributes, extra = _manifest_reader(loc.layout)(root, loc.offset,
                                                                         None if plain is None else plain[1])
        problems += more
    tf = TensorFile(path=source.path, format="zt", variant=loc.layout, attributes=attributes, tensors=tensors,
                    problems=problems, regions=list(loc.regions), source=source, extra=extra)
    check_layout(tf, source.size, alignment=ALIGNMENT, aliases=True)
    return tf


ManifestReader = Callable[..., tuple[MutableSequence[Tensor], list[Problem], dict[str, Any], dict[str, Any]]]


def _manifest_reader(layout: str) -> ManifestReader:
    """The 1.x layout's manifest reader (the objects layout's is imported for a file of that layout)."""
    if layout == "v1.0":
        return zt_v10.read_manifest
    from . import zt_objects

    return zt_objects.read_manifest
