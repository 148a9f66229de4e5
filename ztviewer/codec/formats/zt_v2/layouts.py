"""Layout rules (spec §5, profiles) checked at open, and what each object means in ztviewer's model.

``tensor.dtype`` becomes the logical dtype of the object's elements (the ``data`` or ``values`` part);
an unknown logical type or encoding marks the part ``refuse`` (structural access only, decoding says why);
unknown layouts are shown structurally with no problem (§5.2), opaque ``gguf.*`` ones too.
"""
from __future__ import annotations

import math
from typing import Any

import ztviewer.codec.formats.zt_v2.rules as rules

from ...model import Component, Tensor, error
from .vocab import ENCODINGS, LOGICAL, STORAGE, element_size

_INTEGER_WORDS = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}
_FLOAT_STORAGE = frozenset({"f64", "f32", "f16", "bf16"})
MX_ELEMENT_TYPES = {"f4_e2m1": "u8", "f8_e4m3fn": "u8", "f8_e5m2": "u8", None: "i8"}


def apply_layout(tensor: Tensor) -> None:
    """Check the object's layout rules and set its dtype and the per-part refusals."""
    for component in tensor.components.values():
        _mark_refusals(component)
    if tensor.extra_value("shape_invalid"):
        return
    spelling = tensor.layout_spelling or ""
    checker = _CHECKS.get(spelling)
    if checker is None:
        primary = tensor.components.get("data") or next(iter(tensor.components.values()), None)
        tensor.dtype = _logical_dtype(primary) if primary is not None else "unknown"
        if spelling.startswith("gguf.") and spelling.endswith("/1"):
            _fail_all(tensor, _gguf(tensor, spelling))
            tensor.extra["structural"] = f"layout {spelling!r} is an opaque GGUF block array; ztviewer shows " \
                                         "its bytes but does not decode ggml blocks"
        else:
            tensor.extra["structural"] = f"layout {spelling!r} is not known to ztviewer; shown structurally"
        return
    _fail_all(tensor, checker(tensor))


def _fail_all(tensor: Tensor, failures: list[tuple[str, str | None, str]]) -> None:
    for message, role, rule in failures:
        tensor.problems.append(error(message, tensor=tensor.name, component=role, rule=rule))


def _mark_refusals(component: Component) -> None:
    extra = component.extra
    logical = extra.get("type")
    if logical is not None and logical not in LOGICAL:
        extra["refuse"] = ((f"logical type {logical!r} is not registered; ztviewer shows the bytes but will not "
                           "reinterpret them"), rules.UNKNOWN_TYPE)
    elif component.encoding != "raw" and component.encoding not in ENCODINGS:
        extra["refuse"] = (f"encoding {component.encoding!r} is unknown; the stored bytes cannot be decoded",
                           rules.UNKNOWN_ENCODING)


def _logical_dtype(component: Component) -> str:
    logical = component.extra.get("type")
    if logical is None:
        return component.dtype or "unknown"
    spec = LOGICAL.get(logical)
    return spec.canonical if spec is not None else str(logical)


def _decoded(component: Component) -> int:
    return component.uncompressed_length if component.uncompressed_length is not None else component.length


def _size_of(component: Component, elements: int) -> int | None:
    return element_size(component.extra["dtype"], component.extra.get("type"), elements)


def _exact_parts(tensor: Tensor, names: tuple[str, ...], layout: str) -> list[tuple[str, str | None, str]]:
    if set(tensor.components) != set(names) or len(tensor.components) != len(names):
        return [((f"{layout} needs exactly the parts {', '.join(names)}; the object has "
                 f"{', '.join(tensor.components) or 'none usable'}"), None, rules.LAYOUT_RULE)]
    return []


def _dense(tensor: Tensor) -> list[tuple[str, str | None, str]]:
    failures = _exact_parts(tensor, ("data",), "dense")
    if failures:
        data = tensor.components.get("data")
        tensor.dtype = _logical_dtype(data) if data is not None else "unknown"
        return failures
    data = tensor.components["data"]
    tensor.dtype = _logical_dtype(data)
    elements = math.prod(tensor.shape)
    expected = _size_of(data, elements)
    if data.extra.get("type") == "f4_e2m1":
        data.extra["elements"] = elements
    if expected is not None and _decoded(data) != expected:
        return [((f"decoded size is {_decoded(data):,} bytes, {elements:,} elements of "
                 f"{data.extra.get('type') or data.extra['dtype']} need {expected:,}"), "data", rules.DENSE_SIZE)]
    return []


