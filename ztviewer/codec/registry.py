"""Format registry: a handler (a sniff function, a reader and optionally a writer) for each built-in format, plus
any registered with :func:`register`.

Detection is by magic bytes only; the extension is used as a hint for the message when nothing matches. The
built-in handlers sniff with :mod:`.formats.magic` and import their format's reader on its first read, so opening
a file imports the reader of its format only.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .append_journal import journal_present
from .errors import CodecError, UnknownFormat
from .format_handler import HEAD_BYTES, FormatHandler, Reader
from .formats.magic import ZT_V2_FORMAT, sniff_blz, sniff_safetensors, sniff_zt, sniff_zt_v2, sniff_zt_v2_tail
from .io.adapted import as_source
from .model import Problem, Severity, TensorFile
from .source import LocalFile, Source

if TYPE_CHECKING:
    from .io.protocol import ByteSource


def _read_blz(source: Source) -> TensorFile:
    from .formats import blz

    return blz.read(source)


def _read_safetensors(source: Source) -> TensorFile:
    from .formats import safetensors

    return safetensors.read(source)


def _read_zt(source: Source) -> TensorFile:
    from .formats import zt

    return zt.read(source)


def _read_zt_v2(source: Source) -> TensorFile:
    from .formats import zt_v2

    return zt_v2.read(source)


#: the built-in formats, in detection order
BUILTIN_HANDLERS = (
    FormatHandler(name="blz", description="BLZ1 tensor train", extensions=(".blz",), sniff=sniff_blz,
                  read=_read_blz),
    FormatHandler(name="safetensors", description="Hugging Face safetensors", extensions=(".safetensors",),
                  sniff=sniff_safetensors, read=_read_safetensors),
    FormatHandler(name="zt", description="zTensor 0.1 / 1.x", extensions=(".zt",), sniff=sniff_zt, read=_read_zt),
    FormatHandler(name=ZT_V2_FORMAT, description="zTensor v2 (ztensor 2.x)", extensions=(".zt",), sniff=sniff_zt_v2,
                  read=_read_zt_v2, sniff_tail=sniff_zt_v2_tail),
)
_HANDLERS: list[FormatHandler] = list(BUILTIN_HANDLERS)


def register(handler: FormatHandler) -> FormatHandler:
    _HANDLERS[:] = [h for h in _HANDLERS if h.name != handler.name]
    _HANDLERS.append(handler)
    return handler


def handlers() -> list[FormatHandler]:
    return list(_HANDLERS)


def handler_named(name: str) -> FormatHandler:
    for h in handlers():
        if h.name == name:
            return h
    raise KeyError(name)


def detect(head: bytes, size: int) -> FormatHandler | None:
    for h in handlers():
        if h.sniff(head, size):
            return h
    return None


def _extension_hint(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    for h in sorted(handlers(), key=lambda h: h.name):  # by name, not import order: ".zt" → "zt" before "zt-v2"
        if ext in h.extensions:
            return h.name
    return "unknown"


def read_source(source: Source, read: Reader | None = None) -> TensorFile:
    """Parse an already opened source (with ``read`` instead of its format's reader when given). Always returns a
    TensorFile; a fatal container error makes it ``readable=False`` with the error in ``problems``."""
    head = source.head(HEAD_BYTES)
    handler = detect(head, source.size)
    if handler is None:
        tail = source.tail(HEAD_BYTES)
        handler = next((h for h in handlers() if h.sniff_tail is not None and h.sniff_tail(tail, source.size)),
                       None)
    try:
        if handler is None:
            raise _unknown_format_error(source, head)
        tf = (read or handler.read)(source)
    except CodecError as exc:
        fmt = handler.name if handler else _extension_hint(source.path)
        return TensorFile(path=source.path, format=fmt, variant="", source=source, readable=False,
                          problems=[exc.to_problem()])
    tf.source = source
    return tf


def open_source(source: ByteSource | Source) -> TensorFile:
    """Parse a file from any source (:class:`~.io.memory.InMemorySource`, :class:`~.io.fsspec_file.FsspecSource`,
    or any object implementing the :class:`~.io.protocol.ByteSource` protocol), named by its ``path``; as
    :func:`read_source`."""
    return read_source(as_source(source))


def open_file(path: str | os.PathLike[str]) -> TensorFile:
    """Open and parse a tensor file (raises ``OSError`` only when the path cannot be opened). Nothing is written.

    A zTensor v2 append a crash interrupted (its journal beside the file applies) opens as the previous
    generation, the warning saying so first among the problems; any other journal is ignored with a warning
    that says why (:mod:`.interrupted_append`), after the error of a file that cannot be read."""
    source = LocalFile(path)
    if not journal_present(path):
        return read_source(source)
    from .interrupted_append import APPLICABLE, examine_journal, read_previous_generation

    finding = examine_journal(source)
    if finding is None:
        return read_source(source)
    applicable = finding.verdict == APPLICABLE
    tf = read_source(source, (lambda s: read_previous_generation(s, finding)) if applicable else None)
    tf.problems.insert(0 if tf.readable else len(tf.problems), finding.problem)  # first: why it cannot be read
    return tf


def _unknown_format_error(source: Source, head: bytes) -> UnknownFormat:
    hint = _extension_hint(source.path)
    if source.size == 0:
        what = "the file is empty (0 bytes)"
    else:
        shown = head[:8]
        what = f"unrecognised leading bytes {shown!r} ({source.size} bytes in all)"
    expected = {
        "zt": "a zTensor file starts with 'ZTEN0001', 'ZTEN1000' or the v2 magic",
        "safetensors": "a safetensors file starts with a u64 header length followed by '{'",
        "blz": "a .blz file starts with 'BLZ1'",
    }.get(hint, "known formats: zTensor (.zt), safetensors, BLZ1 (.blz)")
    return UnknownFormat(f"not a tensor file ztviewer can read: {what}; {expected}", offset=0,
                         rule="format detection by magic bytes")


__all__ = [
    "HEAD_BYTES",
    "FormatHandler",
    "Problem",
    "Reader",
    "Severity",
    "detect",
    "handler_named",
    "handlers",
    "open_file",
    "read_source",
    "register",
]
