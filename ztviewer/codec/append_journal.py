"""The journal a zTensor v2 append in progress keeps beside its target (``.<name>.ztviewer-append``), read safely.

Whatever sits at that name is untrusted: anything may have put it there. It is read only if it is a regular file
(checked with ``lstat`` before opening: a FIFO is never opened, a link never followed), at most
:data:`MAX_JOURNAL_BYTES` long, JSON with integer lengths in range and footer hashes of 16 hex digits; anything else
is :class:`UnusableJournal` with the reason, and the caller ignores it. Kept apart from the writer so that opening
a file only needs an ``lstat`` to know there is nothing to look at.
"""
from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from typing import Any

import xxhash

from .portable import O_BINARY, O_CLOEXEC, file_kind, held_by_nobody

JOURNAL_MARKER = ".ztviewer-append"
MAX_JOURNAL_BYTES = 4096
_FIELDS = ("old_length", "old_footer", "new_length", "new_footer")


@dataclass(frozen=True, slots=True)
class Journal:
    """What an append in progress will change: lengths and XXH3-64 of the 40-byte footers, before and after."""

    old_length: int
    old_footer: str
    new_length: int
    new_footer: str


class UnusableJournal(Exception):
    """The journal cannot be trusted to say anything about the file; the message says why."""


def journal_path(path: str | os.PathLike[str]) -> str:
    directory, name = os.path.split(os.path.realpath(os.fspath(path)))
    return os.path.join(directory, f".{name}{JOURNAL_MARKER}")


def footer_hash(footer: bytes) -> str:
    """How a journal records a 40-byte footer: its XXH3-64 in 16 lowercase hex digits."""
    return f"{xxhash.xxh3_64_intdigest(footer):016x}"


def journal_present(path: str | os.PathLike[str]) -> bool:
    """Whether anything at all (a file, a folder, a FIFO, a dangling link) has the journal's name."""
    return os.path.lexists(journal_path(path))


def being_written(journal_file: str) -> bool:
    """Whether a live process holds the journal's lock: its append is running, the journal is no crash's leftover
    (``False`` where the system has no ``flock``)."""
    return held_by_nobody(journal_file) is False


def not_a_file(journal_file: str) -> str | None:
    """What holds the journal's name when that is not a regular file ("a folder", "a symbolic link", …); ``None``
    for a regular file. Raises ``OSError`` (``FileNotFoundError``: nothing has the name)."""
    mode = os.lstat(journal_file).st_mode
    if stat.S_ISREG(mode):
        return None
    return "a symbolic link" if stat.S_ISLNK(mode) else file_kind(mode)


def read_journal(journal_file: str, file_size: int) -> Journal:
    """The journal at ``journal_file`` about a file of ``file_size`` bytes, or :class:`UnusableJournal`."""
    try:
        kind = not_a_file(journal_file)
    except OSError as exc:
        raise UnusableJournal(f"it cannot be examined ({exc.strerror})") from None
    if kind is not None:
        raise UnusableJournal(f"it is {kind}, not a regular file")
    data = _bounded_read(journal_file)
    try:
        fields = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise UnusableJournal(f"it is not JSON ({_short(exc)})") from None
    if type(fields) is not dict or any(key not in fields for key in _FIELDS):
        raise UnusableJournal(f"it is not a JSON object with the fields {', '.join(_FIELDS)}")
    old_length = _length(fields, "old_length", file_size)
    new_length = _length(fields, "new_length", None)
    return Journal(old_length, _hash_field(fields, "old_footer"), new_length, _hash_field(fields, "new_footer"))


def remove_journal(journal_file: str) -> None:
    """Remove a journal that no longer applies, durably; anything at its name that is not a regular file is not
    one this program wrote, and stays."""
    try:
        if not_a_file(journal_file) is not None:
            return
        os.unlink(journal_file)
    except FileNotFoundError:
        return
    fsync_directory(journal_file)


def fsync_directory(path: str) -> None:
    """Make the creation or removal of ``path`` durable (where directories can be opened: not Windows)."""
    try:
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # Windows: directories cannot be opened; the rename/unlink is durable with the file
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _bounded_read(journal_file: str) -> bytes:
    flags = os.O_RDONLY | O_BINARY | O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(journal_file, flags)
    except OSError as exc:
        reason = "it became a symbolic link" if exc.errno == errno.ELOOP else f"it cannot be read ({exc.strerror})"
        raise UnusableJournal(reason) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped for something else since the lstat
            raise UnusableJournal("it is not a regular file")
        data = os.read(fd, MAX_JOURNAL_BYTES + 1)
    except OSError as exc:
        raise UnusableJournal(f"it cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_JOURNAL_BYTES:
        raise UnusableJournal(f"it is longer than {MAX_JOURNAL_BYTES:,} bytes (a journal is about 130)")
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "…"


def _length(fields: dict[str, Any], key: str, limit: int | None) -> int:
    value = fields[key]
    if type(value) is not int:
        raise UnusableJournal(f"{key} is {_shown(value)}, not an integer")
    if value < 0:
        raise UnusableJournal(f"{key} is {value:,}, a negative length")
    if limit is not None and value > limit:
        raise UnusableJournal(f"{key} is {value:,}, past the end of the file ({limit:,} bytes)")
    return value


def _hash_field(fields: dict[str, Any], key: str) -> str:
    value = fields[key]
    if type(value) is not str or len(value) != 16 or any(c not in "0123456789abcdef" for c in value):
        raise UnusableJournal(f"{key} is {_shown(value)}, not an XXH3-64 of 16 lowercase hex digits")
    return value


def _shown(value: Any) -> str:
    text = json.dumps(value) if type(value) in (str, int, float, bool) or value is None else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "…"
