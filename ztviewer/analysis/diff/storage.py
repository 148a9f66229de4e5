"""How two tensors are described and stored, and whether their stored bytes are the same.

The stored-bytes check is the fast path of every comparison: two components with the same description
whose bytes match hold the same content, whatever their layout or encoding, without decoding anything.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ztviewer.codec.errors import Cancelled
from ztviewer.codec.model import Component, Tensor, TensorFile

from .model import TensorSide

CHUNK = 8 << 20
CancelCheck = Callable[[], bool]
ByteProgress = Callable[[int], None]


def side(tensor: Tensor) -> TensorSide:
    return TensorSide(tensor.name, tensor.index, tensor.dtype, tuple(tensor.shape), tensor.layout,
                      tensor.component_encodings(), tensor.stored_nbytes)


def _digest_kind(component: Component) -> str:
    return component.digest.partition(":")[0] if component.digest else "none"


def _joined(values: list[str]) -> str:
    return ", ".join(values) if values else "none"


def storage_changes(a: Tensor, b: Tensor, alike: bool) -> list[str]:
    """What differs in how ``a`` and ``b`` are described and stored, one phrase each (``"dtype float32 →
    bfloat16"``); empty when nothing does. ``alike``: whether :func:`same_description` holds (the caller asks it
    once for the whole comparison)."""
    if alike and all(_digest_kind(c) == _digest_kind(b.components[role]) for role, c in a.components.items()):
        return []   # the common case, in one pass: nothing below could differ
    changes = []
    if a.dtype != b.dtype:
        changes.append(f"dtype {a.dtype} → {b.dtype}")
    if tuple(a.shape) != tuple(b.shape):
        changes.append(f"shape {list(a.shape)} → {list(b.shape)}")
    if a.layout != b.layout:
        changes.append(f"layout {a.layout} → {b.layout}")
    elif a.extra_value("packed") != b.extra_value("packed"):
        changes.append(f"packing {a.extra_value('packed') or 'components'} → {b.extra_value('packed') or 'components'}")
    ca, cb = a.components, b.components
    if set(ca) != set(cb) and a.layout == b.layout:
        changes.append(f"components {_joined(sorted(ca))} → {_joined(sorted(cb))}")
    for label, key in (("encoding", lambda c: c.encoding), ("byte order", lambda c: c.byte_order),
                       ("checksum", _digest_kind)):
        va = sorted({key(c) for c in ca.values()})
        vb = sorted({key(c) for c in cb.values()})
        if va != vb:
            changes.append(f"{label} {_joined(va)} → {_joined(vb)}")
    return changes


def same_description(a: Tensor, b: Tensor) -> bool:
    """Same dtype, shape, layout and components stored alike (roles, encodings, byte orders, lengths)."""
    if (a.dtype, tuple(a.shape), a.layout, a.extra_value("packed")) != (
            b.dtype, tuple(b.shape), b.layout, b.extra_value("packed")):
        return False
    ca, cb = a.components, b.components
    if set(ca) != set(cb):
        return False
    return all((x.encoding, x.byte_order, x.length) == (cb[role].encoding, cb[role].byte_order, cb[role].length)
               for role, x in ca.items())


def same_stored_bytes(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor, *,
                      progress: ByteProgress | None = None, cancelled: CancelCheck | None = None) -> bool:
    """Whether every component of ``a`` has the same stored bytes as ``b``'s (call when
    :func:`same_description` holds). Stops at the first differing chunk. Both sides are read with positional
    reads, chunk by chunk (nothing stays resident; a file truncated meanwhile is an error, never SIGBUS)."""
    source_a, source_b = tf_a.source_for(a), tf_b.source_for(b)
    for role, ca in a.components.items():
        cb = b.components[role]
        if ca.length != cb.length:
            return False
        if ca.length <= CHUNK:   # most components: one positional read each
            if cancelled is not None and cancelled():
                raise Cancelled()
            if source_a.read(ca.offset, ca.length, "component", tensor=a.name, component=role) != \
                    source_b.read(cb.offset, cb.length, "component", tensor=b.name, component=role):
                return False
            if progress is not None:
                progress(ca.length)
            continue
        chunks_a = source_a.read_chunks(ca.offset, ca.length, CHUNK, "component", reuse=True, tensor=a.name,
                                        component=role)
        chunks_b = source_b.read_chunks(cb.offset, cb.length, CHUNK, "component", reuse=True, tensor=b.name,
                                        component=role)
        for part_a, part_b in zip(chunks_a, chunks_b, strict=True):
            if cancelled is not None and cancelled():
                raise Cancelled()
            if not _equal_chunk(memoryview(part_a), memoryview(part_b)):
                return False
            if progress is not None:
                progress(len(part_a))
    return True


def _equal_chunk(a: memoryview, b: memoryview) -> bool:
    words = len(a) // 8 * 8
    if words and not np.array_equal(np.frombuffer(a[:words], np.uint64), np.frombuffer(b[:words], np.uint64)):
        return False
    return bytes(a[words:]) == bytes(b[words:])
