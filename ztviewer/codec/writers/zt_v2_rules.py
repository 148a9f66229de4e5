"""What a zTensor v2 manifest written by ztviewer may contain (spec draft 4 §3.1, §3.5, §4, Appendix A) and the
refusals when a document holds something else: element types, names, attribute values, alignment.

The storage ``dtype`` and logical ``type`` of each canonical ztviewer dtype come from here; so do the name and
attribute checks, run before a single byte is written.
"""
from __future__ import annotations

import unicodedata
from typing import Any

from cbor2 import CBORTag

from ..errors import EditRefused

MAGIC = b"\x89ZT2\r\n\x1a\n"
FOOTER_LENGTH = 40
VERSION = 2
ALIGN_FLOOR = 4096
ALIGN_CANONICAL = 65536
MAX_NAME_BYTES = 1024
MAX_DEPTH = 32
MAX_MANIFEST = 1 << 30
RULE_NAMES = "v2 names: non-empty UTF-8, at most 1024 bytes, no U+0000 (spec §3.5)"
RULE_ATTRIBUTES = "v2 attribute values: int, text, bytes, bool, null, float, array, map; no tags; depth ≤ 32"

#: canonical ztviewer dtype → (v2 storage dtype, logical type or None)
V2_TYPES: dict[str, tuple[str, str | None]] = {
    "float64": ("f64", None), "float32": ("f32", None), "float16": ("f16", None), "bfloat16": ("bf16", None),
    "int64": ("i64", None), "int32": ("i32", None), "int16": ("i16", None), "int8": ("i8", None),
    "uint64": ("u64", None), "uint32": ("u32", None), "uint16": ("u16", None), "uint8": ("u8", None),
    "bool": ("u8", "bool"),
    "float8_e4m3fn": ("u8", "f8_e4m3fn"), "float8_e5m2": ("u8", "f8_e5m2"),
    "float8_e4m3fnuz": ("u8", "f8_e4m3fnuz"), "float8_e5m2fnuz": ("u8", "f8_e5m2fnuz"),
    "float8_e8m0fnu": ("u8", "f8_e8m0"), "float4_e2m1fn": ("u8", "f4_e2m1"),
    "complex64": ("f32", "complex64"), "complex128": ("f64", "complex128"),
}
#: v2 logical type → its required storage dtype
LOGICAL_STORAGE = {logical: storage for storage, logical in V2_TYPES.values() if logical is not None}
STORAGE_DTYPES = frozenset(storage for storage, logical in V2_TYPES.values() if logical is None)


def v2_type(dtype: str, where: str = "") -> tuple[str, str | None]:
    """(``dtype``, ``type``) of a canonical ztviewer dtype, or a refusal naming it."""
    found = V2_TYPES.get(dtype)
    if found is None:
        raise EditRefused(f"zTensor v2 has no element type for {dtype!r}{where}",
                          rule="v2 storage dtypes and registered logical types (spec §4)")
    return found


def check_name(name: Any, what: str, canonical: bool = False) -> None:
    """Refuse an object / part / attribute name §3.5 forbids (and a non-NFC one in canonical form, §6.3 rule 5)."""
    if type(name) is not str:
        raise EditRefused(f"{what} must be text, got {type(name).__name__}", rule=RULE_NAMES)
    encoded = name.encode("utf-8", "surrogatepass")
    if not encoded or len(encoded) > MAX_NAME_BYTES or "\0" in name:
        why = "empty" if not encoded else "contains U+0000" if "\0" in name else f"{len(encoded)} bytes long"
        raise EditRefused(f"{what} {name[:60]!r} is {why}", rule=RULE_NAMES)
    try:
        encoded.decode("utf-8")
    except UnicodeDecodeError:
        raise EditRefused(f"{what} {name[:60]!r} is not valid UTF-8 (lone surrogate)", rule=RULE_NAMES) from None
    if canonical and not name.isascii() and not unicodedata.is_normalized("NFC", name):
        raise EditRefused(f"{what} {name[:60]!r} is not in Unicode Normalization Form C, which canonical form "
                          f"requires; rename it (NFC: {unicodedata.normalize('NFC', name)[:60]!r}) or write a "
                          "non-canonical file (an explicit --align 65536 keeps the placement)",
                          rule="canonical names are NFC (spec §6.3 rule 5)")


