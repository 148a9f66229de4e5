"""Saving a document safely: write a new file beside the target, fsync, rename over the target.

The new file is written to ``.<name>.ztviewer-tmp-<random>`` in the target's directory, flushed and
fsynced, then ``os.replace``d over the target and the directory fsynced. On any failure or cancel the
temporary file is removed and the target is untouched. A process killed outright (SIGKILL, power loss)
can leave such a temporary file behind, never a partial target; :func:`stale_temporaries` finds them.

Saving over the file that is open works: the source stays mapped on the old inode until it is closed. Where the
system refuses to replace a file that is open or mapped (Windows), the document's own sources of the target are
released first (:meth:`.Source.release`; they open the path again on their next access).
"""
from __future__ import annotations

import errno
import functools
import glob
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import ztviewer.codec.portable as portable

from .edit import Command, EditableDocument
from .errors import DamagedTensor, EditRefused
from .gc_pause import building_many
from .model import TensorFile
from .registry import open_file
from .writers import build_plan, write_plan
from .writers.output import CancelCheck, Output, ProgressCallback
from .writers.plan import find_damaged
from .writers.zt_v2_append import (
    append_generation,
    drop_stale_journal,
    why_not_appendable,
)

TMP_MARKER = ".ztviewer-tmp-"
#: replaced files from this size on are unlinked in the background (freeing their blocks takes time). Measured
#: (2 GiB .zt save-as over an existing file, ext4 with discard, 3 rounds of best-of-3 paired with cp + fsync to a
#: fresh target, no waiting for the background unlink between saves): aside 1.05-1.21x cp, plain ``os.replace``
#: 1.29-1.36x at load ~3. Under load 4.5-7 an earlier run found the opposite (the next large write stalled behind
#: the background discard); the aside is kept because it wins on a machine doing only the save, as a user's is.
ASIDE_FROM = 64 << 20


@dataclass(frozen=True)
class SaveResult:
    """Where the file went, its size and format."""

    path: str
    size: int
    format: str
    cleaned: tuple[str, ...] = ()  # stale temporaries of killed saves removed from the folder first
    appended: int | None = None    # zTensor v2 saved in place: the bytes of the appended generation
    generation: int | None = None  # and its number (the first generation is 1; None when not all were found)
    warnings: tuple[str, ...] = ()  # what the output could not hold (unknown manifest keys of another format)
    skipped: tuple[tuple[str, str], ...] = ()  # damaged tensors left out (skip_damaged): (name, why)


def temporary_name(target: str) -> str:
    directory, name = os.path.split(os.path.abspath(target))
    return os.path.join(directory, f".{name}{TMP_MARKER}{secrets.token_hex(4)}")


def stale_temporaries(target: str) -> list[str]:
    """Temporary files a killed save of ``target`` left behind (safe to delete when no save is running)."""
    directory, name = os.path.split(os.path.abspath(target))
    return sorted(glob.glob(os.path.join(glob.escape(directory), f".{glob.escape(name)}{TMP_MARKER}*")))


def clean_stale_temporaries(directory: str) -> tuple[str, ...]:
    """Remove the temporary files killed saves (SIGKILL, power loss) left in ``directory``: ours only
    (``.<name>.ztviewer-tmp-<hex>`` regular files), and only those no running save holds (every save keeps its
    temporary locked; where the system has no such lock, an open file cannot be deleted). Returns their paths."""
    removed = []
    for path in sorted(glob.glob(os.path.join(glob.escape(directory or "."), f".*{TMP_MARKER}*"))):
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode) or portable.held_by_nobody(path) is False:
                continue
            os.unlink(path)
        except OSError:  # gone meanwhile, or open elsewhere (Windows)
            continue
        removed.append(path)
    return tuple(removed)


def check_writable(target: str) -> None:
    """Refuse to replace an existing file the user could not write (a read-only file stays read-only), and to
    write into a folder that does not exist (named: not the temporary file that could not be made in it)."""
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "no such folder to write into", folder)
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise EditRefused(f"{target} is read-only; ztviewer does not replace a file you could not write "
                          "(make it writable, or save to another path)", rule="replace only writable files")


def atomic_write(path: str | os.PathLike[str], produce: Callable[[Output], None],
                 progress: ProgressCallback | None = None, cancelled: CancelCheck | None = None,
                 release: Callable[[], None] | None = None) -> int:
    """Run ``produce(out)`` into a temporary file, then atomically replace ``path`` with it.

    Returns the size written. Symlinks are followed: the file they point to is replaced. The new file keeps
    the permission bits of the file it replaces (new files get the usual 0o666 minus umask). ``release``
    closes this process's file and map of ``path`` when the system will not replace it while they are open.
    """
    target = os.path.realpath(os.fspath(path))
    check_writable(target)
    tmp = temporary_name(target)
    mode = 0o666
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        pass
    aside: str | None = None
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | portable.O_CLOEXEC | portable.O_BINARY, mode)
    portable.lock_for_writing(fd)
    try:
        try:
            out = Output(fd, progress, cancelled)
            produce(out)
            out.check_cancel()
            out.flush()
            os.fsync(fd)
            size = out.pos
        finally:
            os.close(fd)
        aside = _keep_aside(target)
        portable.replace(tmp, target, release)
    except BaseException:
        for leftover in (tmp, aside):
            if leftover is not None:
                try:
                    os.unlink(leftover)
                except FileNotFoundError:
                    pass
        raise
    _fsync_directory(os.path.dirname(target))
    if aside is not None:
        _unlink_in_background(aside)
    return size


