"""The common case of the zTensor 1.x readers: a plain dense tensor, checked and built in one tight loop.

A 10,000-tensor manifest spends most of its opening time here. A manifest of plain entries only is checked
column by column (:mod:`.zt_columns`); any other goes through the loops below, which bind everything locally
and call one function per valid entry
(:func:`~ztviewer.codec.model.dense_tensor`, which defers the component until it is used). An entry that
is unusual in any way goes to the layout's full reader, which says what is wrong; the fast paths only ever
accept what that reader would accept without a problem, and build the same objects (property tests hold
all three together).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, MutableSequence
from typing import Any, NamedTuple

from ..dtypes import DTYPES, ZT_LONG_NAMES, ZT_SHORT_TO_CANONICAL
from ..model import Tensor, dense_tensor
from .zt_columns import objects_table, v10_table
from .zt_fields import ENCODINGS, digest_problem, is_u64

#: (index, name, entry) → the tensor the layout's full reader builds; ``None`` in single-entry probes.
Fallback = Callable[[int, Any, Any], "Tensor | None"]

_V10_INFO = {name: (name, DTYPES[name].itemsize) for name in ZT_LONG_NAMES}
_SHORT_INFO = {short: (name, DTYPES[name].itemsize) for short, name in ZT_SHORT_TO_CANONICAL.items()}


class _Unusual(Exception):
    """Raised inside the loop to send one entry to the full reader."""


class _Layout(NamedTuple):   # not a dataclass: this module is imported to open a file, and one costs ~1 ms
    """What tells the two 1.x layouts apart for a plain dense entry: where the dtype is written and in which
    spelling (``infos``: spelling → canonical name, item size), how many keys an entry and its ``data``
    component hold at least, and the optional component keys."""

    dtype_in_entry: bool
    infos: dict[str, tuple[str, int]]
    entry_keys: int
    data_keys: int
    optional: tuple[str, ...]


_V10 = _Layout(True, _V10_INFO, 4, 2, ("encoding", "digest"))
_OBJECTS = _Layout(False, _SHORT_INFO, 3, 3, ("encoding", "digest", "uncompressed_length"))


def v10_tensors(entries: dict[Any, Any], fallback: Fallback, start: int = 0) -> MutableSequence[Any]:
    """Tensors of v1.0 ``name: {dtype, shape, format, components}`` entries, numbered from ``start``."""
    table = v10_table(entries, start)
    return _loop(entries.items(), fallback, start, _V10) if table is None else table


def objects_tensors(entries: dict[Any, Any], fallback: Fallback, start: int = 0) -> MutableSequence[Any]:
    """Tensors of v1.x objects ``name: {shape, format, components}`` entries, numbered from ``start``."""
    table = objects_table(entries, start)
    return _loop(entries.items(), fallback, start, _OBJECTS) if table is None else table


def _loop(items: Iterable[tuple[Any, Any]], fallback: Fallback, start: int, layout: _Layout) -> list[Any]:
    dense = dense_tensor
    in_entry, infos, entry_keys, data_keys, optional = (layout.dtype_in_entry, layout.infos, layout.entry_keys,
                                                        layout.data_keys, layout.optional)
    tensors: list[Any] = []
    append = tensors.append
    for index, (name, entry) in enumerate(items, start):
        try:
            if type(entry) is not dict or len(entry) != entry_keys or type(name) is not str:
                raise _Unusual
            shape, components = entry["shape"], entry["components"]
            if entry["format"] != "dense" or len(components) != 1:
                raise _Unusual
            data = components["data"]
            spelled = entry["dtype"] if in_entry else data["dtype"]
            if type(spelled) is not str:
                raise _Unusual
            dtype, nbytes = infos[spelled]
            offset, length = data["offset"], data["length"]
            if type(offset) is not int or type(length) is not int or type(shape) is not list:
                raise _Unusual
            bits = offset | length
            for dim in shape:
                if type(dim) is not int:
                    raise _Unusual
                bits |= dim
                nbytes *= dim
            if bits >> 64:  # some value is negative or past u64
                raise _Unusual
            if len(data) == data_keys:
                if nbytes != length:
                    raise _Unusual
                encoding, digest, uncompressed = "raw", None, None
            else:
                encoding, digest, uncompressed = _optional(data, data_keys, optional, length, nbytes)
        except (KeyError, TypeError, _Unusual):
            append(fallback(index, name, entry))
            continue
        append(dense(name, dtype, tuple(shape), index, offset, length, encoding, digest, uncompressed, "dense"))
    return tensors


def _optional(data: dict[str, Any], required: int, optional: tuple[str, ...], length: int, nbytes: int
              ) -> tuple[str, str | None, int | None]:
    """``(encoding, digest, uncompressed_length)`` of a component with optional keys, all of them valid and
    agreeing with the ``nbytes`` that dtype and shape need."""
    if len(data) != required + sum(1 for key in optional if key in data):
        raise _Unusual
    encoding, digest = data.get("encoding", "raw"), data.get("digest")
    uncompressed = data.get("uncompressed_length")
    if (type(encoding) is not str or encoding not in ENCODINGS or (digest is not None and digest_problem(digest))
            or (uncompressed is not None and not is_u64(uncompressed))):
        raise _Unusual
    stored = length if encoding == "raw" else uncompressed
    if (stored is not None and stored != nbytes) or (uncompressed is not None and encoding == "raw"
                                                     and uncompressed != length):
        raise _Unusual
    return encoding, digest, uncompressed


def _none(index: int, name: Any, entry: Any) -> None:
    return None


def probe_v10(index: int, name: Any, entry: Any) -> Tensor | None:
    """The fast path for one v1.0 entry: its tensor, or ``None`` when the full reader must say more."""
    tensor: Tensor | None = v10_tensors({name: entry}, _none, index)[0]
    return tensor


def probe_objects(index: int, name: Any, entry: Any) -> Tensor | None:
    """The fast path for one objects-layout entry: its tensor, or ``None`` when the full reader must."""
    tensor: Tensor | None = objects_tensors({name: entry}, _none, index)[0]
    return tensor
