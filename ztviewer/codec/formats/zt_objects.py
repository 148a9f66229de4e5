"""zTensor v1.x "objects" layout (ztensor 1.0.2, 1.1.x, 1.2.x; no seed describes it):
``{version: "1.1.0" | "1.2.0", objects: {name: {shape, format, [attributes], components}}}`` where each
component carries its own short dtype, an optional logical ``type`` and (1.2) ``uncompressed_length``.
"""
from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

from ..dtypes import ZT_LOGICAL_TYPES
from ..model import Problem, Tensor, error, warning
from .zt_fast import objects_tensors
from .zt_fields import (
    INDEX_ROLES,
    SPARSE_ROLES,
    apply_tensor_train,
    cbor_type,
    check_required_roles,
    check_sizes,
    logical_dtype,
    parse_shape,
)
from .zt_v10 import entry_name, parse_components, parse_layout, root_map

#: the newest objects-layout minor version this reader knows ("1.2.0", written by ztensor 1.2.x).
SUPPORTED_MINOR = 2
_OBJECT_KEYS = frozenset({"shape", "format", "attributes", "components"})
_ROOT_KEYS = frozenset({"version", "attributes", "objects"})


def read_manifest(root: Any, offset: int, table: MutableSequence[Tensor] | None = None
                  ) -> tuple[MutableSequence[Tensor], list[Problem], dict[str, Any], dict[str, Any]]:
    """(tensors, file problems, file attributes, extra) of a decoded objects-layout manifest (``table``: its tensors,
    already read by :mod:`.zt_plain_bytes`)."""
    problems: list[Problem] = []
    entries = root_map(root, "objects", offset, problems, supported_minor=SUPPORTED_MINOR)
    attributes = root.get("attributes", {})
    if type(attributes) is not dict:
        problems.append(error(f"'attributes' must be a map, got {cbor_type(attributes)}", offset=offset,
                              rule="v1.x: attributes is a map"))
        attributes = {}
    extra = {k: root[k] for k in ("version", "generator") if k in root}
    if not _ROOT_KEYS.issuperset(root):
        extra["unknown_keys"] = {k: v for k, v in root.items() if k not in _ROOT_KEYS}
    return table if table is not None else objects_tensors(entries, _object), problems, attributes, extra


def _object(index: int, name: Any, entry: Any) -> Tensor:
    problems: list[Problem] = []
    name = entry_name(index, name, problems)
    if type(entry) is not dict:
        problems.append(error(f"object entry must be a map, got {cbor_type(entry)}", tensor=name,
                              rule="v1.x: objects maps names to object maps"))
        return Tensor(name, "unknown", (), "unknown", {}, {}, None, problems, index, {})
    shape = parse_shape(entry.get("shape"))
    shape_ok = True
    if isinstance(shape, str):
        problems.append(error(shape, tensor=name, rule="v1.x: shape is an array of unsigned integers"))
        shape = ()
        shape_ok = False
    fmt = entry.get("format")
    layout = parse_layout(fmt, name, problems)
    raw_components = entry.get("components")
    components = parse_components(raw_components, name, layout, None, True, problems)
    extra: dict[str, Any] = {}
    attributes = entry.get("attributes", {})
    if type(attributes) is not dict:
        problems.append(error(f"'attributes' must be a map, got {cbor_type(attributes)}; kept in extra",
                              tensor=name, rule="v1.x: object attributes is a map"))
        extra["attributes"] = attributes
        attributes = {}
    if not _OBJECT_KEYS.issuperset(entry):
        extra["unknown_keys"] = {k: v for k, v in entry.items() if k not in _OBJECT_KEYS}
    primary = components.get("data" if layout == "dense" else "values")
    if primary is None and layout not in SPARSE_ROLES and layout != "dense" and components:
        primary = next(iter(components.values()))
    dtype = (logical_dtype(primary) if primary is not None else None) or "unknown"
    logical_type = primary.extra.get("type") if primary is not None and primary.extra else None
    if type(logical_type) is str and logical_type in ZT_LOGICAL_TYPES:
        extra["logical_type"] = ZT_LOGICAL_TYPES[logical_type][0]
    tensor = Tensor(name, dtype, shape, layout, components, attributes, fmt if type(fmt) is str else None,
                    problems, index, extra)
    apply_tensor_train(tensor)
    if type(raw_components) is dict:
        check_required_roles(tensor, raw_components)
    if layout in SPARSE_ROLES:
        for role in INDEX_ROLES.intersection(components):
            if components[role].dtype != "uint64":
                problems.append(warning(f"index component dtype is {components[role].dtype}, not u64",
                                        tensor=name, component=role, rule="v1.x sparse indices are u64"))
    if shape_ok:
        check_sizes(tensor)
    return tensor
