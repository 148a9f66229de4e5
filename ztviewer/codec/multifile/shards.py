"""What every multi-file set shares: the :class:`TensorSet` model, loading shards, naming them in problems.

Plain shard headers are read all at once (:mod:`.fast_headers`); any other shard is read by the single-file
safetensors reader, which reports its problems. Every tensor joins the set with ``shard`` (the
shard's name as the index or manifest lists it) and ``source`` (its :class:`ShardSource`), so
decoding, digests and hashes go through ``TensorFile.source_for`` as usual.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .. import registry
from ..errors import Cancelled, CodecError, ManifestDecodeError, UnknownFormat
from ..formats.safetensors import parse_json
from ..huge_int import from_digits
from ..model import Problem, Region, Severity, Tensor, TensorFile
from ..portable import open_regular
from ..source import Source
from .fast_headers import read_batch
from .set_table import SetTable
from .shard_source import (
    HEAD_BYTES,
    MIN_FIRST_READ,
    NO_LINK_FLAGS,
    ShardSource,
    SourcePool,
    next_first_read,
    read_head,
)

Progress = Callable[[int, int], None]
CancelCheck = Callable[[], bool]
MAX_JSON_BYTES = 256 << 20
_DIGITS_AS_NINE = bytes.maketrans(b"0123456789", b"9" * 10)
_LONG_RUN = b"9" * 19  # 19 digits in a row may be an integer past 64 bits


@dataclass(slots=True)
class TensorSet(TensorFile):
    """A tensor set stored as several safetensors files, read into one :class:`TensorFile`.

    ``path`` is the index or manifest file, ``source`` is ``None`` (each tensor's shard source is in
    ``tensor.source``), ``extra["shards"]`` describes every shard and :meth:`close` closes them all.
    """

    shards: list[Shard] = field(default_factory=list, repr=False)
    pool: SourcePool | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        """Bytes of all shard files present."""
        return sum(s.size or 0 for s in self.shards)

    def close(self) -> None:
        for shard in self.shards:
            if shard.source is not None:
                shard.source.close()

    def shard_file(self, source: Source) -> TensorFile:
        """One shard as a file of its own: its tensors and its container regions (the 8-byte header length and
        the JSON header), for a view that shows that shard's bytes."""
        shard = next((s for s in self.shards if s.source is source), None)
        length = shard.header_length if shard is not None else None
        if length is None:   # a shard whose header could not be read: show the length it claims
            length = int.from_bytes(source.head(8), "little") if source.size >= 8 else 0
        regions = [Region("header-length", 0, min(8, source.size), "header length"),
                   Region("header", 8, max(0, min(length, source.size - 8)), "JSON header")]
        tensors = [t for t in self.tensors if t.source is source]
        return TensorFile(path=source.path, format="safetensors", tensors=tensors, source=source, regions=regions)

    def renumber(self) -> None:
        """Number the tensors by their position (after placeholders were inserted)."""
        for i, tensor in enumerate(self.tensors):
            tensor.index = i
        self.invalidate_index()


class Shard:
    """One shard as the set lists it, and what was found on disk.

    ``tensors`` are already members of the set (``shard``, ``source``, set-wide ``index``);
    ``file_problems`` are the shard file's own file-level problems; ``problems`` counts every problem the
    set reports naming this shard; ``plain`` says the header was read on the batch path (so it has none);
    ``info`` holds format-specific figures for ``extra["shards"]`` (a dataset's ``samples_count``, …).
    Fields not set for a shard keep the immutable class defaults (a set may hold many thousand shards).
    """

    source: ShardSource | None = None
    tensors: Sequence[Tensor] = ()
    attributes: Mapping[str, Any] = MappingProxyType({})
    file_problems: Sequence[Problem] = ()
    readable = False
    missing = False
    error: str | None = None
    outside: str | None = None  # the real path, when links lead out of the set's folder
    header_length: int | None = None
    plain = False
    data_bytes = 0
    problems = 0
    info: Mapping[str, Any] = MappingProxyType({})

    def __init__(self, name: str, path: str, *, error: str | None = None) -> None:
        self.name = name
        self.path = path
        if error is not None:
            self.error = error

    def __repr__(self) -> str:
        state = "missing" if self.missing else "readable" if self.readable else "unreadable"
        return f"Shard({self.name!r}, {state}, {len(self.tensors)} tensors)"

    @property
    def size(self) -> int | None:
        return self.source.size if self.source is not None else None

    @property
    def usable(self) -> bool:
        return self.readable

    def describe(self) -> dict[str, Any]:
        """The JSON-friendly row of ``extra["shards"]``."""
        row = {"name": self.name, "path": self.path, "size": self.size, "missing": self.missing,
               "tensors": len(self.tensors), "samples_count": None, "bytes": None, "problems": self.problems}
        if self.info:
            row.update(self.info)
        return row


