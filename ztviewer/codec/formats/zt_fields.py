"""Field checks shared by the zTensor manifest readers: integers, shapes, digests, encodings, versions,
components, and the size rules that tie a tensor's components to its dtype and shape.

Everything here is called once per tensor or component, so the common (valid) path is kept to a few
type checks and dictionary lookups; messages are only built when something is wrong.
"""
from __future__ import annotations

import math
from typing import Any

from ..dtypes import DTYPES, ZT_LOGICAL_TYPES, ZT_SHORT_TO_CANONICAL
from ..errors import SchemaError, UnsupportedFormat
from ..huge_int import HugeInt
from ..model import Component, Problem, Tensor, error, warning
from ..text import value_text

U64_MAX = (1 << 64) - 1
ENCODINGS = frozenset({"raw", "zstd"})
INDEX_ROLES = frozenset({"indices", "indptr", "coords"})
SPARSE_ROLES = {"sparse_csr": ("values", "indices", "indptr"), "sparse_coo": ("values", "coords")}
REQUIRED_ROLES = {"dense": ("data",), **SPARSE_ROLES}
V10_COMPONENT_KEYS = frozenset({"offset", "length", "encoding", "digest"})
OBJECTS_COMPONENT_KEYS = V10_COMPONENT_KEYS | {"dtype", "type", "uncompressed_length"}
STRUCTURAL_NOTE = "is shown structurally; ztviewer cannot decode it"

_HEX = frozenset("0123456789abcdefABCDEF")
_CBOR_NAMES = {dict: "map", list: "array", str: "text string", bytes: "byte string", int: "integer",
               float: "float", bool: "boolean", type(None): "null", tuple: "array", HugeInt: "integer"}


def cbor_type(value: Any) -> str:
    """The CBOR name of a decoded value's type, for messages."""
    return _CBOR_NAMES.get(type(value), type(value).__name__)


def is_u64(value: Any) -> bool:
    return type(value) is int and 0 <= value <= U64_MAX


def u64_problem(key: str, value: Any, present: bool = True) -> str:
    if not present:
        return f"missing required key {key!r}"
    if type(value) is int or type(value) is HugeInt:
        return f"{key!r} is {value_text(value)}, outside the unsigned 64-bit range"
    return f"{key!r} must be an unsigned integer, got {cbor_type(value)} {value_text(value, 40)}"


def parse_shape(value: Any) -> tuple[int, ...] | str:
    """The shape as a tuple, or a message saying why it is invalid (dims must be u64 integers)."""
    if type(value) is not list:
        if value is None:
            return "missing required key 'shape'"
        return f"'shape' must be an array of unsigned integers, got {cbor_type(value)}"
    shape = tuple(value)
    for dim in shape:
        if type(dim) is not int or dim < 0 or dim > U64_MAX:
            kind = f"{cbor_type(dim)} {value_text(dim, 20)}" if type(dim) is not int else value_text(dim)
            return (f"'shape' {value_text(list(shape), 60)} has an invalid dimension {kind}: dims must be unsigned "
                    "integers")
    return shape


def digest_problem(digest: Any) -> str | None:
    """Why a digest string is malformed (``None`` when it is a valid crc32c or sha256 digest)."""
    if type(digest) is not str:
        return f"digest must be a text string, got {cbor_type(digest)}"
    algo, _, value = digest.partition(":")
    if algo == "crc32c":
        if len(value) == 10 and value[:2] in ("0x", "0X") and _HEX.issuperset(value[2:]):
            return None
        return f"malformed crc32c digest {value_text(digest, 60)}: expected 'crc32c:0x' followed by 8 hex digits"
    if algo == "sha256":
        if len(value) == 64 and _HEX.issuperset(value):
            return None
        return f"malformed sha256 digest {value_text(digest, 90)}: expected 'sha256:' followed by 64 hex digits"
    return (f"unsupported digest algorithm {value_text(algo, 30)} in {value_text(digest, 60)} "
            "(supported: crc32c, sha256)")


def check_version(value: Any, supported_minor: int, offset: int, problems: list[Problem]) -> None:
    """Semantic version negotiation (v1.0 §6.1): other major → fatal, newer minor → warning."""
    rule = "version negotiation (v1.0 §6.1)"
    if value is None:
        problems.append(warning("the manifest has no 'version'; assuming 1.x", rule=rule, offset=offset))
        return
    parts = value.split(".") if type(value) is str else []
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:3]) or len(parts) > 3:
        raise SchemaError(f"manifest version {value_text(value, 60)} is not of the form MAJOR.MINOR[.PATCH]",
                          offset=offset, rule=rule)
    major, minor = int(parts[0]), int(parts[1])
    if major != 1:
        raise UnsupportedFormat(
            f"manifest version {value!r} has major version {major}; this reader handles zTensor 1.x only",
            offset=offset, rule=rule)
    if minor > supported_minor:
        problems.append(warning(
            f"manifest version {value!r} is newer than 1.{supported_minor}; reading it anyway, newer features "
            "may be missed", rule=rule, offset=offset))


