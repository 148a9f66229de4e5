"""The v2 manifest schema (spec §3.2-§3.5, §7.1): root, shard table, objects and parts → the model.

Root-level violations (no ``objects``, a bad shard table, bad file attributes) are fatal and raise; a bad
object becomes an error problem on its own tensor so the rest of the file stays visible. Layout rules are
checked afterwards by :mod:`.layouts`, blob placement by :mod:`.blobs`.

Values the schema does not interpret (attributes, unknown keys) are only checked for what the fast CBOR
path could not prove (:func:`.cbor_check.plain_value_issue`); ``doubtful`` then asks the caller to run the
strict decoder, which is authoritative.
"""
from __future__ import annotations

import math
from collections.abc import MutableSequence
from dataclasses import dataclass, field
from typing import Any

import ztviewer.codec.formats.zt_v2.rules as rules

from ...errors import SchemaError
from ...model import Component, Problem, Tensor, error
from .cbor_check import key_order_ok, keys_in_order, plain_value_issue
from .vocab import LOGICAL, STORAGE, digest_problem

U64_MAX = (1 << 64) - 1
MAX_NAME = 1024
MAX_RANK = 64
MAX_SHARD_NAME = 64
_SHARD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_ROOT_KEYS = frozenset({"objects", "shards", "attributes"})
_OBJECT_KEYS = frozenset({"shape", "layout", "parts", "attributes"})
_PART_KEYS = frozenset({"dtype", "type", "blob", "shard", "encoding", "decoded_length", "digest"})
LAYOUT_NAMES = {"dense": "dense", "zt.sparse_csr/1": "sparse_csr", "zt.sparse_coo/1": "sparse_coo"}


@dataclass(frozen=True, slots=True)
class ShardEntry:
    name: str
    size: int
    digest: str


@dataclass(slots=True)
class Manifest:
    tensors: MutableSequence[Tensor]
    attributes: dict[str, Any]
    shards: dict[str, ShardEntry]
    unknown: dict[str, Any] = field(default_factory=dict)
    doubtful: bool = False
    errors: bool = False  # some object has an error problem


def name_problem(name: Any, what: str) -> tuple[str, str] | None:
    """``(message, rule)`` when a name breaks §3.5, else ``None``."""
    if type(name) is not str:
        return f"{what} is a {type(name).__name__}, not a text string", rules.SCHEMA
    if not name:
        return f"{what} is empty", rules.NAME
    if "\0" in name:
        return f"{what} {name!r:.60} contains U+0000", rules.NAME
    if len(name) > MAX_NAME // 4 and len(name.encode()) > MAX_NAME:
        return f"{what} is {len(name.encode())} bytes long, above {MAX_NAME}", rules.NAME
    return None


def shard_name_problem(name: Any) -> tuple[str, str] | None:
    if type(name) is not str:
        return f"shard table key {name!r:.40} is not a text string", rules.SCHEMA
    if not name:
        why = "is empty"
    elif len(name) > MAX_SHARD_NAME:
        why = f"is longer than {MAX_SHARD_NAME} bytes"
    elif name[0] == ".":
        why = "starts with '.'"
    elif not _SHARD_CHARS.issuperset(name):
        why = "has characters outside A-Z a-z 0-9 . _ -"
    else:
        return None
    return f"shard name {name!r:.80} {why}", rules.SHARD_NAME


def attributes_map(value: Any, where: str, offset: int, depth: int) -> tuple[dict[str, Any], bool]:
    """Validate an ``attributes`` map (raises :class:`SchemaError`); return it and whether its values are
    doubtful for the fast CBOR path."""
    if type(value) is not dict:
        raise SchemaError(f"{where} attributes must be a map, got {type(value).__name__}", offset=offset,
                          rule=rules.SCHEMA)
    for key in value:
        why = name_problem(key, f"{where} attribute key")
        if why:
            raise SchemaError(why[0], offset=offset, rule=why[1])
    return value, plain_value_issue(value, depth)


def read_root(root: Any, offset: int) -> Manifest:
    """The file-level schema; the objects are then read by :func:`read_objects`."""
    if type(root) is not dict:
        raise SchemaError(f"the manifest is a {type(root).__name__}, not a map", offset=offset, rule=rules.SCHEMA)
    doubtful = not key_order_ok(list(root))
    objects = root.get("objects")
    if type(objects) is not dict:
        what = "has no 'objects' map" if objects is None else f"'objects' is a {type(objects).__name__}, not a map"
        raise SchemaError(f"the manifest {what}", offset=offset, rule=rules.SCHEMA)
    attributes: dict[str, Any] = {}
    if "attributes" in root:
        attributes, more = attributes_map(root["attributes"], "file", offset, 1)
        doubtful |= more
    shards: dict[str, ShardEntry] = {}
    if "shards" in root:
        shards, more = _shard_table(root["shards"], offset)
        doubtful |= more
    unknown = {k: v for k, v in root.items() if k not in _ROOT_KEYS}
    if unknown:
        doubtful |= plain_value_issue(unknown, 0)
    return Manifest([], attributes, shards, unknown, doubtful)