def shard_prefix(name: str) -> str:
    """How a set-level problem names the shard it is about (it starts with this)."""
    return f"shard {name!r}: "


def shard_warnings(problems: list[Problem], name: str) -> list[Problem]:
    """The set-level warnings about shard ``name`` (a link out of the set's folder, the shard file's own)."""
    prefix = shard_prefix(name)
    return [p for p in problems if not p.is_error and p.message.startswith(prefix)]


class ProblemLog:
    """Set-level problems, each naming its shard, counted per shard for ``extra["shards"]``."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, severity: Severity, message: str, rule: str = "", shard: Shard | None = None,
            tensor: str | None = None, target: Tensor | None = None) -> None:
        """Record a problem on the set (or on ``target``), prefixed with the shard's name."""
        if shard is not None:
            message = shard_prefix(shard.name) + message
            shard.problems += 1
        problem = Problem(severity, message, rule=rule, tensor=tensor)
        (target.problems if target is not None else self.problems).append(problem)

    def error(self, message: str, rule: str = "", **where: Any) -> None:
        self.add(Severity.ERROR, message, rule, **where)

    def warning(self, message: str, rule: str = "", **where: Any) -> None:
        self.add(Severity.WARNING, message, rule, **where)

    def adopt_shard_problems(self, shard: Shard) -> None:
        """Copy the shard file's own problems onto the set, and name the shard in its tensors' problems."""
        if shard.plain:
            return
        prefix = shard_prefix(shard.name)
        for p in shard.file_problems:
            self.problems.append(replace(p, message=prefix + p.message))
            shard.problems += 1
        for t in shard.tensors:
            if t.problems:
                t.problems[:] = [replace(p, message=prefix + p.message) for p in t.problems]
                shard.problems += len(t.problems)