def parse_component(role: str, raw: Any, tname: str, problems: list[Problem], objects: bool,
                    default_dtype: str | None) -> Component | None:
    """One v1.x component map → Component (``None`` when its byte range is unusable)."""
    if type(raw) is not dict:
        problems.append(error(f"component must be a map, got {cbor_type(raw)}", tensor=tname, component=role,
                              rule="v1: components map roles to {offset, length, ...}"))
        return None
    offset: Any = raw.get("offset")   # CBOR values: checked below before the component is made
    length: Any = raw.get("length")
    ok = True
    if type(offset) is not int or not 0 <= offset <= U64_MAX:
        problems.append(error(u64_problem("offset", offset, "offset" in raw), tensor=tname, component=role,
                              rule="component offset is a u64"))
        ok = False
    if type(length) is not int or not 0 <= length <= U64_MAX:
        problems.append(error(u64_problem("length", length, "length" in raw), tensor=tname, component=role,
                              rule="component length is a u64"))
        ok = False
    encoding = raw.get("encoding", "raw")
    if type(encoding) is not str or encoding not in ENCODINGS:
        problems.append(error(f"unknown encoding {value_text(encoding, 40)} (known: raw, zstd)", tensor=tname,
                              component=role, offset=offset if ok else None, rule="v1: encoding raw | zstd"))
        if type(encoding) is not str:
            encoding = value_text(encoding, 40)
    digest = raw.get("digest")
    if digest is not None:
        why = digest_problem(digest)
        if why:
            problems.append(error(why, tensor=tname, component=role, rule="digest is crc32c:0x… or sha256:…"))
            if type(digest) is not str:
                digest = value_text(digest, 80)
    dtype = default_dtype
    uncompressed = None
    extra: dict[str, Any] = {}
    if objects:
        dtype = _objects_dtype(raw, role, tname, problems, extra)
        uncompressed = raw.get("uncompressed_length")
        if uncompressed is not None and not is_u64(uncompressed):
            problems.append(error(u64_problem("uncompressed_length", uncompressed), tensor=tname,
                                  component=role, rule="uncompressed_length is a u64"))
            uncompressed = None
        if not OBJECTS_COMPONENT_KEYS.issuperset(raw):
            extra.update((k, v) for k, v in raw.items() if k not in OBJECTS_COMPONENT_KEYS)
    elif not V10_COMPONENT_KEYS.issuperset(raw):
        extra = {k: v for k, v in raw.items() if k not in V10_COMPONENT_KEYS}
    if not ok:
        return None
    return Component(role, offset, length, encoding, digest, dtype, "little", uncompressed, extra)


def _objects_dtype(raw: dict[Any, Any], role: str, tname: str, problems: list[Problem],
                   extra: dict[str, Any]) -> str | None:
    """The storage dtype of a v1.x objects component; a logical ``type`` is kept in ``extra``."""
    short = raw.get("dtype")
    dtype = ZT_SHORT_TO_CANONICAL.get(short) if type(short) is str else None
    if dtype is None:
        what = "missing required key 'dtype'" if short is None else f"unknown component dtype {short!r:.40}"
        problems.append(error(what, tensor=tname, component=role,
                              rule="v1.x objects: component dtype is a short name (f32, bf16, u64, …)"))
        dtype = short if type(short) is str else None
    logical = raw.get("type")
    if logical is not None:
        extra["type"] = logical
        spec = ZT_LOGICAL_TYPES.get(logical) if type(logical) is str else None
        if spec is None:
            problems.append(error(f"unknown logical type {logical!r:.40}", tensor=tname, component=role,
                                  rule="v1.x logical types: complex64, complex128, f8_e4m3fn, f8_e5m2"))
        elif dtype != spec[1]:
            problems.append(error(f"logical type {logical!r} must be stored as {spec[1]}, not {dtype}",
                                  tensor=tname, component=role, rule="v1.x logical type over its storage dtype"))
    return dtype


def logical_dtype(component: Component) -> str | None:
    """The dtype a component's elements mean: its logical ``type`` when present, else its storage dtype."""
    logical = component.extra.get("type") if component.extra else None
    if logical is not None:
        spec = ZT_LOGICAL_TYPES.get(logical) if type(logical) is str else None
        return spec[0] if spec is not None else None
    return component.dtype


def check_required_roles(tensor: Tensor, raw_roles: Any) -> None:
    """Every role the layout requires is present (named in the manifest, even if unusable)."""
    needed = REQUIRED_ROLES.get(tensor.layout)
    if needed is None:
        return
    for role in needed:
        if role not in raw_roles:
            tensor.problems.append(error(
                f"{tensor.layout} tensor has no {role!r} component (needs {', '.join(needed)})",
                tensor=tensor.name, component=role, rule=f"{tensor.layout} requires components {needed}"))