def _shard_table(table: Any, offset: int) -> tuple[dict[str, ShardEntry], bool]:
    if type(table) is not dict:
        raise SchemaError(f"'shards' is a {type(table).__name__}, not a map", offset=offset, rule=rules.SCHEMA)
    shards: dict[str, ShardEntry] = {}
    doubtful = not key_order_ok(list(table))
    for name, entry in table.items():
        why = shard_name_problem(name)
        if why:
            raise SchemaError(why[0], offset=offset, rule=why[1])
        if type(entry) is not dict:
            raise SchemaError(f"shard {name!r} entry is not a map", offset=offset, rule=rules.SCHEMA)
        size, digest = entry.get("size"), entry.get("digest")
        if type(size) is not int or not 0 <= size <= U64_MAX:
            raise SchemaError(f"shard {name!r} needs 'size', an unsigned integer", offset=offset, rule=rules.SCHEMA)
        why_digest = digest_problem(digest) if digest is not None else "it has no 'digest'"
        if why_digest:
            raise SchemaError(f"shard {name!r}: {why_digest}", offset=offset, rule=rules.SCHEMA)
        doubtful |= plain_value_issue(entry, 2)
        shards[name] = ShardEntry(name, size, str(digest))
    return shards, doubtful


def read_objects(manifest: Manifest, objects: dict[Any, Any]) -> None:
    """One tensor per object in ``manifest.tensors``, layout rules applied: a map of plain dense objects as a
    table (:mod:`.columns`), else plain dense objects through the fast loop, the rest through :func:`_object`
    and :func:`.layouts.apply_layout`."""
    import ztviewer.codec.formats.zt_v2.columns as columns

    from .fast import objects_tensors
    from .layouts import apply_layout

    table = columns.objects_table(objects)
    if table is not None:
        manifest.tensors = table
        manifest.doubtful |= not keys_in_order(table.names)
        return
    shards = manifest.shards
    doubtful = [not key_order_ok(list(objects))]

    def full(index: int, name: Any, entry: Any) -> Tensor:
        tensor, more = _object(index, name, entry, shards)
        doubtful[0] |= more
        if not tensor.has_errors:
            apply_layout(tensor)
        manifest.errors |= tensor.has_errors
        return tensor

    manifest.tensors = objects_tensors(objects, full)
    manifest.doubtful |= doubtful[0]


def _object(index: int, name: Any, entry: Any, shards: dict[str, ShardEntry]) -> tuple[Tensor, bool]:
    problems: list[Problem] = []
    why = name_problem(name, "object name")
    label = name if type(name) is str else f"#{index}"
    if why:
        problems.append(error(why[0], tensor=label, rule=why[1]))
    if type(entry) is not dict:
        problems.append(error(f"object is a {type(entry).__name__}, not a map", tensor=label, rule=rules.SCHEMA))
        return Tensor(label, "unknown", (), "unknown", {}, {}, None, problems, index, {}), True
    doubtful = not _OBJECT_KEYS.issuperset(entry) or not key_order_ok(list(entry))
    shape = _shape(entry.get("shape"), label, problems)
    layout = entry.get("layout")
    if type(layout) is not str:
        problems.append(error("missing 'layout'" if layout is None else "'layout' is not a text string",
                              tensor=label, rule=rules.SCHEMA))
        layout = "unknown"
    attributes: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if "attributes" in entry:
        extra["attributes_present"] = True
        try:
            attributes, more = attributes_map(entry["attributes"], "object", 0, 3)
            doubtful |= more
        except SchemaError as exc:
            problems.append(error(exc.message, tensor=label, rule=exc.rule))
    if not _OBJECT_KEYS.issuperset(entry):
        extra["unknown_keys"] = {k: v for k, v in entry.items() if k not in _OBJECT_KEYS}
        doubtful |= plain_value_issue(extra["unknown_keys"], 2)
    components: dict[str, Component] = {}
    parts = entry.get("parts")
    if type(parts) is not dict or not parts:
        problems.append(error("missing 'parts'" if parts is None else "'parts' must be a non-empty map",
                              tensor=label, rule=rules.SCHEMA))
    else:
        doubtful |= not key_order_ok(list(parts))
        for role, raw in parts.items():
            why = name_problem(role, "part name")
            if why:
                problems.append(error(why[0], tensor=label, rule=why[1]))
                if type(role) is not str:
                    continue
            component, more = _part(role, raw, label, shards, problems)
            doubtful |= more
            if component is not None:
                components[role] = component
    canonical = LAYOUT_NAMES.get(layout, layout)
    tensor = Tensor(label, "unknown", shape if shape is not None else (), canonical, components, attributes,
                    layout, problems, index, extra)
    if shape is None:
        extra["shape_invalid"] = True
    return tensor, doubtful


