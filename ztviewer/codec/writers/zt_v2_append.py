"""Saving metadata edits of a zTensor v2 file as an appended generation (spec §2.5): O(manifest), not O(file).

The new manifest (the old one with the edits: attributes, renames, deletions) goes after EOF at the file's
own alignment, zero-padded, followed by a new footer; every data blob stays where it is and is referenced in
place. Nothing already in the file is moved or overwritten.

A file whose footer is not at EOF is invalid, so an interrupted append must never cost the previous
generation. Before the first byte is appended, a small journal ``.<name>.ztviewer-append`` beside the file
records the old length and a hash of the old footer, plus the length and footer hash the append will produce,
and is fsynced (with its directory). Then the append is written and fsynced, and the journal removed. Whoever
next opens or saves the file (:func:`recover`) finds a journal left by a crash and either keeps a complete
append or truncates the file back to the recorded length, and says which, as a warning :class:`Problem`.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import cbor2
import xxhash

import ztviewer.codec.writers.zt_v2_rules as rules

from ..append_journal import journal_path
from ..errors import Cancelled, CodecError, EditRefused
from ..model import Problem, TensorFile, warning
from .blobs import KEEP
from .cbor import dumps_deterministic
from .document import EditableDocument, stored_attributes
from .zt_v2 import footer

RULE_RECOVERY = "an interrupted zTensor v2 append is rolled back to the previous generation (spec §2.5)"


@dataclass(frozen=True, slots=True)
class Journal:
    """What an append in progress will change: lengths and XXH3-64 of the 40-byte footers, before and after."""

    old_length: int
    old_footer: str
    new_length: int
    new_footer: str


def _footer_hash(data: bytes) -> str:
    return f"{xxhash.xxh3_64_intdigest(data):016x}"


def _tail(fd: int, length: int) -> bytes:
    """The 40 bytes before ``length`` (fewer when the file is shorter)."""
    start = max(0, length - rules.FOOTER_LENGTH)
    os.lseek(fd, start, os.SEEK_SET)
    return os.read(fd, length - start)


def _fsync_directory(path: str) -> None:
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


def _read_journal(path: str) -> Journal | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(4096)
        data = json.loads(raw)
        return Journal(int(data["old_length"]), str(data["old_footer"]), int(data["new_length"]),
                       str(data["new_footer"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def recover(path: str | os.PathLike[str]) -> Problem | None:
    """Finish what a crashed append left behind, if anything: keep a complete append, else truncate the file
    back to the generation before it. Returns the warning to show, ``None`` when there was no journal."""
    target = os.path.realpath(os.fspath(path))
    journal_file = journal_path(target)
    if not os.path.exists(journal_file):
        return None
    journal = _read_journal(journal_file)
    try:
        fd = os.open(target, os.O_RDWR | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        return warning(f"an interrupted save left {os.path.basename(journal_file)} behind, but the file cannot "
                       f"be opened for repair ({exc.strerror})", rule=RULE_RECOVERY)
    try:
        size = os.fstat(fd).st_size
        message = _repair(fd, size, journal)
    finally:
        os.close(fd)
    os.unlink(journal_file)
    _fsync_directory(journal_file)
    return warning(message, rule=RULE_RECOVERY, offset=journal.old_length if journal else None)


def _repair(fd: int, size: int, journal: Journal | None) -> str:
    if journal is None:
        return "an interrupted save left an unreadable journal; the file was left as it is"
    if size == journal.new_length and _footer_hash(_tail(fd, size)) == journal.new_footer:
        return ("a save that was interrupted after its new generation was complete has been kept "
                f"({size:,} bytes)")
    if size >= journal.old_length and _footer_hash(_tail(fd, journal.old_length)) == journal.old_footer:
        if size != journal.old_length:
            os.ftruncate(fd, journal.old_length)
            os.fsync(fd)
            return (f"an interrupted save (an appended generation) was rolled back: the file is back to its "
                    f"previous generation of {journal.old_length:,} bytes ({size - journal.old_length:,} "
                    "partial bytes removed)")
        return "an interrupted save had not written anything yet; the file is unchanged"
    return (f"an interrupted save left a journal that does not match the file ({size:,} bytes, the journal "
            f"expected {journal.old_length:,} or {journal.new_length:,}); the file was left as it is")


# -- building the next generation --------------------------------------------------------------------------
def why_not_appendable(doc: EditableDocument, path: str) -> str | None:
    """Why the document cannot be saved to ``path`` as an appended generation (``None``: it can)."""
    tf = doc.original
    if doc.target.key != "zt-v2" or tf.format != "zt-v2" or tf.variant != "v2":
        return "only a zTensor v2 file saved as zTensor v2 gets an appended generation"
    if not tf.path or os.path.realpath(path) != os.path.realpath(tf.path):
        return "a new file is written in canonical form"
    if doc.alignment is not None:
        return "a new alignment needs the blobs rewritten"
    if tf.source is None or "footer" not in tf.extra:
        return "the open file's footer is unknown"
    names = {t.name for t in tf.tensors}
    if len(names) != len(tf.tensors):
        return "the file repeats a tensor name"
    for dt in doc.tensors:
        if dt.original.name not in names or dt.densify:
            return f"tensor {dt.name!r} changes its data"
        if any(c.encoding != c.original.encoding or c.reencode or c.digest not in (KEEP, _algorithm(c.original))
               for c in dt.components.values()):
            return f"tensor {dt.name!r} changes its encoding or digest"
        if dt.original.has_errors:
            return f"tensor {dt.name!r} has errors"
    return None


def _algorithm(component: Any) -> str | None:
    digest = component.digest
    return None if digest is None else str(digest).partition(":")[0]


def manifest_range(tf: TensorFile) -> tuple[int, int]:
    """(offset, length) of the manifest of the generation the reader showed (``extra["footer"]``)."""
    footer_fields = tf.extra["footer"]
    if isinstance(footer_fields, dict):
        return int(footer_fields["manifest_offset"]), int(footer_fields["manifest_length"])
    return int(footer_fields.manifest_offset), int(footer_fields.manifest_length)


def next_manifest(doc: EditableDocument) -> bytes:
    """The edited manifest: the open generation's manifest, re-read (bounded, validated by the reader),
    with the document's attributes, names and deletions; everything else (parts, shards, unknown keys)
    carried over as it is."""
    tf = doc.original
    offset, length = manifest_range(tf)
    assert tf.source is not None
    root = cbor2.loads(bytes(tf.source.view(offset, length)))
    objects: dict[Any, Any] = root["objects"]
    new_objects: dict[Any, Any] = {}
    for dt in doc.tensors:
        rules.check_name(dt.name, "tensor name")
        entry = dict(objects[dt.original.name])
        if dt.attributes != stored_attributes(dt.original):
            rules.check_attributes(dt.attributes, f"tensor {dt.name!r}", 3)
            entry.pop("attributes", None)
            if dt.attributes:
                entry["attributes"] = dict(dt.attributes)
        if dt.name in new_objects:
            raise EditRefused(f"two tensors would be called {dt.name!r}", rule="tensor names are unique",
                              tensor=dt.name)
        new_objects[dt.name] = entry
    root["objects"] = new_objects
    if doc.attributes != tf.attributes:
        rules.check_attributes(doc.attributes, "the file attributes", 1)
        root.pop("attributes", None)
        if doc.attributes:
            root["attributes"] = dict(doc.attributes)
    manifest = dumps_deterministic(root)
    if len(manifest) > rules.MAX_MANIFEST:
        raise CodecError(f"the manifest would be {len(manifest):,} bytes; zTensor v2 allows at most 1 GiB",
                         rule="v2 manifest ≤ 1 GiB (spec §3.1)")
    return manifest


def inherited_alignment(tf: TensorFile) -> int:
    """The placement the file already uses, read from its offsets (as ztensor's own append does): the largest
    power of two dividing every local blob offset and the manifest's, between 4096 and 65536."""
    common = manifest_range(tf)[0]
    for tensor in tf.tensors:
        for component in tensor.components.values():
            if component.shard is None and component.offset > 0:
                common = math.gcd(common, component.offset)
    if common <= 0:
        return rules.ALIGN_FLOOR
    power = common & -common
    return max(rules.ALIGN_FLOOR, min(rules.ALIGN_CANONICAL, power))


def append_generation(doc: EditableDocument, path: str, cancelled: Callable[[], bool] | None = None) -> int:
    """Append the edited manifest and a new footer to ``path`` (journaled); returns the new file size."""
    tf = doc.original
    assert tf.source is not None
    seen_tail = bytes(tf.source.view(tf.source.size - rules.FOOTER_LENGTH, rules.FOOTER_LENGTH))
    return append_manifest(path, next_manifest(doc), inherited_alignment(tf), (tf.source.size, seen_tail),
                           cancelled)


def append_manifest(path: str | os.PathLike[str], manifest: bytes, alignment: int,
                    expected: tuple[int, bytes] | None = None, cancelled: Callable[[], bool] | None = None) -> int:
    """Append ``manifest`` (at the next multiple of ``alignment`` past EOF, zero padding before it) and its
    footer to the file, journaled; returns the new size. ``expected`` is the (size, last 40 bytes) the caller
    read the file with: a file changed since is refused."""
    target = os.path.realpath(os.fspath(path))
    recover(target)
    fd = os.open(target, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        old_length = os.fstat(fd).st_size
        old_tail = _tail(fd, old_length)
        if expected is not None and (old_length, old_tail) != expected:
            raise EditRefused(f"{target} changed on disk since it was opened ({expected[0]:,} → {old_length:,} "
                              "bytes); open it again before saving", rule="save what was opened")
        if cancelled is not None and cancelled():
            raise Cancelled("save cancelled")
        offset = -(-old_length // alignment) * alignment
        tail = footer(offset, manifest)
        appended = bytes(offset - old_length) + manifest + tail
        journal = Journal(old_length, _footer_hash(old_tail), old_length + len(appended), _footer_hash(tail))
        _write_journal(journal_path(target), journal)
        try:
            os.lseek(fd, old_length, os.SEEK_SET)
            view = memoryview(appended)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, old_length)  # our own partial bytes, never the previous generation's
            os.fsync(fd)
            raise
        finally:
            _drop_journal(journal_path(target))
        return journal.new_length
    finally:
        os.close(fd)


def drop_stale_journal(path: str | os.PathLike[str]) -> None:
    """Forget an append journal of ``path`` after the file was replaced whole (it no longer applies)."""
    _drop_journal(journal_path(path))


def _write_journal(path: str, journal: Journal) -> None:
    data = json.dumps(asdict(journal)).encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o644)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_directory(path)
    except BaseException:
        _drop_journal(path)  # nothing was appended yet: no journal is the truth
        raise


def _drop_journal(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    _fsync_directory(path)


__all__ = ["Journal", "append_generation", "append_manifest", "drop_stale_journal", "journal_path", "next_manifest",
           "recover", "why_not_appendable"]