def _keep_aside(target: str) -> str | None:
    """A second name (hard link) for the file about to be replaced, or ``None`` (no such file, or the file system
    has no hard links). Replacing a large file frees its blocks inside ``os.replace`` (about 1 s per 2 GiB on
    ext4); with the old file still linked elsewhere the replace only swaps names, and the blocks are freed when
    the second name is unlinked, in the background. The target path always names a whole file."""
    if not os.path.isfile(target) or os.path.getsize(target) < ASIDE_FROM:
        return None
    aside = temporary_name(target)
    try:
        os.link(target, aside)
    except (OSError, NotImplementedError, AttributeError):
        return None
    return aside


def _unlink_in_background(path: str) -> None:
    """Unlink ``path`` on a thread of its own (the interpreter waits for it at exit; a process killed first leaves
    a temporary that the next save to the folder removes: :func:`clean_stale_temporaries`)."""
    def unlink() -> None:
        try:
            os.unlink(path)
        except OSError:
            pass

    threading.Thread(target=unlink, name="ztviewer-unlink-replaced", daemon=False).start()


def _fsync_directory(directory: str) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # Windows opens no directories (and needs no directory fsync)
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def save(doc: EditableDocument, path: str | os.PathLike[str] | None = None, *,
         progress: ProgressCallback | None = None, cancelled: CancelCheck | None = None,
         compact: bool = False, skip_damaged: bool = False) -> SaveResult:
    """Write the document (its edits applied) in its target format to ``path`` (default: in place).

    The whole document is checked against the target first (:class:`UnsupportedConversion` names what
    cannot be held); unchanged blobs are copied byte for byte with their digests; progress is reported as
    ``progress(done, total)`` and ``cancelled()`` is polled between chunks (:class:`Cancelled`).

    A damaged tensor (errors found when the file was read, or while its bytes are read for the write: a recorded
    digest that does not match, a bool byte other than 0 / 1, a part that does not decode) refuses the save with
    :class:`DamagedTensor` naming tensor, component, offset and rule; nothing is written. With ``skip_damaged``
    the damaged tensors are left out instead (found by one checked read of every tensor once the first shows up,
    then the file is written again) and listed in :attr:`SaveResult.skipped`.

    Metadata edits of a zTensor v2 file saved over itself become an appended generation (only the new
    manifest is written, journaled against crashes); ``compact=True`` rewrites the whole file instead (canonical
    64 KiB placement, earlier generations gone, every part keeping its encoding and digest).
    """
    target = os.fspath(path) if path is not None else doc.original.path
    if not target or target.startswith("<"):
        raise EditRefused("the document has no file name; give a path to save to", rule="save target")
    check_writable(os.path.realpath(target))
    if not compact and why_not_appendable(doc, target) is None:
        before = doc.original.size
        size = append_generation(doc, target, cancelled)
        if progress is not None:
            progress(size, size)
        extra = doc.original.extra
        number = None if extra.get("_generations_stopped") else len(extra.get("_generations") or ()) + 2
        return SaveResult(os.path.realpath(target), size, doc.target.key, appended=size - before, generation=number)
    cleaned: tuple[str, ...] | None = None
    skip: dict[int, DamagedTensor] = {}
    while True:
        try:
            with building_many():  # the plan, the written records and the manifest live as long as the save
                plan = build_plan(doc, skip)
                if cleaned is None:
                    cleaned = clean_stale_temporaries(os.path.dirname(os.path.realpath(target)))
                size = atomic_write(target, functools.partial(write_plan, plan), progress, cancelled,
                                    release=lambda: release_sources_of(doc.original, target))
            break
        except DamagedTensor:
            found = find_damaged(doc, cancelled) if skip_damaged else {}
            if not found.keys() - skip.keys():
                raise
            skip.update(found)
    drop_stale_journal(target)
    skipped = tuple((doc.tensors[index].name, str(damage)) for index, damage in sorted(skip.items()))
    return SaveResult(os.path.realpath(target), size, doc.target.key, cleaned or (), warnings=tuple(plan.warnings),
                      skipped=skipped)


def release_sources_of(tensor_file: TensorFile, target: str) -> None:
    """Release every source of ``tensor_file`` (its own, its shards') that reads the file at ``target``."""
    real = os.path.realpath(target)
    sources = [tensor_file.source, *(t.source for t in tensor_file.tensors)]
    seen: set[int] = set()
    for source in sources:
        if source is None or id(source) in seen:
            continue
        seen.add(id(source))
        if not source.path.startswith("<") and os.path.realpath(source.path) == real:
            source.release()


def edit_file(path: str | os.PathLike[str], commands: Iterable[Command], out_path: str | os.PathLike[str] | None = None,
              *, progress: ProgressCallback | None = None, cancelled: CancelCheck | None = None,
              compact: bool = False, skip_damaged: bool = False) -> SaveResult:
    """Open ``path``, apply ``commands`` in order, and save to ``out_path`` (default: in place; a zTensor v2
    file gets an appended generation unless ``compact``).

    A refused command raises before anything is written.
    """
    tf = open_file(path)
    try:
        doc = EditableDocument(tf)
        for command in commands:
            command.apply(doc)
        return save(doc, out_path, progress=progress, cancelled=cancelled, compact=compact,
                    skip_damaged=skip_damaged)
    finally:
        tf.close()