def _shape(value: Any, label: str, problems: list[Problem]) -> tuple[int, ...] | None:
    if type(value) is not list or not all(type(d) is int and 0 <= d <= U64_MAX for d in value):
        problems.append(error("missing 'shape'" if value is None
                              else f"'shape' {value!r:.60} must be an array of unsigned 64-bit integers",
                              tensor=label, rule=rules.SCHEMA))
        return None
    if len(value) > MAX_RANK:
        problems.append(error(f"shape has rank {len(value)}, above {MAX_RANK}", tensor=label, rule=rules.SHAPE))
        return None
    if math.prod(value) > U64_MAX:
        problems.append(error(f"shape {value!r:.80} has more than 2^64 - 1 elements", tensor=label,
                              rule=rules.SHAPE))
        return None
    return tuple(value)


def _part(role: str, raw: Any, label: str, shards: dict[str, ShardEntry], problems: list[Problem]
          ) -> tuple[Component | None, bool]:
    def bad(message: str, rule: str = rules.SCHEMA) -> tuple[None, bool]:
        problems.append(error(message, tensor=label, component=role, rule=rule))
        return None, False

    if type(raw) is not dict:
        return bad(f"part is a {type(raw).__name__}, not a map")
    doubtful = not _PART_KEYS.issuperset(raw) or not key_order_ok(list(raw))
    dtype = raw.get("dtype")
    if type(dtype) is not str or dtype not in STORAGE:
        return bad("missing 'dtype'" if dtype is None else
                   f"dtype {dtype!r:.40} is not one of the 12 storage types ({', '.join(STORAGE)})")
    blob = raw.get("blob")
    if type(blob) is not list or len(blob) != 2 or not all(type(v) is int and 0 <= v <= U64_MAX for v in blob):
        return bad("missing 'blob'" if blob is None else f"'blob' {blob!r:.60} must be [offset, length], two u64")
    offset, length = blob
    extra: dict[str, Any] = {"dtype": dtype, "digest_over": "decoded"}
    logical = raw.get("type")
    if logical is not None:
        if type(logical) is not str:
            return bad(f"'type' must be a text string, got {type(logical).__name__}")
        extra["type"] = logical
        spec = LOGICAL.get(logical)
        if spec is not None and spec.storage != dtype:
            return bad(f"logical type {logical!r} is stored as {spec.storage}, not {dtype}")
    shard = raw.get("shard")
    if shard is not None:
        if type(shard) is not str:
            return bad("'shard' must be a text string")
        if shard not in shards:
            return bad(f"shard {shard!r:.80} is not declared in the manifest's shard table", rules.SHARD_REF)
    encoding = raw.get("encoding")
    decoded_length = raw.get("decoded_length")
    if encoding is not None:
        if type(encoding) is not str:
            return bad("'encoding' must be a text string")
        if decoded_length is None:
            return bad(f"encoding {encoding!r:.60} needs 'decoded_length'")
    elif decoded_length is not None:
        return bad("'decoded_length' is only allowed with an 'encoding'")
    if decoded_length is not None and (type(decoded_length) is not int or not 0 <= decoded_length <= U64_MAX):
        return bad("'decoded_length' must be an unsigned 64-bit integer")
    digest = raw.get("digest")
    if digest is not None:
        why = digest_problem(digest)
        if why:
            return bad(why)
    if doubtful:
        unknown = {k: v for k, v in raw.items() if k not in _PART_KEYS}
        if unknown:
            extra["unknown_keys"] = unknown
        doubtful = not key_order_ok(list(raw)) or plain_value_issue(unknown, 4)
    decoded = length if encoding is None else decoded_length
    component = Component(role, offset, length, "raw" if encoding is None else encoding, digest,
                          STORAGE[dtype][0], "little", decoded, extra, shard)
    return component, doubtful