def _index_part(component: Component, role: str, layout: str) -> list[tuple[str, str | None, str]]:
    if component.extra["dtype"] not in ("u32", "u64") or "type" in component.extra:
        return [(f"{layout} '{role}' must be plain u32 or u64, not {component.extra['dtype']}"
                 + (f" with type {component.extra['type']!r}" if "type" in component.extra else ""),
                 role, rules.LAYOUT_RULE)]
    return []


def _values_size(tensor: Tensor, nnz: int, layout: str) -> list[tuple[str, str | None, str]]:
    values = tensor.components["values"]
    tensor.dtype = _logical_dtype(values)
    tensor.extra["nnz"] = nnz
    if values.extra.get("type") == "f4_e2m1":
        values.extra["elements"] = nnz
    expected = _size_of(values, nnz)
    if expected is not None and _decoded(values) != expected:
        return [(f"{layout} 'values' decode to {_decoded(values):,} bytes; nnz {nnz:,} needs {expected:,}",
                 "values", rules.LAYOUT_RULE)]
    return []


def _csr(tensor: Tensor) -> list[tuple[str, str | None, str]]:
    layout = "zt.sparse_csr/1"
    if len(tensor.shape) != 2:
        return [(f"{layout} needs a rank-2 shape, got {list(tensor.shape)}", None, rules.LAYOUT_RULE)]
    failures = _exact_parts(tensor, ("values", "indices", "indptr"), layout)
    if failures:
        return failures
    indices, indptr = tensor.components["indices"], tensor.components["indptr"]
    failures = _index_part(indices, "indices", layout)
    if failures:
        return failures
    if indptr.extra["dtype"] != indices.extra["dtype"] or "type" in indptr.extra:
        return [(f"{layout} 'indptr' must have the dtype of 'indices' ({indices.extra['dtype']}), no type",
                 "indptr", rules.LAYOUT_RULE)]
    width = STORAGE[indices.extra["dtype"]][1]
    expected = (tensor.shape[0] + 1) * width
    if _decoded(indptr) != expected:
        return [((f"'indptr' decodes to {_decoded(indptr):,} bytes; rows + 1 = {tensor.shape[0] + 1} entries "
                 f"need {expected:,}"), "indptr", rules.LAYOUT_RULE)]
    if _decoded(indices) % width:
        return [(f"'indices' decode to {_decoded(indices):,} bytes, not a multiple of {width}", "indices",
                 rules.LAYOUT_RULE)]
    return _values_size(tensor, _decoded(indices) // width, layout)


def _coo(tensor: Tensor) -> list[tuple[str, str | None, str]]:
    layout = "zt.sparse_coo/1"
    failures = _exact_parts(tensor, ("values", "coords"), layout) or _index_part(
        tensor.components["coords"], "coords", layout)
    if failures:
        return failures
    coords = tensor.components["coords"]
    if not tensor.shape:
        return _scalar_coo(tensor, coords, layout)
    step = STORAGE[coords.extra["dtype"]][1] * len(tensor.shape)
    if _decoded(coords) % step:
        return [(f"'coords' decode to {_decoded(coords):,} bytes, not a multiple of width × ndim = {step}",
                 "coords", rules.LAYOUT_RULE)]
    return _values_size(tensor, _decoded(coords) // step, layout)


def _scalar_coo(tensor: Tensor, coords: Component, layout: str) -> list[tuple[str, str | None, str]]:
    """Rank 0 (§3.3: an empty shape is a scalar, one element): no coordinates (ndim × nnz × width = 0 bytes) and
    at most one value, the scalar's. ztensor 2.1.2 reads such objects."""
    if _decoded(coords):
        return [(f"{layout} of rank 0 has no coordinates, but 'coords' decode to {_decoded(coords):,} bytes",
                 "coords", rules.LAYOUT_RULE)]
    values = tensor.components["values"]
    one = _size_of(values, 1)
    if one is not None and _decoded(values) > one:
        return [(f"{layout} of rank 0 (a scalar) holds at most one value; 'values' decode to {_decoded(values):,} "
                 f"bytes, one value is {one}", "values", rules.LAYOUT_RULE)]
    return _values_size(tensor, int(_decoded(values) > 0), layout)


def _uint(attributes: dict[str, Any], key: str) -> int | None:
    value = attributes.get(key)
    return value if type(value) is int and value >= 0 else None


def _mx(tensor: Tensor) -> list[tuple[str, str | None, str]]:
    layout = "zt.mx/1"
    failures = _exact_parts(tensor, ("data", "scales"), layout)
    if failures:
        return failures
    data, scales = tensor.components["data"], tensor.components["scales"]
    tensor.dtype = _logical_dtype(data)
    attributes = tensor.attributes
    block = _uint(attributes, "block_size")
    rank = len(tensor.shape)
    axis = _uint(attributes, "axis") if "axis" in attributes else rank - 1
    bad: tuple[str, str | None] | None = None
    if scales.extra["dtype"] != "u8" or scales.extra.get("type") != "f8_e8m0":
        bad = ("'scales' must be u8 with type f8_e8m0", "scales")
    elif attributes.get("scale_form") != "e8m0_exponent":
        bad = ("attribute scale_form must be 'e8m0_exponent'", None)
    elif block is None or block < 2:
        bad = ("attribute block_size must be an integer >= 2", None)
    elif axis is None or not 0 <= axis < rank:
        bad = (f"attribute axis must be < rank {rank}", None)
    elif tensor.shape[axis] % block:
        bad = (f"block_size {block} does not divide shape[{axis}] = {tensor.shape[axis]}", None)
    elif MX_ELEMENT_TYPES.get(data.extra.get("type"), "?") != data.extra["dtype"]:
        bad = ("'data' must be f4_e2m1, f8_e4m3fn, f8_e5m2 (over u8) or plain i8", "data")
    if bad is not None:
        return [(f"{layout}: {bad[0]}", bad[1], rules.LAYOUT_RULE)]
    assert block is not None and axis is not None
    elements = math.prod(tensor.shape)
    expected = _size_of(data, elements)
    if expected is not None and _decoded(data) != expected:
        return [(f"{layout}: 'data' decodes to {_decoded(data):,} bytes; {elements:,} elements need {expected:,}",
                 "data", rules.LAYOUT_RULE)]
    if _decoded(scales) != elements // block:
        return [(f"{layout}: 'scales' decode to {_decoded(scales):,} bytes; {elements // block:,} blocks expected",
                 "scales", rules.LAYOUT_RULE)]
    tensor.extra["mx"] = {"block_size": block, "axis": axis}
    return []


def _quant_group(tensor: Tensor) -> list[tuple[str, str | None, str]]:
    from .quant import check_quant_group

    tensor.extra["structural"] = ("zt.quant_group/1 is checked but not decoded by ztviewer: the profile does not "
                                  "state the order of the scales across groups and lanes")
    return check_quant_group(tensor)


def _gguf(tensor: Tensor, layout: str) -> list[tuple[str, str | None, str]]:
    failures = _exact_parts(tensor, ("data",), layout)
    if failures:
        return failures
    data = tensor.components["data"]
    if data.extra["dtype"] != "u8" or "type" in data.extra:
        return [(f"{layout}: 'data' must be plain u8", "data", rules.LAYOUT_RULE)]
    per_block = _uint(tensor.attributes, "elems_per_block")
    block_bytes = _uint(tensor.attributes, "block_bytes")
    elements = math.prod(tensor.shape)
    if not per_block or not block_bytes:
        return [(f"{layout}: attributes elems_per_block and block_bytes must be integers >= 1", None,
                 rules.LAYOUT_RULE)]
    if elements % per_block:
        return [(f"{layout}: elems_per_block {per_block} does not divide {elements:,} elements", None,
                 rules.LAYOUT_RULE)]
    if _decoded(data) != elements // per_block * block_bytes:
        return [((f"{layout}: 'data' decodes to {_decoded(data):,} bytes; {elements // per_block:,} blocks of "
                 f"{block_bytes} need {elements // per_block * block_bytes:,}"), "data", rules.LAYOUT_RULE)]
    return []


_CHECKS = {"dense": _dense, "zt.sparse_csr/1": _csr, "zt.sparse_coo/1": _coo, "zt.mx/1": _mx,
           "zt.quant_group/1": _quant_group}
