"""The rules and caps every decoded component is held to, whatever its encoding: the size the model expects,
the decode limit per component and the budget per pass over a file (a decompression bomb stops at its first
surplus byte), the value rules of logical types, and the refusal of parts only shown, never decoded."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from .dtypes import DTYPES
from .errors import DecodeError, DecodeLimitExceeded, FileDecodeBudgetSpent, UnsupportedLayout
from .model import Component, Tensor

#: decoding streams in chunks of this many bytes (the most a stream of unknown size allocates at once)
CHUNK = 8 << 20
_DEFAULT_LIMIT = 4 << 30
_DATA_RULE = "layout-data (v2 §5.2, App. A): the decoded data satisfies its layout and logical type rules"

CancelCheck = Callable[[], bool]


def where(tensor: Tensor, component: Component) -> dict[str, Any]:
    """The location arguments of a :class:`~.errors.CodecError` about ``component``."""
    return {"tensor": tensor.name, "component": component.role, "offset": component.offset}


def env_bytes(name: str, default: int) -> int:
    """A byte count from environment variable ``name``; ``default`` when unset or not an integer."""
    value = os.environ.get(name)
    try:
        return int(value) if value else default
    except ValueError:
        return default


def decode_limit() -> int:
    """Largest decoded size of one compressed component (``ZTVIEWER_MAX_DECODED`` bytes, default 4 GiB)."""
    return env_bytes("ZTVIEWER_MAX_DECODED", _DEFAULT_LIMIT)


def expected_length(tensor: Tensor, component: Component) -> int | None:
    """Decoded byte length of a component when the model determines it, else ``None``."""
    if component.uncompressed_length is not None:
        return component.uncompressed_length
    if not component.is_compressed:
        return component.length
    if tensor.layout == "dense" and component.role == "data" and tensor.extra.get("packed") is None:
        return tensor.dense_nbytes
    if tensor.layout == "sparse_csr" and component.role == "indptr" and len(tensor.shape) >= 1:
        return (tensor.shape[0] + 1) * 8
    shape = component.shape
    if shape is not None and component.dtype in DTYPES:
        size = DTYPES[component.dtype].itemsize
        for dim in shape:
            size *= dim
        return size
    return None


def refuse_unsupported(tensor: Tensor, component: Component) -> None:
    """Raise :class:`UnsupportedLayout` for a component the reader marked structural-only (an unknown
    logical type or encoding): its bytes can be shown but never decoded or reinterpreted."""
    refusal = component.extra.get("refuse") if component.extra else None
    if refusal is not None:
        message, rule = refusal
        raise UnsupportedLayout(message, rule=rule, **where(tensor, component))


def check_data(tensor: Tensor, component: Component, chunk: memoryview | bytes, start: int, total: int) -> None:
    """Value rules of the logical types that have them (zTensor v2 App. A): bool bytes are 0 or 1; a packed
    f4_e2m1 part with an odd element count ends in a zero high nibble."""
    logical = component.extra.get("type") if component.extra else None
    if logical == "bool":
        check_bools(tensor, component, chunk, start, _DATA_RULE)
    elif logical == "f4_e2m1" and start + len(chunk) == total and len(chunk):
        elements = component.extra.get("elements")
        if type(elements) is int and elements % 2 and memoryview(chunk)[-1] & 0xF0:
            raise DecodeError(f"the unused high nibble of the last byte is {memoryview(chunk)[-1] >> 4:#x}, not 0 "
                              f"({elements} packed f4_e2m1 elements)", rule=_DATA_RULE, **where(tensor, component))


#: the value rule of bool elements in every format (zTensor v2 states it, App. A; a byte 2..255 read "as True" by one
#: reader is anything by another)
BOOL_RULE = "a bool element is stored as 0 or 1"


def is_bool(component: Component) -> bool:
    """Whether the component's elements are bools (a bool dtype, or zTensor v2's ``u8`` with ``type: bool``)."""
    info = DTYPES.get(component.dtype or "")
    return (info is not None and info.kind == "bool") or bool(component.extra and component.extra.get("type") == "bool")


def check_bools(tensor: Tensor, component: Component, chunk: memoryview | bytes, start: int, rule: str) -> None:
    """Raise :class:`DecodeError` at the first byte of ``chunk`` (bool elements from ``start``) that is not 0 or 1."""
    bits = np.frombuffer(chunk, dtype=np.uint8)
    if bits.size and int(bits.max()) > 1:
        at = int(np.argmax(bits > 1))
        raise DecodeError(f"bool element {start + at} is 0x{int(bits[at]):02x}, not 0 or 1", rule=rule,
                          **where(tensor, component))


_BUDGET: ContextVar[list[int] | None] = ContextVar("ztviewer_file_decode_budget", default=None)


@contextmanager
def per_file_budget(total: int | None = None) -> Iterator[None]:
    """Count the bytes every zstd component decodes inside this block against one budget (default
    :func:`decode_limit`), so a pass over a whole file is capped per file, not per entry: a thousand entries
    naming one 4 GiB frame decode 4 GiB, not 4 TB. Past it, decoding raises :class:`FileDecodeBudgetSpent`."""
    token = _BUDGET.set([decode_limit() if total is None else total])
    try:
        yield
    finally:
        _BUDGET.reset(token)


def spend(tensor: Tensor, component: Component, n: int) -> None:
    """Count ``n`` decoded bytes against the budget of the pass over the file, if one is open."""
    left = _BUDGET.get()
    if left is None:
        return
    left[0] -= n
    if left[0] < 0:
        raise _budget_spent(tensor, component)


def _budget_spent(tensor: Tensor, component: Component) -> FileDecodeBudgetSpent:
    return FileDecodeBudgetSpent(
        f"this pass over the file has decoded {decode_limit():,} bytes, the per-file decode limit (set "
        "ZTVIEWER_MAX_DECODED to raise it)", rule="decoded bytes per file are capped", **where(tensor, component))


def check_size(tensor: Tensor, component: Component, expected: int | None, limit: int) -> None:
    """Refuse, before decoding, an expected size above ``limit`` or above what the file's budget has left."""
    if expected is not None and expected > limit:
        raise DecodeLimitExceeded(
            f"decoding would produce {expected:,} bytes, above the decode limit of {limit:,} bytes "
            "(set ZTVIEWER_MAX_DECODED to raise it)",
            rule="decompression output cap", **where(tensor, component))
    left = _BUDGET.get()
    if left is not None and expected is not None and expected > left[0]:
        raise _budget_spent(tensor, component)
