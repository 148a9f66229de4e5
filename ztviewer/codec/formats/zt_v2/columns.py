"""The plain path of the v2 reader: an ``objects`` map of plain dense objects proven sound column by column.

When every object is what :mod:`.fast` takes (keys exactly ``parts, shape, layout``, layout ``dense``, one
part ``data`` with ``blob``, ``dtype``, optionally ``type`` and ``digest``, all in deterministic order, sizes
that match), a fixed number of C-level passes over all objects (``map``, ``set``, ``min``/``max``, list
comparisons, one regular expression over the joined digests) proves it, and the objects are listed as a
:class:`~ztviewer.codec.tensor_table.TensorTable` whose tensors are built on access, equal to the ones the
loop builds. Anything else answers ``None`` and the per-object loop reads the map.
"""
from __future__ import annotations

import re
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

from ...plain_columns import plain_columns
from ...tensor_table import TensorTable
from .fast import KINDS, MAX_NAME_CHARS, OBJECT_KEYS, PART_KEYS
from .vocab import DIGEST_PATTERN

_DIGESTS = re.compile(f"(?:{DIGEST_PATTERN})(?:\n(?:{DIGEST_PATTERN}))*")  # digests joined by newlines
_parts, _shape, _layout = itemgetter("parts"), itemgetter("shape"), itemgetter("layout")
_data, _blob, _dtype = itemgetter("data"), itemgetter("blob"), itemgetter("dtype")
_canonical, _width, _stored = itemgetter(0), itemgetter(2), itemgetter(1, 3)
_DICT, _LIST, _STR, _ONE, _TWO = {dict}, {list}, {str}, {1}, {2}


def objects_table(objects: dict[Any, Any]) -> TensorTable | None:
    """The tensors of a decoded v2 ``objects`` map when every object is plain, else ``None``."""
    names = list(objects)
    values = list(objects.values())
    if not values or set(map(type, names)) != _STR or set(map(type, values)) != _DICT:
        return None
    if min(map(len, names)) < 1 or max(map(len, names)) > MAX_NAME_CHARS or "\0" in "".join(names):
        return None
    if set(map(tuple, values)) != {OBJECT_KEYS} or set(map(_layout, values)) != {"dense"}:
        return None
    parts = list(map(_parts, values))
    if set(map(type, parts)) != _DICT or set(map(len, parts)) != _ONE:
        return None
    try:
        data = list(map(_data, parts))
        if set(map(type, data)) != _DICT:
            return None
        key_sets = set(map(tuple, data))
        if not key_sets <= PART_KEYS.keys():
            return None
        types = (list(map(dict.get, data, repeat("type"))) if any(PART_KEYS[k][0] for k in key_sets)
                 else repeat(None))
        kinds = list(map(KINDS.__getitem__, zip(map(_dtype, data), types)))  # KeyError / TypeError: unusual
    except (KeyError, TypeError):
        return None
    digests = list(map(dict.get, data, repeat("digest"))) if any(PART_KEYS[k][1] for k in key_sets) else None
    if digests is not None and not _digests_sound(digests):
        return None
    blobs = list(map(_blob, data))
    shapes = list(map(_shape, values))
    if set(map(type, blobs)) != _LIST or set(map(len, blobs)) != _TWO:
        return None
    columns = plain_columns(shapes, map(_width, kinds), list(chain.from_iterable(blobs)), pairs=True)
    if columns is None:
        return None
    return TensorTable(names, list(map(_canonical, kinds)), *columns, spelling="dense",
                       digests=digests, stored=list(map(_stored, kinds)), decoded=True)


def _digests_sound(digests: list[Any]) -> bool:
    """Whether every digest is absent (``None``) or an ``xxh3:`` / ``sha256:`` digest in its exact syntax."""
    present = [d for d in digests if d is not None] if None in digests else digests
    if not present:
        return True
    if set(map(type, present)) != _STR:
        return False
    joined = "\n".join(present)
    return joined.count("\n") == len(present) - 1 and _DIGESTS.fullmatch(joined) is not None
