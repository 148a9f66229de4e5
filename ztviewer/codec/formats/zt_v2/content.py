"""The content digest ``zt.content/1`` (spec §6.4): the model's identity, computed from the manifest alone.

The hashed value is the deterministic CBOR of ``["zt.content/1", {object: {shape, layout, [attributes],
parts: {part: {dtype, [type], digest}}}}]``. It is undefined (``None``) when any part has no digest. What
``zt id`` prints is the sha256 form, ``sha256:<hex>``.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import xxhash

from ...model import Tensor, TensorFile
from .cbor_check import encode_deterministic

TAG = "zt.content/1"


def _reduced(tensor: Tensor) -> dict[str, Any] | None:
    parts: dict[str, Any] = {}
    for role, component in tensor.components.items():
        if component.digest is None or "dtype" not in component.extra:
            return None
        part: dict[str, Any] = {"dtype": component.extra["dtype"]}
        if "type" in component.extra:
            part["type"] = component.extra["type"]
        part["digest"] = component.digest
        parts[role] = part
    value: dict[str, Any] = {"shape": list(tensor.shape), "layout": tensor.layout_spelling or tensor.layout}
    if tensor.extra_value("attributes_present"):
        value["attributes"] = tensor.attributes
    value["parts"] = parts
    return value


def _digest(tensors: Iterable[Tensor], algorithm: str) -> str | None:
    objects: dict[str, Any] = {}
    for tensor in tensors:
        if tensor.has_errors:
            return None
        reduced = _reduced(tensor)
        if reduced is None:
            return None
        objects[tensor.name] = reduced
    encoded = encode_deterministic([TAG, objects])
    if algorithm == "sha256":
        return "sha256:" + hashlib.sha256(encoded).hexdigest()
    if algorithm == "xxh3":
        return f"xxh3:{xxhash.xxh3_64_intdigest(encoded):016x}"
    raise ValueError(f"unknown digest algorithm {algorithm!r} (xxh3, sha256)")


def content_digest(tf: TensorFile, algorithm: str = "sha256") -> str | None:
    """The file's content digest (``None`` when a part carries no digest, or for a data shard)."""
    if tf.format != "zt-v2" or not tf.readable or tf.extra.get("data_shard"):
        return None
    key = f"content_digest:{algorithm}"
    if key not in tf.extra:
        tf.extra[key] = _digest(tf.tensors, algorithm)
    result: str | None = tf.extra[key]
    return result


def object_content_digest(tensor: Tensor, algorithm: str = "sha256") -> str | None:
    """The content digest of one object: that of a model holding only this object."""
    return _digest([tensor], algorithm)