def read_json(path: str) -> Any:
    """Parse a small JSON file; a malformed one raises :class:`ManifestDecodeError` saying where."""
    with open_regular(path) as f:
        data = f.read(MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise ManifestDecodeError(f"{os.path.basename(path)} is larger than {MAX_JSON_BYTES:,} bytes",
                                  rule="index and manifest files are small JSON documents")
    # orjson turns integers past 64 bits into floats; json keeps them exact. (A regular expression for the
    # run of digits takes ~10 ns per byte; translate + find, under 1.)
    if _LONG_RUN not in data.translate(_DIGITS_AS_NINE):
        try:
            return parse_json(data)
        except ValueError:  # said again by the standard library, with line and column
            pass
    try:
        return json.loads(data, parse_int=from_digits)
    except UnicodeDecodeError as exc:
        raise ManifestDecodeError(f"{os.path.basename(path)} is not UTF-8 text: {exc.reason}", offset=exc.start,
                                  rule="JSON is UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ManifestDecodeError(f"{os.path.basename(path)} is not valid JSON: {exc.msg} (line {exc.lineno}, "
                                  f"column {exc.colno})", offset=exc.pos, rule="valid JSON") from None
    except RecursionError:
        raise ManifestDecodeError(f"{os.path.basename(path)} nests too deeply", rule="valid JSON") from None


def shard_path(folder: str, name: str) -> str | None:
    """The shard's path beside the index/manifest, or ``None`` when ``name`` points outside the folder."""
    if _file_name_alone(name):
        return folder + os.sep + name
    if not name or os.path.isabs(name) or ".." in name.replace("\\", "/").split("/"):
        return None
    return os.path.join(folder, name)


def _file_name_alone(name: str) -> bool:
    """Whether ``name`` is a file name with no folder part (nothing that could lead out of the folder)."""
    return "/" not in name and "\\" not in name and ":" not in name and name not in ("", ".", "..")


def open_shard(folder: str, name: str, pool: SourcePool, home: str | None = None, first: int = HEAD_BYTES) -> Shard:
    """Open one shard's file and read its header bytes (``first`` of them with the first read: see
    :func:`~.shard_source.read_head`); a missing or unreadable file is recorded, not raised.

    Only regular files are opened (a FIFO would block forever); a shard whose real path (links resolved) lies
    outside the set's folder is opened but noted (``outside``): a Hugging Face cache links every snapshot file
    to a blob two folders up, so the link itself is no fault, but the user should know where the bytes are.
    ``home`` is the folder's real path when the caller has it already. A shard named by its file name alone is
    first opened with one call that follows no link in the last step (:data:`~.shard_source.NO_LINK_FLAGS`): it is
    then in the folder, with nothing more to look at; when that fails (a link, a missing file, a system without
    those flags), the usual open says why and the real path is looked at."""
    if "\0" in name:
        return Shard(name, name, error="the shard name holds a NUL character, which no file name can")
    alone = _file_name_alone(name)
    path = shard_path(folder, name)
    if path is None:
        return Shard(name, name, error="the shard path must be relative to the set's folder and stay inside it")
    shard = Shard(name, path)
    fd = None  # stays None unless opened here, in the folder and no link
    if alone and NO_LINK_FLAGS:
        try:
            fd = os.open(path, NO_LINK_FLAGS)
        except (OSError, ValueError):
            pass
    try:
        shard.source = ShardSource(path, pool, read_head(path, fd, first))
    except FileNotFoundError:
        shard.missing = True
    except OSError as exc:
        shard.error = exc.strerror or str(exc)
    except ValueError:  # a lone surrogate no file system encoding takes
        shard.error = "the shard name is not valid Unicode, so no file can have it"
    else:
        outside = None if fd is not None else _outside(folder, path, alone, home)
        if outside is not None:
            shard.outside = outside
    return shard


def _outside(folder: str, path: str, alone: bool, home: str | None) -> str | None:
    """The shard's real path when it lies outside the folder, else ``None``. A plain file name (``alone``) that
    is no link lies in the folder by construction: one ``lstat`` instead of resolving every component of the path."""
    if alone and not os.path.islink(path):
        return None
    real, home = os.path.realpath(path), home or os.path.realpath(folder)
    return real if os.path.commonpath([real, home]) != home else None


def load_shards(folder: str, names: list[str], pool: SourcePool, progress: Progress | None,
                cancelled: CancelCheck | None) -> tuple[list[Shard], SetTable | None]:
    """Open every listed shard and read its header, reporting ``progress(done, total)``: the shards, and the table of
    all their tensors in order when every shard opened was read on the batch path (``None`` otherwise).

    Tensors are numbered across the set in shard order. Raises :class:`Cancelled` (closing what was opened)
    when ``cancelled()`` turns true.
    """
    shards: list[Shard] = []
    total = len(names)
    if progress is not None:
        progress(0, total)
    home = os.path.realpath(folder)
    first = MIN_FIRST_READ  # a set's shards have headers of about the same length: as long as the last one read
    try:
        for done, name in enumerate(names, 1):
            if cancelled is not None and cancelled():
                raise Cancelled()
            shard = open_shard(folder, name, pool, home, first)
            shards.append(shard)
            if shard.source is not None and len(shard.source.prefix) > first:  # read twice: read more first
                first = next_first_read(shard.source.prefix)
            if progress is not None:
                progress(done, total)
        table = _read_headers(shards)
    except BaseException:
        for shard in shards:
            if shard.source is not None:
                shard.source.close()
        raise
    return shards, table


def _read_headers(shards: list[Shard]) -> SetTable | None:
    """Parse every opened shard's header: all plain ones in one batch (their table is returned), any other with
    the full reader."""
    opened = [s for s in shards if s.source is not None]
    table = _read_fast(opened, 0)
    if table is not None:
        return table
    index = 0
    handler = registry.format_named("safetensors")
    for shard in opened:
        if _read_fast([shard], index) is None:
            _read_slow(shard, handler, index)
        index += len(shard.tensors)
    return None


def _read_fast(shards: list[Shard], first_index: int) -> SetTable | None:
    sources = [s.source for s in shards]
    found = read_batch([s.prefix for s in sources], [s.size for s in sources],  # type: ignore[union-attr]
                       [s.name for s in shards], sources, first_index)
    if found is None:
        return None
    table, per_shard = found
    for shard, (n, metadata, tensors, data_bytes) in zip(shards, per_shard):
        shard.header_length, shard.attributes, shard.data_bytes = n, metadata, data_bytes
        shard.tensors = tensors
        shard.readable = shard.plain = True
    return table


def _read_slow(shard: Shard, handler: registry.FormatSpec, index: int) -> None:
    """Read a shard with the single-file reader, which reports every problem it finds."""
    source = shard.source
    if source is None:  # never opened: its problem is already recorded
        return
    try:
        if not handler.sniff(registry.Probe(source)):
            raise UnknownFormat("not a safetensors file (it does not start with a u64 header length and '{')",
                                offset=0, rule="format detection by magic bytes")
        tf = handler.reader()(source)
    except CodecError as exc:
        shard.file_problems = [exc.to_problem()]
        return
    for i, tensor in enumerate(tf.tensors):
        tensor.shard, tensor.source, tensor.index_in_shard = shard.name, source, tensor.index
        tensor.index = index + i
    data = [t.components.get("data") for t in tf.tensors]
    shard.tensors, shard.attributes, shard.file_problems = tf.tensors, tf.attributes, tf.problems
    shard.header_length, shard.readable = tf.extra.get("header_length"), True
    shard.data_bytes = sum(c.length for c in data if c is not None)


def shard_file(tf: TensorFile, source: Source) -> TensorFile:
    """The part of a multi-file set stored in ``source`` as a file of its own: that shard's tensors and the regions
    of its safetensors header (u64 length prefix, JSON header), clipped to the shard's size, for views of its
    bytes. The header length comes from the reader; a shard it did not read has it taken from the prefix."""
    shard = next((s for s in getattr(tf, "shards", ()) if s.source is source), None)
    if shard is not None and shard.readable:
        tensors, header = list(shard.tensors), shard.header_length
    else:
        tensors, header = [t for t in tf.tensors if t.source is source], None
    if header is None:
        header = int.from_bytes(source.head(8), "little") if source.size >= 8 else 0
    regions = [Region("header-length", 0, min(8, source.size), "u64 LE header length"),
               Region("header", 8, max(0, min(header, source.size - 8)), "JSON header")]
    return TensorFile(path=source.path, format="safetensors", tensors=tensors, source=source, regions=regions)


def placeholder(name: str, shard: Shard) -> Tensor:
    """A tensor the index lists but its shard lacks: no dtype, no bytes, shown so the gap is visible."""
    return Tensor(name, "unknown", (), components={}, shard=shard.name, extra={"missing": True})


def report_outside(shard: Shard, issues: ProblemLog) -> None:
    """A warning for a shard whose links lead out of the set's folder (the user should know where its bytes
    come from; a Hugging Face cache does this for every file, so it is no error)."""
    if shard.outside is not None:
        issues.warning(f"the shard file is a link to {shard.outside}, outside the set's folder; its bytes are read "
                       "from there", "shards lie in the set's folder", shard=shard)


def report_unusable(shard: Shard, issues: ProblemLog, what: str) -> None:
    """One set-level error for a shard that is missing or cannot be read at all."""
    if shard.missing:
        issues.error(f"the shard file is missing ({shard.path}); {what}", "every listed shard exists", shard=shard)
    elif shard.error is not None:
        issues.error(f"cannot be opened: {shard.error}; {what}", "every listed shard can be read", shard=shard)
    elif shard.source is not None and not shard.readable:
        reason = "; ".join(p.message for p in shard.file_problems) or "unreadable"
        issues.error(f"is not a readable safetensors file: {reason}; {what}", "every shard is a safetensors file",
                  shard=shard)


def unreadable_set(path: str, fmt: str, exc: CodecError, extra: dict[str, Any] | None = None) -> TensorSet:
    """The set when its index or manifest itself cannot be used."""
    return TensorSet(path=path, format=fmt, readable=False, problems=[exc.to_problem()], extra=extra or {})


def sample_names(names: list[str], limit: int = 3) -> str:
    shown = ", ".join(map(repr, names[:limit]))
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
