"""Saving metadata edits of a zTensor v2 file as an appended generation (spec §2.5): O(manifest), not O(file).

The new manifest (the old one with the edits: attributes, renames, deletions) goes after EOF at the file's
own alignment, zero-padded, followed by a new footer; every data blob stays where it is and is referenced in
place. Nothing already in the file is moved or overwritten.

A file whose footer is not at EOF is invalid, so an interrupted append must never cost the previous
generation. Before the first byte is appended, a small journal ``.<name>.ztviewer-append`` beside the file
records the old length and a hash of the old footer, plus the length and footer hash the append will produce,
and is fsynced (with its directory), and locked while the append runs. Then the append is written and fsynced,
and the journal removed. A journal a crash left behind is reported when the file is opened and rolled back only on
request (:mod:`..interrupted_append`: ``ztviewer repair``, the window's Repair, or the next append to the file).
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import cbor2

import ztviewer.codec.writers.zt_v2_rules as rules

from ..append_journal import (
    Journal,
    being_written,
    footer_hash,
    fsync_directory,
    journal_path,
    not_a_file,
    remove_journal,
)
from ..errors import Cancelled, CodecError, EditRefused
from ..interrupted_append import RULE, interrupted_append_of, repair
from ..model import TensorFile
from ..portable import lock_for_writing
from .blobs import KEEP
from .cbor import dumps_deterministic
from .document import EditableDocument, stored_attributes
from .zt_v2 import footer


def _tail(fd: int, length: int) -> bytes:
    """The 40 bytes before ``length`` (fewer when the file is shorter)."""
    start = max(0, length - rules.FOOTER_LENGTH)
    os.lseek(fd, start, os.SEEK_SET)
    return os.read(fd, length - start)


def _make_room_for_journal(target: str) -> None:
    """Before appending: roll back an interrupted append its journal applies to (under the rules opening reports
    one by, :mod:`..interrupted_append`), and refuse when the journal's name is taken by something that is not a
    journal, or by a save still running. A stale or unusable journal is replaced by this append's own."""
    journal_file = journal_path(target)
    try:
        kind = not_a_file(journal_file)
    except FileNotFoundError:
        return
    if kind is not None:
        raise EditRefused(f"{journal_file} is {kind}, not an append journal: the append could not be journaled "
                          "against a crash; move it away and save again", rule=RULE)
    if being_written(journal_file):
        raise EditRefused("another save is appending to this file right now; save again when it ends", rule=RULE)
    repair(target)


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
    if interrupted_append_of(tf) is not None:
        return "the file ends in an interrupted append (repair it to append again)"
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
    _make_room_for_journal(target)
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
        journal = Journal(old_length, footer_hash(old_tail), old_length + len(appended), footer_hash(tail))
        held = _write_journal(journal_path(target), journal)
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
            os.close(held)
            remove_journal(journal_path(target))
        return journal.new_length
    finally:
        os.close(fd)


def drop_stale_journal(path: str | os.PathLike[str]) -> None:
    """Forget an append journal of ``path`` after the file was replaced whole (it no longer applies)."""
    remove_journal(journal_path(path))


def _write_journal(path: str, journal: Journal) -> int:
    """Write and fsync the journal; returns its descriptor, locked (:func:`being_written`) until closed."""
    data = json.dumps(asdict(journal)).encode()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    try:
        lock_for_writing(fd)
        os.write(fd, data)
        os.fsync(fd)
        fsync_directory(path)
    except BaseException:
        os.close(fd)
        remove_journal(path)  # nothing was appended yet: no journal is the truth
        raise
    return fd


__all__ = ["Journal", "append_generation", "append_manifest", "drop_stale_journal", "journal_path", "next_manifest",
           "why_not_appendable"]
