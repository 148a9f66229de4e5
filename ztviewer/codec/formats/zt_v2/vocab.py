"""zTensor v2 vocabulary (spec §4, App. A): the 12 storage dtypes, the registered logical types and their
size functions, the digest syntax, and the names ztviewer's model uses for each."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...model import SEEKABLE_ENCODING

#: storage dtype → (ztviewer canonical dtype, width in bytes)
STORAGE = {
    "f64": ("float64", 8), "f32": ("float32", 4), "f16": ("float16", 2), "bf16": ("bfloat16", 2),
    "i64": ("int64", 8), "i32": ("int32", 4), "i16": ("int16", 2), "i8": ("int8", 1),
    "u64": ("uint64", 8), "u32": ("uint32", 4), "u16": ("uint16", 2), "u8": ("uint8", 1),
}
CANONICAL_TO_STORAGE = {canonical: short for short, (canonical, _) in STORAGE.items()}


@dataclass(frozen=True, slots=True)
class LogicalType:
    name: str        # the v2 spelling
    canonical: str   # ztviewer's dtype name
    storage: str     # the required v2 storage dtype
    per_element: int = 1  # storage elements per logical element (2 for complex)
    packed: bool = False  # two elements per byte (f4_e2m1)

    def size(self, elements: int) -> int:
        """Decoded bytes of ``elements`` logical elements."""
        if self.packed:
            return (elements + 1) // 2
        return elements * self.per_element * STORAGE[self.storage][1]


LOGICAL = {t.name: t for t in (
    LogicalType("bool", "bool", "u8"),
    LogicalType("f8_e4m3fn", "float8_e4m3fn", "u8"),
    LogicalType("f8_e5m2", "float8_e5m2", "u8"),
    LogicalType("f8_e4m3fnuz", "float8_e4m3fnuz", "u8"),
    LogicalType("f8_e5m2fnuz", "float8_e5m2fnuz", "u8"),
    LogicalType("f8_e8m0", "float8_e8m0fnu", "u8"),
    LogicalType("f4_e2m1", "float4_e2m1fn", "u8", packed=True),
    LogicalType("complex64", "complex64", "f32", per_element=2),
    LogicalType("complex128", "complex128", "f64", per_element=2),
)}
CANONICAL_TO_LOGICAL = {t.canonical: t.name for t in LOGICAL.values()}

SEEKABLE = SEEKABLE_ENCODING
ENCODINGS = frozenset({SEEKABLE})
#: registered digest algorithm → lowercase hex digits of its value: a digest is ``<algorithm>:<hex>``
DIGEST_HEX_DIGITS = {"xxh3": 16, "sha256": 64}
DIGEST_ALGORITHMS = tuple(DIGEST_HEX_DIGITS)
#: one well-formed digest as a regular expression (the plain paths match whole columns of them)
DIGEST_PATTERN = "|".join(f"{name}:[0-9a-f]{{{digits}}}" for name, digits in DIGEST_HEX_DIGITS.items())
is_digest = re.compile(DIGEST_PATTERN).fullmatch


def digest_problem(value: object) -> str | None:
    """Why a part or shard digest is malformed: ``<algorithm>:<lowercase hex>`` with a registered
    algorithm (``xxh3``: 16 digits, ``sha256``: 64). ``None`` when it is well formed."""
    if type(value) is not str:
        return f"digest must be a text string, got {type(value).__name__}"
    algorithm, sep, _ = value.partition(":")
    width = DIGEST_HEX_DIGITS.get(algorithm)
    if not sep or width is None:
        return f"digest {value!r:.80} names no registered algorithm ({', '.join(DIGEST_ALGORITHMS)})"
    if not is_digest(value):
        return f"digest {value!r:.90} must be {algorithm}: followed by {width} lowercase hex digits"
    return None


def element_size(dtype: str, logical: str | None, elements: int) -> int | None:
    """Decoded bytes of ``elements`` elements of a storage dtype and optional logical type; ``None`` for
    an unknown logical type (its size function is unknown)."""
    if logical is None:
        return elements * STORAGE[dtype][1]
    spec = LOGICAL.get(logical)
    return None if spec is None else spec.size(elements)