def check_attribute_value(value: Any, path: str, depth: int) -> None:
    """Refuse an attribute value v2 cannot carry; ``depth`` counts levels from the manifest root."""
    if depth > MAX_DEPTH:
        raise EditRefused(f"{path} nests deeper than {MAX_DEPTH} levels from the manifest root", rule=RULE_ATTRIBUTES)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise EditRefused(f"{path}: text {value[:40]!r} is not valid UTF-8 (lone surrogate)",
                              rule=RULE_ATTRIBUTES) from None
        return
    if value is None or isinstance(value, (bool, bytes, bytearray, float)):
        return
    if isinstance(value, int):
        if not -(1 << 64) <= value < (1 << 64):
            raise EditRefused(f"{path}: integer {value} does not fit CBOR's 64-bit integers", rule=RULE_ATTRIBUTES)
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_attribute_value(item, f"{path}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            check_attribute_value(key, f"{path} key {key!r}", depth + 1)
            check_attribute_value(item, f"{path}.{key}", depth + 1)
        return
    if isinstance(value, CBORTag):
        raise EditRefused(f"{path}: CBOR tag {value.tag} is not allowed in v2 attributes", rule=RULE_ATTRIBUTES)
    raise EditRefused(f"{path}: a {type(value).__name__} value cannot be stored in v2 attributes",
                      rule=RULE_ATTRIBUTES)


def check_attributes(attributes: dict[Any, Any], path: str, depth: int) -> None:
    """Check an ``attributes`` map sitting ``depth`` levels below the manifest root (file: 1, object: 3)."""
    for key, value in attributes.items():
        check_name(key, f"attribute key in {path}")
        check_attribute_value(value, f"{path} attribute {key!r}", depth + 1)


def check_alignment(alignment: int) -> None:
    """Blob placement must be a multiple of 4096 (spec §2.4); the reference writer asks for a power of two."""
    if type(alignment) is not int or alignment < ALIGN_FLOOR or alignment % ALIGN_FLOOR:
        raise EditRefused(f"alignment {alignment!r} is not a positive multiple of {ALIGN_FLOOR}",
                          rule="v2 blob offsets are multiples of 4096 (spec §2.4)")


def sparse_data_problem(sparse: Any) -> str | None:
    """What keeps a loaded v1 sparse tensor (already valid by v1 rules) from being a valid v2 sparse object:
    ``zt.sparse_csr/1`` wants strictly increasing column indices within each row, ``zt.sparse_coo/1`` unique
    coordinates. ``None`` when it is fine."""
    import numpy as np

    from ..sparse import SparseCSR

    if isinstance(sparse, SparseCSR):
        indices = np.asarray(sparse.indices, dtype=np.int64)
        if indices.size < 2:
            return None
        rising = np.diff(indices) > 0
        row_starts = np.asarray(sparse.indptr[1:-1], dtype=np.int64)
        boundary = np.zeros(indices.size - 1, dtype=bool)
        inner = row_starts[(row_starts > 0) & (row_starts < indices.size)]
        boundary[inner - 1] = True
        bad = np.flatnonzero(~rising & ~boundary)
        if bad.size:
            return (f"column indices are not strictly increasing within a row (value {int(bad[0]) + 1}); "
                    "zt.sparse_csr/1 requires sorted, duplicate-free rows")
        return None
    coords = np.asarray(sparse.coords)
    if coords.ndim != 2 or coords.shape[1] < 2:
        return None
    if not sparse.shape:
        return f"a rank-0 (scalar) tensor has one cell, this one {coords.shape[1]} values; zt.sparse_coo/1 allows one"
    flat = np.ravel_multi_index(tuple(coords.astype(np.int64)), tuple(sparse.shape))
    if np.unique(flat).size != flat.size:
        return "two values name the same cell; zt.sparse_coo/1 requires unique coordinates"
    return None