def check_sizes(tensor: Tensor) -> None:
    """Component lengths agree with dtype and shape, where the stored bytes are raw (uncompressed)."""
    info = DTYPES.get(tensor.dtype)
    if info is None:
        return
    layout = tensor.layout
    components = tensor.components
    numel = math.prod(tensor.shape)
    if numel > U64_MAX:
        tensor.problems.append(error(
            f"shape {value_text(list(tensor.shape), 80)} has {value_text(numel)} elements, more than an unsigned "
            "64-bit count can hold", tensor=tensor.name, rule="the element count fits in 64 bits"))
        return
    if layout == "dense":
        data = components.get("data")
        if data is not None:
            _expect_length(tensor, data, numel * info.itemsize, "numel × itemsize")
    elif layout in SPARSE_ROLES:
        _check_sparse_sizes(tensor, info.itemsize)


def _stored_size(c: Component) -> int | None:
    return c.length if c.encoding == "raw" else c.uncompressed_length


def _expect_length(tensor: Tensor, c: Component, expected: int, how: str) -> None:
    actual = _stored_size(c)
    if actual is not None and actual != expected:
        what = "length" if c.encoding == "raw" else "uncompressed_length"
        tensor.problems.append(error(
            f"{what} is {actual} bytes but {how} is {expected} (shape {list(tensor.shape)}, {tensor.dtype})",
            tensor=tensor.name, component=c.role, offset=c.offset, rule=f"{c.role} size = {how}"))
    elif c.encoding == "raw" and c.uncompressed_length is not None and c.uncompressed_length != c.length:
        tensor.problems.append(error(
            f"raw component has length {c.length} but uncompressed_length {c.uncompressed_length}",
            tensor=tensor.name, component=c.role, offset=c.offset, rule="raw: uncompressed_length = length"))


def _check_sparse_sizes(tensor: Tensor, itemsize: int) -> None:
    components = tensor.components
    shape = tensor.shape
    values = components.get("values")
    nnz = None
    if values is not None:
        stored = _stored_size(values)
        if stored is not None:
            if stored % itemsize:
                tensor.problems.append(error(
                    f"values hold {stored} bytes, not a multiple of the {itemsize}-byte {tensor.dtype}",
                    tensor=tensor.name, component="values", offset=values.offset,
                    rule="values size = nnz × itemsize"))
            else:
                nnz = stored // itemsize
                tensor.extra["nnz"] = nnz
    for role in INDEX_ROLES.intersection(components):
        c = components[role]
        index_size = DTYPES[c.dtype].itemsize if c.dtype in DTYPES else 8
        if role == "indptr":
            if len(shape) != 2:
                tensor.problems.append(error(f"sparse_csr needs a 2-D shape, got {list(shape)}",
                                             tensor=tensor.name, rule="sparse_csr is 2-D"))
                continue
            _expect_length(tensor, c, (shape[0] + 1) * index_size, f"(rows + 1) × {index_size}")
        elif nnz is not None and role == "indices":
            _expect_length(tensor, c, nnz * index_size, f"nnz ({nnz}) × {index_size}")
        elif nnz is not None and role == "coords":
            _expect_length(tensor, c, len(shape) * nnz * index_size, f"ndim × nnz ({nnz}) × {index_size}")


def apply_tensor_train(tensor: Tensor) -> None:
    """A ``tensor_train`` (as ztviewer writes it to zTensor 1.x): ``ranks`` in the tensor's attributes, one
    component ``core_k`` per axis holding an (r[k], shape[k], r[k+1]) core in the tensor dtype."""
    if tensor.layout != "tensor_train":
        return
    ranks = tensor.attributes.get("ranks")
    ndim = len(tensor.shape)
    if (type(ranks) is not list or len(ranks) != ndim + 1
            or not all(type(r) is int and 0 < r <= U64_MAX for r in ranks)):
        tensor.problems.append(error(f"tensor_train needs 'ranks' ({ndim + 1} positive integers) in its attributes, "
                                     f"got {value_text(ranks, 60)}", tensor=tensor.name, rule="tensor_train ranks"))
        return
    tensor.extra["ranks"] = tuple(ranks)
    for k, extent in enumerate(tensor.shape):
        core = tensor.components.get(f"core_{k}")
        if core is None:
            tensor.problems.append(error(f"tensor_train has no component 'core_{k}'", tensor=tensor.name,
                                         component=f"core_{k}", rule="tensor_train has core_0 … core_{ndim-1}"))
            continue
        if core.dtype is None:
            core.dtype = tensor.dtype
        core.shape = (ranks[k], extent, ranks[k + 1])
