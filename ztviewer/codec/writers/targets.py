"""What each output format can hold, and the refusals (with the reason and what would work) when it cannot.

Edits are checked against these rules when they are applied, and the whole document again when a save or
conversion is planned, so nothing a format cannot represent ever reaches a writer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ztviewer.codec.writers.zt_v2_rules as v2

from ..dtypes import (
    CANONICAL_TO_SAFETENSORS,
    CANONICAL_TO_ZT_SHORT,
    ZT_LOGICAL_TYPES,
    ZT_LONG_NAMES,
)
from ..errors import EditRefused
from ..model import TensorFile
from .cbor import check_encodable

V01_RESERVED = frozenset({"name", "offset", "size", "dtype", "layout", "shape", "encoding", "data_endianness",
                          "checksum"})
_OBJECT_LOGICAL = frozenset(spec[0] for spec in ZT_LOGICAL_TYPES.values())


@dataclass(frozen=True)
class Target:
    """One writable format and what it can hold.

    Attributes
    ----------
    key:
        ``zt-v2``, ``zt-v1.0``, ``zt-v0.1``, ``zt-objects``, ``safetensors`` or ``blz``.
    file_attributes:
        ``"none"`` (no file-level metadata), ``"str"`` (a string → string map) or ``"any"`` (any CBOR value;
        the objects layout, whose root ``attributes`` ztensor 1.2 reads past).
    tensor_attributes:
        Whether tensors carry their own attributes; ``reserved`` lists keys they may not use.
    """

    key: str
    label: str
    file_attributes: str
    tensor_attributes: bool
    reserved: frozenset[str]
    encodings: frozenset[str]
    digests: frozenset[str]
    dtypes: frozenset[str]
    suggestion: str

    def refuse(self, what: str, why: str, instead: str = "", **where: Any) -> EditRefused:
        text = f"{self.label} cannot hold {what}: {why}"
        return EditRefused(f"{text}; {instead or self.suggestion}", rule=f"{self.label} capabilities", **where)


_ZT = frozenset({"raw", "zstd"})
_DIGESTS = frozenset({"crc32c", "sha256"})
TARGETS: dict[str, Target] = {t.key: t for t in (
    Target("zt-v1.0", "zTensor v1.0", "str", True, frozenset(), _ZT, _DIGESTS, frozenset(ZT_LONG_NAMES),
           "convert to safetensors or keep the data as it is"),
    Target("zt-v0.1", "zTensor v0.1", "none", True, V01_RESERVED, _ZT, frozenset({"crc32c"}),
           frozenset(ZT_LONG_NAMES), "convert the file to zTensor v1.0 first"),
    Target("zt-objects", "zTensor v1.x objects layout", "any", True, frozenset(), _ZT, _DIGESTS,
           frozenset(CANONICAL_TO_ZT_SHORT) | _OBJECT_LOGICAL, "convert the file to zTensor v1.0 first"),
    Target("safetensors", "safetensors", "str", False, frozenset(), frozenset({"raw"}), frozenset(),
           frozenset(CANONICAL_TO_SAFETENSORS), "convert the file to zTensor v1.0 instead"),
    Target("blz", "BLZ1 (.blz)", "none", False, frozenset(), frozenset({"raw"}), frozenset(),
           frozenset({"float64", "complex128"}), "convert the file to zTensor v1.0 instead"),
    Target("zt-v2", "zTensor v2", "any", True, frozenset(), _ZT, frozenset({"xxh3", "sha256"}),
           frozenset(v2.V2_TYPES), "convert to zTensor v1.0 instead"),
)}
ALIASES = {"v2": "zt-v2", "zt2": "zt-v2",
           "zt": "zt-v1.0", "zt-v1": "zt-v1.0", "v1.0": "zt-v1.0", "zt1": "zt-v1.0", "st": "safetensors",
           "v0.1": "zt-v0.1", "objects": "zt-objects", "v1.x-objects": "zt-objects"}


def target(key: str) -> Target:
    """The target for a key or alias (``zt`` means zTensor v1.0)."""
    found = TARGETS.get(ALIASES.get(key, key))
    if found is None:
        raise EditRefused(f"unknown output format {key!r}; choose one of {', '.join(TARGETS)}",
                          rule="output formats")
    return found


def target_of(tf: TensorFile) -> Target:
    """The format a file is saved back in when it is edited in place."""
    if tf.format == "zt":
        key = {"v0.1": "zt-v0.1", "v1.0": "zt-v1.0", "v1.x-objects": "zt-objects"}.get(tf.variant)
        if key is not None:
            return TARGETS[key]
    elif tf.format in ("safetensors", "blz"):
        return TARGETS[tf.format]
    elif tf.format == "zt-v2" and tf.variant == "v2":
        return TARGETS["zt-v2"]
    elif tf.format == "zt-v2" and tf.generation_of:
        raise EditRefused("an earlier generation is shown read-only (saving over the file would drop the later "
                          "ones); Save As writes it to a new file", rule="earlier generations are read-only")
    raise EditRefused(f"{tf.format} {tf.variant} files cannot be written back (read-only format); "
                      "convert them to zTensor v1.0 or safetensors", rule="writable formats")


def check_file_attribute(t: Target, key: Any, value: Any) -> None:
    """Refuse a file-level attribute the target cannot store."""
    if t.file_attributes == "none":
        raise t.refuse("file-level attributes", "the format has no file metadata",
                       "use per-tensor attributes or convert to zTensor v1.0 / safetensors"
                       if t.tensor_attributes else "convert to zTensor v1.0 or safetensors")
    if type(key) is not str:
        raise t.refuse(f"the attribute key {key!r}", "keys must be strings", "use a string key")
    if t.key == "zt-v2":
        v2.check_name(key, "file attribute key")
        v2.check_attribute_value(value, f"file attribute {key!r}", 2)
    if t.file_attributes == "any":
        check_encodable(value, f"file attribute {key!r}")
    elif type(value) is not str:
        raise t.refuse(f"the {type(value).__name__} value of attribute {key!r}",
                       "file metadata is a string → string map"
                       + (" (ztensor 1.0.1 rejects the whole file otherwise)" if t.key == "zt-v1.0" else ""),
                       f"store it as a string, e.g. {str(value)!r}")


def check_tensor_attribute(t: Target, tensor: str, key: Any, value: Any, layout: str = "dense") -> None:
    """Refuse a per-tensor attribute the target cannot store."""
    if not t.tensor_attributes:
        raise t.refuse(f"attributes on tensor {tensor!r}", "it has no per-tensor metadata",
                       "delete the tensor attributes, or convert to zTensor v1.0", tensor=tensor)
    if type(key) is not str:
        raise t.refuse(f"the attribute key {key!r} on tensor {tensor!r}", "keys must be strings",
                       "use a string key", tensor=tensor)
    if key in t.reserved or (layout == "tensor_train" and key == "ranks"):
        raise t.refuse(f"an attribute named {key!r} on tensor {tensor!r}",
                       "the name is a reserved manifest key", "choose another attribute name", tensor=tensor)
    if t.key == "zt-v2":
        v2.check_name(key, f"attribute key of tensor {tensor!r}")
        v2.check_attribute_value(value, f"attribute {key!r} of tensor {tensor!r}", 4)
    check_encodable(value, f"attribute {key!r} of tensor {tensor!r}")


def check_tensor_name(t: Target, name: Any, taken: set[str] | frozenset[str]) -> None:
    """Refuse a tensor name the target cannot store, or one already used."""
    if type(name) is not str:
        raise EditRefused(f"tensor names must be strings, got {type(name).__name__}", rule="tensor names")
    if name in taken:
        raise EditRefused(f"a tensor named {name!r} already exists; choose another name or delete that tensor "
                          "first", rule="tensor names are unique", tensor=name)
    if t.key == "zt-v2":
        v2.check_name(name, "tensor name")
    if t.key == "safetensors" and name == "__metadata__":
        raise t.refuse("a tensor named '__metadata__'", "the name is reserved for the header metadata",
                       "choose another name", tensor=name)
    if t.key == "blz":
        raise t.refuse("tensor names", "a .blz file stores one unnamed tensor train",
                       "convert to zTensor v1.0 to name it", tensor=name)


def check_encoding(t: Target, tensor: str, encoding: str, level: int | None) -> None:
    if encoding not in t.encodings:
        raise t.refuse(f"{encoding!r} encoding (tensor {tensor!r})",
                       f"it stores {' / '.join(sorted(t.encodings))} data only",
                       "convert to zTensor v1.0 to compress tensors", tensor=tensor)
    if level is not None and (encoding != "zstd" or type(level) is not int or not -131072 <= level <= 22):
        raise EditRefused(f"zstd level {level!r} for tensor {tensor!r} is invalid: levels are integers up to 22 "
                          "and apply to zstd only (3 is the usual default)", rule="zstd levels", tensor=tensor)


def check_digest(t: Target, tensor: str, algorithm: str | None) -> None:
    if algorithm is None:
        return
    if algorithm not in ("crc32c", "sha256", "xxh3"):
        raise EditRefused(f"unknown digest algorithm {algorithm!r}; use crc32c, sha256, xxh3 or none",
                          rule="digest algorithms", tensor=tensor)
    if algorithm not in t.digests:
        if t.key == "zt-v0.1":
            why = "ztensor 0.1.4 verifies crc32c checksums only (it warns on sha256 and skips the check)"
        elif t.digests:
            why = f"its digests are {' / '.join(sorted(t.digests))}"
        else:
            why = "it has no per-tensor checksums"
        instead = f"use {' or '.join(sorted(t.digests))}" if t.digests else "convert to zTensor v1.0 to store digests"
        raise t.refuse(f"a {algorithm} digest (tensor {tensor!r})", why, instead, tensor=tensor)
