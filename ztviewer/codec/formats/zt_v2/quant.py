"""``zt.quant_group/1`` (parametric affine group quantization): metadata rules at open."""
from __future__ import annotations

import math
from typing import Any

import ztviewer.codec.formats.zt_v2.rules as rules

from ...model import Component, Tensor
from .vocab import STORAGE

_LAYOUT = "zt.quant_group/1"
_WORDS = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}
_SIGNED = {"i8": "u8", "i16": "u16", "i32": "u32", "i64": "u64"}
_BITS = frozenset({2, 3, 4, 5, 6, 8})
_FLOATS = frozenset({"f64", "f32", "f16", "bf16"})


def _decoded(component: Component) -> int:
    return component.uncompressed_length if component.uncompressed_length is not None else component.length


def _fail(message: str, role: str | None = None) -> list[tuple[str, str | None, str]]:
    return [(f"{_LAYOUT}: {message}", role, rules.LAYOUT_RULE)]


def _uint(mapping: Any, key: str) -> int | None:
    value = mapping.get(key) if type(mapping) is dict else None
    return value if type(value) is int and value >= 0 else None


def check_quant_group(tensor: Tensor) -> list[tuple[str, str | None, str]]:
    """The profile's metadata rules; on success ``tensor.extra["quant_group"]`` holds the parameters."""
    attributes = tensor.attributes
    parts = tensor.components
    data, scales = parts.get("data"), parts.get("scales")
    tensor.dtype = "float32"
    if data is None or scales is None:
        return _fail("parts 'data' and 'scales' are required")
    bits, group, axis = _uint(attributes, "bits"), _uint(attributes, "group_size"), _uint(attributes, "axis")
    packing, zero_point = attributes.get("packing"), attributes.get("zero_point")
    scale_form = attributes.get("scale_form")
    if bits not in _BITS:
        return _fail("attribute bits must be 2, 3, 4, 5, 6 or 8")
    if group is None or axis is None or type(packing) is not dict or type(zero_point) is not dict:
        return _fail("attributes group_size, axis, packing and zero_point are required")
    word = packing.get("word")
    order = packing.get("order")
    per_word = _uint(packing, "per_word")
    if word not in _WORDS or order not in ("lsb_first", "msb_first"):
        return _fail("packing.word must be u8/u16/u32/u64 and packing.order lsb_first or msb_first")
    width = _WORDS[word]
    if _SIGNED.get(data.extra["dtype"], data.extra["dtype"]) != word or "type" in data.extra:
        return _fail(f"'data' dtype {data.extra['dtype']} does not match packing.word {word}", "data")
    if (8 * width) % bits or per_word != 8 * width // bits:
        return _fail(f"bits {bits} must divide {8 * width} and per_word must be {8 * width // bits}")
    rank = len(tensor.shape)
    if not axis < rank:
        return _fail(f"axis {axis} must be < rank {rank}")
    along = tensor.shape[axis]
    if group and along % group:
        return _fail(f"group_size {group} does not divide shape[{axis}] = {along}")
    form = zero_point.get("form")
    expected_parts = {"data", "scales"} | ({"zeros"} if form == "tensor" else set())
    if form not in ("none", "implied", "tensor") or set(parts) != expected_parts:
        return _fail(f"zero_point.form {form!r:.30} needs parts {sorted(expected_parts)}, the object has "
                     f"{sorted(parts)}")
    if form == "implied" and type(zero_point.get("value")) is not int:
        return _fail("zero_point.value (an integer) is required when form is 'implied'")
    zero_packing = zero_point.get("packing")
    if form == "tensor" and zero_packing not in ("same_as_data", "plain"):
        return _fail("zero_point.packing must be 'same_as_data' or 'plain'")
    if scale_form == "e8m0_exponent":
        if scales.extra["dtype"] != "u8" or scales.extra.get("type") != "f8_e8m0":
            return _fail("scale_form e8m0_exponent needs 'scales' u8 with type f8_e8m0", "scales")
    elif scale_form in ("f32_factors", "f16_factors"):
        if scales.extra["dtype"] not in _FLOATS or "type" in scales.extra:
            return _fail(f"scale_form {scale_form} needs a float 'scales' dtype", "scales")
    else:
        return _fail("scale_form must be f32_factors, f16_factors or e8m0_exponent")
    codes = math.prod(tensor.shape)
    groups = (along if group == 0 else along // group) if along else 0
    lanes = codes // along if along else 0
    sizes = [("data", data, codes // per_word * width, codes % per_word == 0),
             ("scales", scales, groups * lanes * STORAGE[scales.extra["dtype"]][1], True)]
    zeros = parts.get("zeros")
    if zeros is not None:
        if zero_packing == "plain":
            sizes.append(("zeros", zeros, groups * lanes * STORAGE[zeros.extra["dtype"]][1], True))
        else:
            sizes.append(("zeros", zeros, groups * lanes // per_word * width, groups * lanes % per_word == 0))
    for role, component, expected, whole in sizes:
        if not whole or _decoded(component) != expected:
            return _fail(f"'{role}' decodes to {_decoded(component):,} bytes, {expected:,} expected", role)
    tensor.extra["quant_group"] = {"bits": bits, "group_size": group, "axis": axis, "word": word, "order": order,
                                   "per_word": per_word, "scale_form": scale_form, "zero_point": dict(zero_point)}
    return []
