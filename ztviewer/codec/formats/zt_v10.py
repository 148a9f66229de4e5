"""zTensor v1.0 "tensors" layout (ztensor 1.0.0 / 1.0.1, seed 000): ``{version, generator, attributes,
tensors: {name: {dtype, shape, format, components: {role: {offset, length, [encoding], [digest]}}}}}``.
"""
from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

from ..dtypes import ZT_LONG_NAMES
from ..errors import SchemaError
from ..model import Component, Problem, Tensor, error, warning
from ..quantized import LAYOUT as QUANTIZED_LAYOUT
from ..quantized import RULE_TEXT as QUANTIZED_RULE
from .zt_fast import v10_tensors
from .zt_fields import (
    INDEX_ROLES,
    REQUIRED_ROLES,
    SPARSE_ROLES,
    STRUCTURAL_NOTE,
    apply_tensor_train,
    cbor_type,
    check_required_roles,
    check_sizes,
    check_version,
    parse_component,
    parse_shape,
)

_DTYPES = frozenset(ZT_LONG_NAMES)
_TENSOR_KEYS = frozenset({"dtype", "shape", "format", "components"})
_ROOT_KEYS = frozenset({"version", "generator", "attributes", "tensors"})


def read_manifest(root: Any, offset: int, table: MutableSequence[Tensor] | None = None
                  ) -> tuple[MutableSequence[Tensor], list[Problem], dict[str, Any], dict[str, Any]]:
    """(tensors, file problems, file attributes, extra) of a decoded v1.0 manifest (``table``: its tensors,
    already read by :mod:`.zt_plain_bytes`)."""
    problems: list[Problem] = []
    entries = root_map(root, "tensors", offset, problems, supported_minor=0)
    attributes = root.get("attributes", {})
    if type(attributes) is not dict:
        problems.append(error(f"'attributes' must be a map, got {cbor_type(attributes)}", offset=offset,
                              rule="v1.0: attributes is a map"))
        attributes = {}
    extra = {k: root[k] for k in ("version", "generator") if k in root}
    if not _ROOT_KEYS.issuperset(root):
        extra["unknown_keys"] = {k: v for k, v in root.items() if k not in _ROOT_KEYS}
    return table if table is not None else v10_tensors(entries, _tensor), problems, attributes, extra


def root_map(root: Any, key: str, offset: int, problems: list[Problem], supported_minor: int) -> dict[Any, Any]:
    """Check the root map and its version; return the ``tensors`` / ``objects`` map (fatal if absent)."""
    if type(root) is not dict:
        raise SchemaError(f"the v1 manifest must be a CBOR map, got a {cbor_type(root)}", offset=offset,
                          rule="v1: the manifest is a map")
    check_version(root.get("version"), supported_minor, offset, problems)
    entries = root.get(key)
    if entries is None:
        other = "objects" if key == "tensors" else "tensors"
        hint = f" (it has {other!r}: is the footer damaged?)" if other in root else ""
        raise SchemaError(f"the manifest has no {key!r} map{hint}; keys present: {sorted(map(str, root))}",
                          offset=offset, rule=f"v1: the root map holds {key!r}")
    if type(entries) is not dict:
        raise SchemaError(f"{key!r} must be a map of name → entry, got a {cbor_type(entries)}", offset=offset,
                          rule=f"v1: {key!r} is a map")
    return entries


def entry_name(index: int, name: Any, problems: list[Problem]) -> str:
    if type(name) is str:
        return name
    label = f"#{index}"
    problems.append(error(f"entry #{index} is keyed by a {cbor_type(name)} {name!r:.40}, not a text string",
                          tensor=label, rule="v1: names are text strings"))
    return label


def parse_layout(fmt: Any, name: str, problems: list[Problem]) -> str:
    if type(fmt) is str:
        if fmt == QUANTIZED_LAYOUT:      # ztensor 1.2.x: decoded by a rule the file does not state
            problems.append(warning(f"format {fmt!r} records no dequantization rule; ztviewer shows values "
                                    f"{QUANTIZED_RULE}", tensor=name, rule="v1.0 §7.3: new formats are extensions"))
        elif fmt not in REQUIRED_ROLES and fmt != "tensor_train":
            problems.append(warning(f"format {fmt!r} {STRUCTURAL_NOTE}", tensor=name,
                                    rule="v1.0 §7.3: new formats are extensions"))
        return fmt
    problems.append(error("missing required key 'format'" if fmt is None
                          else f"'format' must be a text string, got {cbor_type(fmt)}", tensor=name,
                          rule="v1: format is dense | sparse_csr | sparse_coo | …"))
    return "unknown"


def parse_components(raw: Any, name: str, layout: str, dtype: str | None, objects: bool,
                     problems: list[Problem]) -> dict[str, Component]:
    if type(raw) is not dict:
        problems.append(error("missing required key 'components'" if raw is None
                              else f"'components' must be a map, got {cbor_type(raw)}", tensor=name,
                              rule="v1: components is a map of role → range"))
        return {}
    components: dict[str, Component] = {}
    known = layout in REQUIRED_ROLES
    for role, entry in raw.items():
        if type(role) is not str:
            problems.append(error(f"component role {role!r:.40} is not a text string", tensor=name,
                                  rule="v1: roles are text strings"))
            continue
        if objects or not known:
            role_dtype = None
        else:
            role_dtype = "uint64" if role in INDEX_ROLES and layout in SPARSE_ROLES else dtype
        component = parse_component(role, entry, name, problems, objects, role_dtype)
        if component is not None:
            components[role] = component
    return components


def _tensor(index: int, name: Any, entry: Any) -> Tensor:
    problems: list[Problem] = []
    name = entry_name(index, name, problems)
    if type(entry) is not dict:
        problems.append(error(f"tensor entry must be a map, got {cbor_type(entry)}", tensor=name,
                              rule="v1.0: tensors maps names to tensor maps"))
        return Tensor(name, "unknown", (), "unknown", {}, {}, None, problems, index, {})
    dtype = entry.get("dtype")
    if type(dtype) is not str or dtype not in _DTYPES:
        problems.append(error("missing required key 'dtype'" if dtype is None
                              else f"unknown dtype {dtype!r:.40} (v1.0 dtypes: {', '.join(ZT_LONG_NAMES)})",
                              tensor=name, rule="v1.0 §4.2 dtype list"))
        dtype = dtype if type(dtype) is str else "unknown"
    shape = parse_shape(entry.get("shape"))
    shape_ok = True
    if isinstance(shape, str):
        problems.append(error(shape, tensor=name, rule="v1: shape is an array of unsigned integers"))
        shape = ()
        shape_ok = False
    fmt = entry.get("format")
    layout = parse_layout(fmt, name, problems)
    raw_components = entry.get("components")
    components = parse_components(raw_components, name, layout, dtype, False, problems)
    attributes = entry.get("attributes")
    attributes = attributes if type(attributes) is dict else {}
    extra = {} if _TENSOR_KEYS.issuperset(entry) else {
        "unknown_keys": {k: v for k, v in entry.items() if k not in _TENSOR_KEYS and not (
            k == "attributes" and v is attributes)}}
    tensor = Tensor(name, dtype, shape, layout, components, attributes, fmt if type(fmt) is str else None,
                    problems, index, extra)
    apply_tensor_train(tensor)
    if type(raw_components) is dict:
        check_required_roles(tensor, raw_components)
    if shape_ok:
        check_sizes(tensor)
    return tensor
