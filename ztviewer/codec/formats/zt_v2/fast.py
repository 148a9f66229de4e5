"""The common case of a v2 manifest, checked and built in one tight loop: a plain dense object.

An object qualifies when its keys are exactly ``parts, shape, layout`` (in deterministic order), its one
part ``data`` has ``blob``, ``dtype`` and optionally ``type`` (a registered byte-wide or complex type) and
``digest``, in deterministic order, and every value is valid: the name, the shape (rank, u64 product), the
dtype, the blob pair, the dense size equation and the digest syntax. Such an object becomes a
:func:`~ztviewer.codec.model.dense_tensor` whose component is built on first use. Anything else, however
slightly unusual, goes to the full reader (:mod:`.schema`, :mod:`.layouts`), which says what is wrong;
this loop only accepts what that reader accepts without a problem, and builds the same tensor.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...model import Tensor, dense_tensor
from ...plain_columns import MAX_RANK, U64_MAX
from .vocab import LOGICAL, STORAGE, is_digest

Fallback = Callable[[int, Any, Any], Tensor]
MAX_NAME_CHARS = 256  # at most 1,024 UTF-8 bytes: longer names go to the full reader, which measures them
OBJECT_KEYS = ("parts", "shape", "layout")
#: the part key tuples the loop takes, in deterministic order → (has type, has digest)
PART_KEYS = {("blob", "dtype"): (False, False), ("blob", "type", "dtype"): (True, False),
              ("blob", "dtype", "digest"): (False, True), ("blob", "type", "dtype", "digest"): (True, True)}
#: (dtype, logical type) → (tensor dtype, component dtype, bytes per element, the component's extra)
KINDS: dict[tuple[str, str | None], tuple[str, str, int, dict[str, Any]]] = {}
for _short, (_canonical, _width) in STORAGE.items():
    KINDS[_short, None] = (_canonical, _canonical, _width, {"dtype": _short, "digest_over": "decoded"})
for _name, _spec in LOGICAL.items():
    if not _spec.packed:  # f4_e2m1 needs its element count on the component: the full reader sets it
        KINDS[_spec.storage, _name] = (_spec.canonical, STORAGE[_spec.storage][0], _spec.size(1),
                                        {"dtype": _spec.storage, "type": _name, "digest_over": "decoded"})


class _Unusual(Exception):
    """Raised inside the loop to send one object to the full reader."""


def objects_tensors(objects: dict[Any, Any], fallback: Fallback) -> list[Tensor]:
    """One tensor per object, in manifest order."""
    tensors: list[Tensor] = []
    append = tensors.append
    kinds, part_keys, digest_ok, dense = KINDS, PART_KEYS, is_digest, dense_tensor
    for index, (name, entry) in enumerate(objects.items()):
        try:
            if (type(name) is not str or not name or len(name) > MAX_NAME_CHARS or "\0" in name
                    or type(entry) is not dict or tuple(entry) != OBJECT_KEYS or entry["layout"] != "dense"):
                raise _Unusual
            parts, shape = entry["parts"], entry["shape"]
            if type(parts) is not dict or len(parts) != 1 or type(shape) is not list or len(shape) > MAX_RANK:
                raise _Unusual
            part = parts["data"]
            has_type, has_digest = part_keys[tuple(part)]
            blob = part["blob"]
            kind = kinds[part["dtype"], part["type"] if has_type else None]
            if type(blob) is not list or len(blob) != 2:
                raise _Unusual
            offset, length = blob
            if type(offset) is not int or type(length) is not int or not 0 <= offset <= U64_MAX:
                raise _Unusual
            count = 1
            for dim in shape:
                if type(dim) is not int or dim < 0:
                    raise _Unusual
                count *= dim
            if count > U64_MAX or count * kind[2] != length:
                raise _Unusual
            digest = part["digest"] if has_digest else None
            if digest is not None and (type(digest) is not str or not digest_ok(digest)):
                raise _Unusual
            append(dense(name, kind[0], tuple(shape), index, offset, length, "raw", digest, length, "dense",
                         None, kind[1], kind[3]))
        except (_Unusual, KeyError, TypeError, ValueError):
            append(fallback(index, name, entry))
    return tensors
